package ach

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
// metric labels, and their "ach." prefix keeps them apart from the eCheck
// client's operations in the same metric.
const (
	OpUserCreate            = "ach.user.create"                        // POST /user
	OpUserGet               = "ach.user.get"                           // GET /user/:{id}
	OpUserList              = "ach.user.list"                          // GET /user
	OpSourceCreate          = "ach.fundingsource.create"               // POST /funding-source
	OpSourceCreateOnDemand  = "ach.fundingsource.ondemand"             // POST /on-demand/funding-source
	OpSourceCreateProcessor = "ach.fundingsource.processor"            // POST /funding-source/processor/{provider}
	OpSourceList            = "ach.fundingsource.list"                 // GET /funding-source/user/:{id}
	OpSourceGet             = "ach.fundingsource.get"                  // GET /funding-source/:{id}
	OpSourceRemove          = "ach.fundingsource.remove"               // POST /funding-source/remove
	OpVerificationInitiate  = "ach.fundingsource.initiateverification" // POST /funding-source/initiate/verification
	OpVerify                = "ach.fundingsource.verify"               // POST /funding-source/verify
	OpAccountAvailable      = "ach.accounts.available"                 // GET /accounts
	OpAccountDelete         = "ach.accounts.delete"                    // POST /accounts/delete
	OpDebit                 = "ach.debit"                              // POST /ach-debit
	OpCredit                = "ach.credit"                             // POST /check/send
	OpWebhookRegister       = "ach.webhook.register"                   // POST /webhooks
	OpWebhookGet            = "ach.webhook.get"                        // GET /webhooks
)

// Ops lists every Op constant, so that a metrics registry can pre-create
// its label values.
var Ops = []string{
	OpUserCreate, OpUserGet, OpUserList, OpSourceCreate, OpSourceCreateOnDemand,
	OpSourceCreateProcessor, OpSourceList, OpSourceGet, OpSourceRemove,
	OpVerificationInitiate, OpVerify, OpAccountAvailable, OpAccountDelete,
	OpDebit, OpCredit, OpWebhookRegister, OpWebhookGet,
}

// PathPrefix is where the ACH API lives below the service's base URL
// (spec 9), so that one BaseURL serves both the eCheck and the ACH client.
const PathPrefix = "/ach/v2"

// DefaultTimeout bounds one request when Options.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// maxBody caps how much of a response is read, against a runaway server.
const maxBody = 4 << 20

// Options configures a Client. BaseURL and Key are required. They are the
// eCheck client's options, so that batchd configures both from one place.
type Options struct {
	// BaseURL is the service's address, such as https://sandbox.example;
	// the client adds PathPrefix, and a path prefix of BaseURL is kept. It
	// must be https, except that http is allowed for a loopback host
	// (127.0.0.0/8, ::1, localhost), where the sandbox emulator and tests
	// listen. It may not carry user info, a query or a fragment, so that
	// no secret can ride in a URL that net/http quotes in its errors.
	BaseURL string
	// Key is the API key, sent as "Authorization: Bearer <Key>" on every
	// request and nowhere else. It never appears in an error or a log line.
	Key string
	// HTTPClient sends the requests; nil means a client on
	// http.DefaultTransport. The Client works on a copy whose redirects are
	// never followed: a redirect would resend a debit elsewhere.
	HTTPClient *http.Client
	// Timeout bounds one request, from sending to the end of the response
	// body, but not the wait for the Limiter. Zero means DefaultTimeout.
	Timeout time.Duration
	// Limiter is the one token bucket every call of batchd goes through:
	// pass the very object the eCheck client has. Nil means unlimited.
	Limiter Limiter
	// Observe, when set, is called once for every request the Limiter let
	// go, with the operation name (one of the Op constants), the HTTP
	// status (0 when no response arrived) and the time from sending to the
	// end of the body. A call refused before sending is not observed.
	Observe func(endpoint string, status int, d time.Duration)
	// Logger receives one debug line per request; nil discards.
	Logger *slog.Logger
}

// Limiter is the token bucket every call batchd makes goes through. It has
// the method set of echeck.Limiter, so one *throttle.Limiter (or any
// echeck.Limiter value) serves both clients and a 429 from either API
// slows down both.
type Limiter interface {
	// Wait blocks until a request may be sent, or returns ctx's error.
	Wait(ctx context.Context) error
	// Throttled is called on every 429, so that an AIMD limiter can step
	// down.
	Throttled()
}

// pauser is an optional Limiter method: when the Limiter has it, a 429 or
// 503 with a Retry-After holds every caller for that long.
type pauser interface {
	Pause(d time.Duration)
}

