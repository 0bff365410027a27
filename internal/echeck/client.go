package echeck

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
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
const DefaultTimeout = apiwire.DefaultTimeout

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

// Client speaks HTTP to the eCheck API. It is the only code in batchd that
// does. Each method sends exactly one request (after waiting on the
// Limiter) and never retries: the retry policy belongs to the caller,
// which decides with ClassOf. A Client is safe for concurrent use.
type Client struct {
	core *apiwire.Core
}

// New checks opts and returns a Client. It fails on a missing or non-https
// BaseURL (http only to loopback), a missing key, or a key with
// characters not allowed in an HTTP header.
func New(opts Options) (*Client, error) {
	core, err := apiwire.New(apiwire.Options{
		Name: "echeck", BaseURL: opts.BaseURL, Key: opts.Key, HTTPClient: opts.HTTPClient,
		Timeout: opts.Timeout, Limiter: opts.Limiter, Observe: opts.Observe, Logger: opts.Logger,
		MaxBody: maxBody, Message: refusalMessage, Flagged: errorFlagged,
	})
	if err != nil {
		return nil, err
	}
	return &Client{core: core}, nil
}

// object is one decoded JSON object (apiwire.Object).
type object = apiwire.Object

// do sends one request and returns its answer. Every error is an *Error.
func (c *Client) do(ctx context.Context, k apiwire.Call) (apiwire.Answer, error) {
	a, f := c.core.Do(ctx, k)
	if f != nil {
		return a, errorOf(f)
	}
	return a, nil
}

// fail builds an *Error with every secret of k masked out of its text.
func (c *Client) fail(k apiwire.Call, status int, cls Class, msg string, err error) *Error {
	return errorOf(c.core.Fail(k, status, apiwire.Class(cls), msg, err))
}

// badAnswer builds the error for a 2xx answer that cannot be read: for a
// create Ambiguous (the object may well exist), otherwise Permanent.
func (c *Client) badAnswer(k apiwire.Call, status int, err error) *Error {
	return errorOf(c.core.BadAnswer(k, status, err))
}

// errorOf is f as this package's error.
func errorOf(f *apiwire.Failure) *Error {
	return &Error{Op: f.Op, Status: f.Status, Message: f.Message, Code: f.Code,
		RetryAfter: f.RetryAfter, Class: Class(f.Class), Err: f.Err}
}
