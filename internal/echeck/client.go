package echeck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/redact"
)

// Operation names. They name the Op of an Error and the endpoint passed to
// Options.Observe; they never contain an identifier, so they are safe as
// metric labels.
const (
	OpCheckCreate             = "check.create"
	OpCheckList               = "check.list"
	OpCheckGet                = "check.get"
	OpCheckBankInfo           = "check.bankinfo"
	OpCheckEdit               = "check.edit"
	OpCheckDelete             = "check.delete"
	OpTokenize                = "account.tokenization"
	OpPaymentLinkCreate       = "paymentlink.create"
	OpPaymentLinkList         = "paymentlink.list"
	OpPaymentLinkChangeStatus = "paymentlink.changestatus"
)

// DefaultTimeout bounds one request when Options.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// maxBody caps how much of a response is read, against a runaway server.
const maxBody = 10 << 20

// Options configures a Client. BaseURL and Key are required.
type Options struct {
	// BaseURL is the service's address, such as https://sandbox.example;
	// a path prefix is kept. It must be https, except that http is allowed
	// for a loopback host (127.0.0.0/8, ::1, localhost), where the sandbox
	// emulator and tests listen. It may not carry user info, a query or a
	// fragment, so that no secret can ride in a URL that net/http quotes
	// in its errors.
	BaseURL string
	// Key is the API key, sent as "Authorization: Bearer <Key>" on every
	// request and nowhere else. It never appears in an error or a log line.
	Key string
	// HTTPClient sends the requests; nil means a client on
	// http.DefaultTransport. The Client works on a copy whose redirects are
	// never followed: a redirect would resend a payment elsewhere.
	HTTPClient *http.Client
	// Timeout bounds one request, from sending to the end of the response
	// body, but not the wait for the Limiter. Zero means DefaultTimeout.
	Timeout time.Duration
	// Limiter is the one token bucket every call of batchd goes through.
	// Nil means unlimited.
	Limiter Limiter
	// Observe, when set, is called once for every request the Limiter let
	// go, with the operation name (one of the Op constants), the HTTP
	// status (0 when no response arrived) and the time from sending to the
	// end of the body. A call refused before sending (invalid input, or
	// the Limiter's wait cut short) is not observed.
	Observe func(endpoint string, status int, d time.Duration)
	// Logger receives one debug line per request; nil discards.
	Logger *slog.Logger
}

// Limiter is the one token bucket every call batchd makes goes through.
// internal/throttle.Limiter implements it.
type Limiter interface {
	// Wait blocks until a request may be sent, or returns ctx's error.
	Wait(ctx context.Context) error
	// Throttled is called on every 429, so that an AIMD limiter can step
	// down.
	Throttled()
}

// pauser is an optional Limiter method: when the Limiter has it, a 429 or
// 503 with a Retry-After holds every caller for that long, not just the
// one that saw it.
type pauser interface {
	Pause(d time.Duration)
}

// Client speaks HTTP to the eCheck API. It is the only code in batchd that
// does. Each method sends exactly one request (after waiting on the
// Limiter) and never retries: the retry policy belongs to the caller,
// which decides with ClassOf. A Client is safe for concurrent use.
type Client struct {
	base    string // scheme://host[/prefix], no trailing slash
	key     string
	http    *http.Client
	timeout time.Duration
	limiter Limiter
	observe func(string, int, time.Duration)
	log     *slog.Logger
	now     func() time.Time // for Retry-After dates; replaced in tests
	maxBody int64            // response body cap; lowered in tests
}

