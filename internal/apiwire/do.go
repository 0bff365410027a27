package apiwire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/logattr"
	"github.com/batchd/batchd/internal/redact"
	"github.com/batchd/batchd/internal/sendgate"
)

// Call describes one request.
type Call struct {
	Op     string     // operation name: the Error's Op and the endpoint observed
	Method string     // HTTP method
	Path   string     // below the base URL and prefix, identifiers already escaped
	Query  url.Values // nil for none
	Body   any        // JSON-encoded; nil sends no body
	// Effect marks a request whose effect must not happen twice (a create,
	// a debit or credit, a verification step): an answer lost after it was
	// sent makes the failure Ambiguous rather than Retryable.
	Effect bool
	// Result names the member holding the created object, so that a 2xx
	// that says "error" yet carries the object is Ambiguous, not Permanent.
	Result string
	// Accounts are request values shown only masked (redact.Account) should
	// the service or net/http echo them: account numbers, account tokens.
	// Values shorter than 4 characters are left alone.
	Accounts []string
	// Tokens are processor tokens, which never show at all.
	Tokens []string
}

// Answer is a 2xx response whose body did not flag an error.
type Answer struct {
	Status int
	Object Object // the top-level JSON object; empty for an empty body
	Body   []byte // the body, for a client that decodes it into a wire struct; {} for an empty one
}

// Do sends one request and returns its answer, or an *Error.
func (c *Core) Do(ctx context.Context, k Call) (Answer, error) {
	if err := c.limiter.Wait(ctx); err != nil {
		return Answer{}, c.Fail(k, 0, notSent.of(k.Effect), "not sent: waiting for the rate limiter", err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, sent, err := c.newRequest(ctx, k)
	if err != nil {
		return Answer{}, c.Refuse(k, "building the request", err)
	}
	if err := sendgate.Check(ctx); err != nil {
		return Answer{}, c.Fail(k, 0, notSent.of(k.Effect), "not sent: refused at the last moment", err)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		c.done(ctx, k, 0, time.Since(start))
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = c.scrub(k, ue.URL) // a query may hold an account number
		}
		return Answer{}, c.lost(k, sent.mayHaveBeenSent(), 0, err)
	}
	defer resp.Body.Close()
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, c.MaxBody+1))
	c.done(ctx, k, resp.StatusCode, time.Since(start))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Answer{}, c.statusError(k, resp, body)
	}
	if readErr != nil {
		return Answer{}, c.lost(k, true, resp.StatusCode, readErr)
	}
	if int64(len(body)) > c.MaxBody {
		return Answer{}, c.BadAnswer(k, resp.StatusCode, fmt.Errorf("response body exceeds %d bytes", c.MaxBody))
	}
	if len(bytes.TrimSpace(body)) == 0 && !k.Effect {
		return Answer{resp.StatusCode, Object{}, []byte("{}")}, nil // a bare 200 or 204 to a delete is success
	}
	m, err := DecodeObject(body)
	if err != nil {
		return Answer{}, c.BadAnswer(k, resp.StatusCode, err)
	}
	if c.flagged(m) {
		cls := flagged
		if _, ok := ObjectOf(m[k.Result]); k.Result != "" && ok {
			cls = flaggedShowing
		}
		return Answer{}, c.refusal(k, resp.StatusCode, cls.of(k.Effect), body)
	}
	return Answer{resp.StatusCode, m, body}, nil
}

func (c *Core) newRequest(ctx context.Context, k Call) (*http.Request, *sendTracker, error) {
	u := c.base + k.Path
	if len(k.Query) > 0 {
		u += "?" + k.Query.Encode()
	}
	t := &sendTracker{}
	ctx = withSendTrace(ctx, t)
	req, err := http.NewRequestWithContext(ctx, k.Method, u, http.NoBody)
	if err != nil {
		return nil, nil, err
	}
	if k.Body != nil {
		b, err := json.Marshal(k.Body)
		if err != nil {
			return nil, nil, err
		}
		t.attach(req, b)
	}
	// Both headers on every request, body or not (the ACH spec 4.2 lists
	// them for every request).
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "batchd-"+c.name+"/1")
	return req, t, nil
}

// done reports one finished request to the metrics hook and the log. The
// log line holds no path, so no identifier or account number.
func (c *Core) done(ctx context.Context, k Call, status int, d time.Duration) {
	c.observe(k.Op, status, d)
	c.log.LogAttrs(ctx, slog.LevelDebug, c.name+" request",
		slog.String("op", k.Op), slog.Int("status", status), logattr.Duration("duration", d))
}