// Client speaks HTTP to the ACH API. Each method sends exactly one request
// (after waiting on the Limiter) and never retries: the retry policy
// belongs to the caller, which decides with ClassOf and errors.Is. A
// Client is safe for concurrent use.
type Client struct {
	base    string // scheme://host[/prefix]/ach/v2, no trailing slash
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
// BaseURL (http only to loopback), a missing key, or a key with characters
// not allowed in an HTTP header. Its errors never show the key.
func New(opts Options) (*Client, error) {
	base, err := parseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("ach: base URL: %w", err)
	}
	if err := checkKey(opts.Key); err != nil {
		return nil, fmt.Errorf("ach: API key: %w", err)
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("ach: negative timeout %s", opts.Timeout)
	}
	c := &Client{
		base:    base + PathPrefix,
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
	path   string     // below PathPrefix, identifiers already escaped
	query  url.Values // nil for none
	body   any        // JSON-encoded; nil sends no body
	// effect marks a request whose effect must not happen twice (a create,
	// a debit or credit, a verification step): an answer lost after it was
	// sent makes the error Ambiguous rather than Retryable.
	effect bool
	// result names the member holding the created object, so that a 2xx
	// that says "error" yet carries the object is Ambiguous.
	result string
	// accounts are account numbers of the request, masked with
	// redact.Account wherever they would show; tokens are processor
	// tokens, which never show at all.
	accounts []string
	tokens   []string
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
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = c.scrub(k, ue.URL) // the query of /accounts holds an account number
		}
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
	if len(bytes.TrimSpace(body)) == 0 && !k.effect {
		return answer{resp.StatusCode, object{}}, nil // a bare 200 or 204 to a remove is success
	}
	m, err := decodeObject(body)
	if err != nil {
		return answer{}, c.badAnswer(k, resp.StatusCode, err)
	}
	if errorFlagged(m) {
		cls := Permanent
		if _, ok := objectOf(m[k.result]); k.effect && k.result != "" && ok {
			cls = Ambiguous // says error, yet shows the object: do not trust either
		}
		return answer{}, c.serviceError(k, resp.StatusCode, cls, body)
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
	// Spec 4.2 lists both headers for every ACH request, body or not.
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "batchd-ach/1")
	return req, t, nil
}

// done reports one finished request to the metrics hook and the log. The
// log line holds no path, so no identifier or account number.
func (c *Client) done(ctx context.Context, k call, status int, d time.Duration) {
	c.observe(k.op, status, d)
	c.log.LogAttrs(ctx, slog.LevelDebug, "ach request",
		slog.String("op", k.op), slog.Int("status", status), slog.Duration("duration", d))
}

// lost builds the error for a request whose answer did not arrive whole.
// It is Ambiguous only for a call with an effect that may have reached the
// service.
func (c *Client) lost(k call, mayHaveBeenSent bool, status int, err error) *Error {
	switch {
	case k.effect && mayHaveBeenSent:
		return c.fail(k, status, Ambiguous, "answer lost after the request was sent", err)
	case mayHaveBeenSent:
		return c.fail(k, status, Retryable, "answer lost after the request was sent", err)
	}
	return c.fail(k, status, Retryable, "request not sent", err)
}

// badAnswer builds the error for a 2xx answer that cannot be read. For a
// call with an effect the effect may well have happened, so it is
// Ambiguous; otherwise resending will not change the answer's shape.
func (c *Client) badAnswer(k call, status int, err error) *Error {
	cls := Permanent
	if k.effect {
		cls = Ambiguous
	}
	return c.fail(k, status, cls, "unreadable answer", err)
}

// refuse builds the error for input refused before sending.
func (c *Client) refuse(k call, err error) *Error {
	return c.fail(k, 0, Permanent, "not sent", err)
}

func (c *Client) statusError(k call, resp *http.Response, body []byte) *Error {
	if int64(len(body)) > c.maxBody {
		body = body[:c.maxBody]
	}
	e := c.serviceError(k, resp.StatusCode, statusClass(k.effect, resp.StatusCode), body)
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

// serviceError builds the error for an answer in which the service said
// no: its message and code, scrubbed before an excerpt is cut (a cut could
// split a secret and leave a half that no longer matches), and the
// conditions kindsOf finds in them.
func (c *Client) serviceError(k call, status int, cls Class, body []byte) *Error {
	msg, code, m := apiMessage([]byte(c.scrub(k, string(body))), status)
	e := c.fail(k, status, cls, msg, nil)
	e.Code = c.scrub(k, code)
	kindStatus := status
	if status >= 200 && status <= 299 {
		kindStatus = 0
	}
	e.kinds = kindsOf(kindStatus, e.Code, e.Message)
	if m != nil {
		f := fields{m: m}
		e.UserID = f.str("user_id", "customer_id")
		if e.UserID == "" {
			if u := nested(m, "user", "customer"); u != nil {
				e.UserID = (&fields{m: u}).str("user_id", "customer_id", "id")
			}
		}
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

// scrub removes the key and the call's processor tokens from s and masks
// its account numbers.
func (c *Client) scrub(k call, s string) string {
	for _, t := range k.tokens {
		if t != "" {
			s = strings.ReplaceAll(s, t, "[processor token]")
		}
	}
	s = strings.ReplaceAll(s, c.key, "[api key]")
	for _, v := range k.accounts {
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

// validID accepts the identifiers the service issues (UUIDs, numbers) and
// anything of the same alphabet up to 128 characters, and refuses
// whatever could change a path, such as "/" or "..".
func validID(what, id string) error {
	if id == "" || len(id) > 128 {
		return fmt.Errorf("%s %q: want 1 to 128 characters", what, excerpt(id))
	}
	for i := 0; i < len(id); i++ {
		ch := id[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_') {
			return fmt.Errorf("%s %q: only letters, digits, '-' and '_' are allowed", what, excerpt(id))
		}
	}
	return nil
}

// isDigits reports a non-empty string of ASCII digits.
func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