// New checks opts and returns a Client. It fails on a missing or non-https
// BaseURL (http only to loopback), a missing key, or a key with
// characters not allowed in an HTTP header.
func New(opts Options) (*Client, error) {
	base, err := parseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("echeck: base URL: %w", err)
	}
	if err := checkKey(opts.Key); err != nil {
		return nil, fmt.Errorf("echeck: API key: %w", err)
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("echeck: negative timeout %s", opts.Timeout)
	}
	c := &Client{
		base:    base,
		key:     opts.Key,
		timeout: opts.Timeout,
		limiter: opts.Limiter,
		observe: opts.Observe,
		log:     opts.Logger,
		now:     time.Now,
		maxBody: maxBody,
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	hc := http.Client{}
	if opts.HTTPClient != nil {
		hc = *opts.HTTPClient
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.http = &hc
	if c.limiter == nil {
		c.limiter = unlimited{}
	}
	if c.observe == nil {
		c.observe = func(string, int, time.Duration) {}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

func parseBaseURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", errors.New("not a URL")
	}
	switch {
	case u.Host == "" || u.Hostname() == "":
		return "", errors.New("no host")
	case u.User != nil:
		return "", errors.New("user info is not allowed")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", errors.New("a query or fragment is not allowed")
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	case u.Scheme == "http":
		return "", fmt.Errorf("http is allowed only to a loopback host, not %q; the service requires https", u.Hostname())
	default:
		return "", fmt.Errorf("scheme %q is not https", u.Scheme)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkKey refuses a key that net/http would reject as a header value, or
// that would be split by it, before it can reach an error message.
func checkKey(key string) error {
	if key == "" {
		return errors.New("empty")
	}
	for i := 0; i < len(key); i++ {
		if key[i] <= ' ' || key[i] >= 0x7f {
			return errors.New("contains a space, control or non-ASCII character")
		}
	}
	return nil
}

type unlimited struct{}

func (unlimited) Wait(ctx context.Context) error { return ctx.Err() }
func (unlimited) Throttled()                     {}

// call describes one request.
type call struct {
	op     string
	method string
	path   string     // below the base URL, identifiers already escaped
	query  url.Values // nil for none
	body   any        // JSON-encoded; nil sends no body
	// create marks a request that makes an object; an answer lost after
	// it was sent makes the error Ambiguous rather than Retryable.
	create bool
	// result names the member holding the created object, so that a 2xx
	// that says "error" yet carries the object is Ambiguous, not Permanent.
	result string
	// secrets are request values to mask in error text should the service
	// echo them (account numbers, account tokens).
	secrets []string
}

// answer is a 2xx response whose body did not flag an error.
type answer struct {
	status int
	m      object // the top-level JSON object; empty for an empty body
}

// do sends one request and returns its answer. Every error is an *Error.
func (c *Client) do(ctx context.Context, k call) (answer, error) {
	if err := c.limiter.Wait(ctx); err != nil {
		return answer{}, c.fail(k, 0, Retryable, "not sent: waiting for the rate limiter", err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, sent, err := c.newRequest(ctx, k)
	if err != nil {
		return answer{}, c.fail(k, 0, Permanent, "building the request", err)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		c.done(ctx, k, 0, time.Since(start))
		return answer{}, c.lost(k, sent.mayHaveBeenSent(), 0, err)
	}
	defer resp.Body.Close()
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	c.done(ctx, k, resp.StatusCode, time.Since(start))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return answer{}, c.statusError(k, resp, body)
	}
	if readErr != nil {
		return answer{}, c.lost(k, true, resp.StatusCode, readErr)
	}
	if int64(len(body)) > c.maxBody {
		return answer{}, c.badAnswer(k, resp.StatusCode, fmt.Errorf("response body exceeds %d bytes", c.maxBody))
	}
	if len(bytes.TrimSpace(body)) == 0 && !k.create {
		return answer{resp.StatusCode, object{}}, nil // a bare 200 or 204 to a delete is success
	}
	m, err := decodeObject(body)
	if err != nil {
		return answer{}, c.badAnswer(k, resp.StatusCode, err)
	}
	if errorFlagged(m) {
		msg, code := apiMessage([]byte(c.scrub(k, string(body))), resp.StatusCode)
		cls := Permanent
		if _, ok := objectOf(m[k.result]); k.create && ok {
			cls = Ambiguous // says error, yet shows the object: do not trust either
		}
		e := c.fail(k, resp.StatusCode, cls, msg, nil)
		e.Code = c.scrub(k, code)
		return answer{}, e
	}
	return answer{resp.StatusCode, m}, nil
}

func (c *Client) newRequest(ctx context.Context, k call) (*http.Request, *sendTracker, error) {
	u := c.base + k.path
	if len(k.query) > 0 {
		u += "?" + k.query.Encode()
	}
	t := &sendTracker{}
	ctx = withSendTrace(ctx, t)
	req, err := http.NewRequestWithContext(ctx, k.method, u, http.NoBody)
	if err != nil {
		return nil, nil, err
	}
	if k.body != nil {
		b, err := json.Marshal(k.body)
		if err != nil {
			return nil, nil, err
		}
		t.attach(req, b)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "batchd-echeck/1")
	return req, t, nil
}

// done reports one finished request to the metrics hook and the log.
func (c *Client) done(ctx context.Context, k call, status int, d time.Duration) {
	c.observe(k.op, status, d)
	c.log.LogAttrs(ctx, slog.LevelDebug, "echeck request",
		slog.String("op", k.op), slog.Int("status", status), slog.Duration("duration", d))
}

// lost builds the error for a request whose answer did not arrive whole:
// no response, or a body cut off. It is Ambiguous only for a create that
// may have reached the service.
func (c *Client) lost(k call, mayHaveBeenSent bool, status int, err error) *Error {
	switch {
	case k.create && mayHaveBeenSent:
		return c.fail(k, status, Ambiguous, "answer lost after the request was sent", err)
	case mayHaveBeenSent:
		return c.fail(k, status, Retryable, "answer lost after the request was sent", err)
	}
	return c.fail(k, status, Retryable, "request not sent", err)
}

// badAnswer builds the error for a 2xx answer that cannot be read. For a
// create the object may well exist, so it is Ambiguous; otherwise the
// answer is not in a shape the client understands, and resending the
// same request will not change that.
func (c *Client) badAnswer(k call, status int, err error) *Error {
	cls := Permanent
	if k.create {
		cls = Ambiguous
	}
	return c.fail(k, status, cls, "unreadable answer", err)
}

func (c *Client) statusError(k call, resp *http.Response, body []byte) *Error {
	if int64(len(body)) > c.maxBody {
		body = body[:c.maxBody]
	}
	// Scrub before apiMessage cuts an excerpt, which could cut a secret
	// in two and leave a half that no longer matches.
	msg, code := apiMessage([]byte(c.scrub(k, string(body))), resp.StatusCode)
	e := c.fail(k, resp.StatusCode, statusClass(k.create, resp.StatusCode), msg, nil)
	e.Code = c.scrub(k, code)
	if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), c.now()); ok {
		e.RetryAfter = d
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		c.limiter.Throttled()
	}
	if p, ok := c.limiter.(pauser); ok && e.RetryAfter > 0 &&
		(resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		p.Pause(e.RetryAfter)
	}
	return e
}

// fail builds an *Error with every secret masked out of its text.
func (c *Client) fail(k call, status int, cls Class, msg string, err error) *Error {
	e := &Error{Op: k.op, Status: status, Class: cls, Message: c.scrub(k, msg)}
	if err != nil {
		e.Err = err
		if s := err.Error(); c.scrub(k, s) != s {
			e.Err = &scrubbed{msg: c.scrub(k, s), err: err}
		}
	}
	return e
}

// scrub masks the key and the call's secrets in s.
func (c *Client) scrub(k call, s string) string {
	s = strings.ReplaceAll(s, c.key, "[api key]")
	for _, v := range k.secrets {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, redact.Account(v))
		}
	}
	return s
}

// scrubbed keeps an underlying error reachable with errors.Is/As while
// replacing its text.
type scrubbed struct {
	msg string
	err error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.err }