// Subject is how a client reads the object an answer is about: Read
// decodes it and gives its identifier, which the answer holds as Field;
// What names the object in texts.
type Subject[T any] struct {
	What, Field string
	Read        func(Answer) (T, string, error)
}

// About sends k and returns the object of its answer, read by s. The
// answer must give the object's identifier and, when want is set, be
// about want (in any case); an answer that does not is an unreadable one
// (BadAnswer), as is one Read refuses.
func About[T any](ctx context.Context, c *Core, k Call, s Subject[T], want string) (*T, error) {
	a, err := c.Do(ctx, k)
	if err != nil {
		return nil, err
	}
	v, id, err := s.Read(a)
	switch {
	case err != nil:
	case id == "":
		err = fmt.Errorf("no %s in the answer", s.Field)
	case want != "" && !strings.EqualFold(id, want):
		err = fmt.Errorf("answer is about %s %q, not %q", s.What, Excerpt(id), want)
	}
	if err != nil {
		return nil, c.BadAnswer(k, a.Status, err)
	}
	return &v, nil
}

// lost builds the error of a request whose answer did not arrive whole:
// no response, or a body cut off. It is Ambiguous only for a call with an
// effect that may have reached the service.
func (c *Core) lost(k Call, mayHaveBeenSent bool, status int, err error) *Error {
	if mayHaveBeenSent {
		return c.Fail(k, status, mayBeSent.of(k.Effect), "answer lost after the request was sent", err)
	}
	return c.Fail(k, status, notSent.of(k.Effect), "request not sent", err)
}

// BadAnswer builds the error of a 2xx answer that cannot be read. For a
// call with an effect the effect may well have happened, so it is
// Ambiguous; otherwise the answer is not in a shape the client
// understands, and resending the same request will not change that.
func (c *Core) BadAnswer(k Call, status int, err error) *Error {
	return c.Fail(k, status, unreadable.of(k.Effect), "unreadable answer", err)
}

// Refuse builds the error of a call refused before sending, such as for
// invalid input: Permanent, since sending it again would fail the same
// way.
func (c *Core) Refuse(k Call, what string, err error) *Error {
	return c.Fail(k, 0, Permanent, what, err)
}

func (c *Core) statusError(k Call, resp *http.Response, body []byte) *Error {
	if int64(len(body)) > c.MaxBody {
		body = body[:c.MaxBody]
	}
	f := c.refusal(k, resp.StatusCode, Classify(k.Effect, resp.StatusCode), body)
	if d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), c.Now()); ok {
		f.RetryAfter = d
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		c.limiter.Throttled()
	}
	if p, ok := c.limiter.(pauser); ok && f.RetryAfter > 0 &&
		(resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		p.Pause(f.RetryAfter)
	}
	return f
}

// refusal builds the error of an answer in which the service said no,
// with the conditions its client reads in it (Wire.Conditions; a 2xx is
// status 0 to them). The body is scrubbed before the message is read,
// because cutting an excerpt could split a secret and leave a half that
// no longer matches.
func (c *Core) refusal(k Call, status int, cls Class, body []byte) *Error {
	msg, code, m := c.message([]byte(c.scrub(k, string(body))), status)
	f := c.Fail(k, status, cls, msg, nil)
	f.Code = c.scrub(k, code)
	f.Refused, f.Answer = true, m
	if c.conds != nil {
		condStatus := status
		if condStatus >= 200 && condStatus <= 299 {
			condStatus = 0
		}
		f.conds, f.outcomes = c.conds(condStatus, f.Code, f.Message)
	}
	return f
}

// Fail builds an *Error with every secret masked out of its text; a
// client also uses it for an answer it cannot use.
func (c *Core) Fail(k Call, status int, cls Class, msg string, err error) *Error {
	f := &Error{Op: k.Op, Status: status, Class: cls, Message: c.scrub(k, msg), client: c.name}
	if err != nil {
		f.Err = err
		if s := err.Error(); c.scrub(k, s) != s {
			f.Err = &scrubbed{msg: c.scrub(k, s), err: err}
		}
	}
	return f
}

// scrub removes the key and the call's processor tokens from s and masks
// its account numbers.
func (c *Core) scrub(k Call, s string) string {
	for _, t := range k.Tokens {
		if t != "" {
			s = strings.ReplaceAll(s, t, "[processor token]")
		}
	}
	s = strings.ReplaceAll(s, c.key, "[api key]")
	for _, v := range k.Accounts {
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
