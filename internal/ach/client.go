package ach

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
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
const DefaultTimeout = apiwire.DefaultTimeout

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

// Client speaks HTTP to the ACH API. Each method sends exactly one request
// (after waiting on the Limiter) and never retries: the retry policy
// belongs to the caller, which decides with ClassOf and errors.Is. A
// Client is safe for concurrent use.
type Client struct {
	core *apiwire.Core
}

// New checks opts and returns a Client. It fails on a missing or non-https
// BaseURL (http only to loopback), a missing key, or a key with characters
// not allowed in an HTTP header. Its errors never show the key.
func New(opts Options) (*Client, error) {
	core, err := apiwire.New(apiwire.Options{
		Name: "ach", BaseURL: opts.BaseURL, PathPrefix: PathPrefix, Key: opts.Key, HTTPClient: opts.HTTPClient,
		Timeout: opts.Timeout, Limiter: opts.Limiter, Observe: opts.Observe, Logger: opts.Logger,
		MaxBody: maxBody, Message: apiMessage, Flagged: errorFlagged,
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

// badAnswer builds the error for a 2xx answer that cannot be read: for a
// call with an effect Ambiguous (the effect may well have happened),
// otherwise Permanent.
func (c *Client) badAnswer(k apiwire.Call, status int, err error) *Error {
	return errorOf(c.core.BadAnswer(k, status, err))
}

// refuse builds the error for input refused before sending.
func (c *Client) refuse(k apiwire.Call, err error) *Error {
	return errorOf(c.core.Fail(k, 0, apiwire.Permanent, "not sent", err))
}

// errorOf is f as this package's error. When the service said no, the
// conditions kindsOf finds in its answer are the error's sentinels, and a
// customer the answer names is its UserID.
func errorOf(f *apiwire.Failure) *Error {
	e := &Error{Op: f.Op, Status: f.Status, Message: f.Message, Code: f.Code,
		RetryAfter: f.RetryAfter, Class: Class(f.Class), Err: f.Err}
	if !f.Refused {
		return e
	}
	kindStatus := f.Status
	if kindStatus >= 200 && kindStatus <= 299 {
		kindStatus = 0
	}
	e.kinds = kindsOf(kindStatus, e.Code, e.Message)
	if m := f.Answer; m != nil {
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

// validID is apiwire.ValidID, naming what the identifier is.
func validID(what, id string) error {
	if err := apiwire.ValidID(id); err != nil {
		return fmt.Errorf("%s %w", what, err)
	}
	return nil
}
