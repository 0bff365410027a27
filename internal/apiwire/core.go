// Package apiwire is the HTTP plumbing both API clients share
// (internal/echeck for the eCheck API, internal/ach for the ACH API), so
// that a rule about sending, classifying or decoding lives in one place.
//
// A Core checks the options both clients take (an https base URL, or http
// to loopback; a key fit for a header), and sends one request per Do:
// after waiting on the shared Limiter, never retried, redirects never
// followed, bounded by a timeout, observed and logged once, and with a
// tracker that tells whether a lost request may have reached the service.
// Do answers with the decoded 2xx object, or with an *Error, the one
// error type of both clients: a Class (Retryable, Ambiguous, Permanent,
// Fatal), the service's message and code, a Retry-After, the conditions
// the client reads in a refusal, and every text scrubbed of the key and of
// the call's secrets. Domain files an *Error under the domain's failures
// (internal/payment) by one table, for the clients' domain adapters.
//
// The lenient rules (Text, Integer, Bool, Cents) read answers as public
// clients show them: numbers as strings, booleans as 0/1 or "1", PHP's []
// for an empty object. The lenient types (Val, Obj, List) apply them to
// the members of a wire struct decoded with Unmarshal
// (go-json-experiment/json, encoding/json/v2 outside the standard
// library); Field applies them to a member of a decoded Object.
//
// What differs between the two APIs is a parameter: the path prefix, the
// response cap, the client's name in its texts, how a refusal's message
// is found (Wire.Message), how a 2xx answer says it failed
// (Wire.Flagged), and which conditions a refusal names (Wire.Conditions).
package apiwire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultTimeout bounds one request when Options.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Limiter is the one token bucket every call batchd makes goes through;
// internal/throttle.Limiter implements it. One value serves both clients,
// so that a 429 from either API slows down both.
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

// Options configures a client of either API (echeck.New, ach.New): they
// take the same options, so that batchd configures both from one place.
// BaseURL and Key are required.
type Options struct {
	// BaseURL is the service's address, such as https://sandbox.example;
	// a path prefix is kept (and the ACH client adds its own below it). It
	// must be https, except that http is allowed for a loopback host
	// (127.0.0.0/8, ::1, localhost), where the sandbox emulator and tests
	// listen. It may not carry user info, a query or a fragment, so that
	// no secret can ride in a URL that net/http quotes in its errors.
	BaseURL string
	// Key is the API key, sent as "Authorization: Bearer <Key>" on every
	// request and nowhere else. It never appears in an error or a log line.
	Key string
	// HTTPClient sends the requests; nil means a client on
	// http.DefaultTransport. The client works on a copy whose redirects are
	// never followed: a redirect would resend a payment elsewhere.
	HTTPClient *http.Client
	// Timeout bounds one request, from sending to the end of the response
	// body, but not the wait for the Limiter. Zero means DefaultTimeout.
	Timeout time.Duration
	// Limiter is the one token bucket every call of batchd goes through:
	// pass both clients the very same object. Nil means unlimited.
	Limiter Limiter
	// Observe, when set, is called once for every request the Limiter let
	// go, with the operation name (one of the clients' Op constants), the
	// HTTP status (0 when no response arrived) and the time from sending
	// to the end of the body. A call refused before sending (invalid
	// input, or the Limiter's wait cut short) is not observed.
	Observe func(endpoint string, status int, d time.Duration)
	// Logger receives one debug line per request; nil discards.
	Logger *slog.Logger
}

// Wire is what sets one API apart from the other: the client that speaks
// it fills it in, the caller never does.
type Wire struct {
	// Name is the client's name: it starts New's errors ("echeck: ..."),
	// every Error's text, names the debug log line ("echeck request") and
	// the User-Agent ("batchd-echeck/1").
	Name       string
	PathPrefix string // added below BaseURL's own path, such as "/ach/v2"
	// MaxBody caps how much of a response is read, against a runaway
	// server.
	MaxBody int64
	// Message reads a refusal's message and code from its body (already
	// scrubbed) and status; m is the body's object, nil when it is not one.
	Message func(body []byte, status int) (msg, code string, m Object)
	// Flagged reports whether a 2xx answer says it failed.
	Flagged func(m Object) bool
	// Conditions, when set, names what a refusal says beyond its class,
	// from its status (0 for a 2xx that flagged an error), code and
	// message: conds are the client's own sentinels, which an Error always
	// is; outcomes are the domain's, which it is only once filed under the
	// domain's failures (Domain).
	Conditions func(status int, code, msg string) (conds, outcomes []error)
}

// Core sends the requests of one client. It is safe for concurrent use.
type Core struct {
	base    string // scheme://host[/prefix][PathPrefix], no trailing slash
	key     string
	name    string
	http    *http.Client
	timeout time.Duration
	limiter Limiter
	observe func(string, int, time.Duration)
	log     *slog.Logger
	message func([]byte, int) (string, string, Object)
	flagged func(Object) bool
	conds   func(int, string, string) ([]error, []error)

	// Now reads the clock for Retry-After dates; tests replace it.
	Now func() time.Time
	// MaxBody is Wire.MaxBody; tests lower it.
	MaxBody int64
}

// New checks opts and returns the Core of the API w describes. It fails
// on a missing or non-https BaseURL (http only to loopback), a missing
// key, a key with characters not allowed in an HTTP header, or a negative
// timeout. Its errors never show the key.
func New(w Wire, opts Options) (*Core, error) {
	base, err := parseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("%s: base URL: %w", w.Name, err)
	}
	if err := checkKey(opts.Key); err != nil {
		return nil, fmt.Errorf("%s: API key: %w", w.Name, err)
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("%s: negative timeout %s", w.Name, opts.Timeout)
	}
	c := &Core{
		base:    base + w.PathPrefix,
		key:     opts.Key,
		name:    w.Name,
		timeout: opts.Timeout,
		limiter: opts.Limiter,
		observe: opts.Observe,
		log:     opts.Logger,
		message: w.Message,
		flagged: w.Flagged,
		conds:   w.Conditions,
		Now:     time.Now,
		MaxBody: w.MaxBody,
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	hc := http.Client{}
	if opts.HTTPClient != nil {
		hc = *opts.HTTPClient
	}
	// A redirect would resend a payment elsewhere.
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

// Open is New for a client made of a Core and its endpoints: wrap makes
// the client of the new Core; on New's error there is no client.
func Open[C any](w Wire, opts Options, wrap func(*Core) *C) (*C, error) {
	core, err := New(w, opts)
	if err != nil {
		return nil, err
	}
	return wrap(core), nil
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
