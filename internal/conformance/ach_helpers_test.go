package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/ach"
	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/sandbox"
)

// The ACH conformance tests run batchd's ACH client (internal/ach) against
// the sandbox's /ach/v2 (internal/sandbox, files ach_*.go), both written
// from docs/ach-wire.md by different hands. They use the eCheck tests'
// env, modes and raw helpers; the helpers below add the ACH side.

// keyInactive is a key whose application is disabled, as the sandbox's
// command line gives it (docs/ach-wire.md: "sk_test_x:inactive").
const keyInactive = "sk_test_x:inactive"

// achPrefix is where the ACH API lives (spec 9).
const achPrefix = "/ach/v2"

// legacyProcessor is a processor name for Options.LegacyProcessor.
const legacyProcessor = "legacyach"

// deprecationDay is the first day micro-deposit initiation is refused
// (spec 9).
const deprecationDay = "2026-06-08"

// newACHEnv starts a sandbox in mode m for the ACH tests. Unless opts say
// otherwise it knows keyA, keyB (full plan) and the inactive key, and its
// clock is frozen at startTime (4 March 2026, before the deprecation).
func newACHEnv(t *testing.T, m mode, opts sandbox.Options) *env {
	t.Helper()
	if opts.Keys == nil {
		inactive, err := sandbox.ParseKey(keyInactive)
		if err != nil {
			t.Fatalf("sandbox.ParseKey(%s): %v", keyInactive, err)
		}
		opts.Keys = []sandbox.Key{{Value: keyA, FundConfirmation: true}, {Value: keyB, FundConfirmation: true}, inactive}
	}
	return newEnv(t, m, opts)
}

// inactiveKey is the value of keyInactive, as a client sends it.
func inactiveKey() string { v, _, _ := strings.Cut(keyInactive, ":"); return v }

// achClient returns an ACH client for key.
func (e *env) achClient(key string) *ach.Client {
	e.t.Helper()
	c, err := ach.New(apiwire.Options{BaseURL: e.url, Key: key, HTTPClient: e.hc})
	if err != nil {
		e.t.Fatalf("ach.New: %v", err)
	}
	return c
}

// achSeq makes distinct e-mail addresses and account numbers.
var achSeq atomic.Int64

// freshAccount is an account number no test used before, outside the
// fixture table: an on-demand source of it is Unverified.
func freshAccount() string { return fmt.Sprintf("42%08d", achSeq.Add(1)) }

// newCustomer creates a customer through c and fails the test on error.
func newCustomer(t *testing.T, c *ach.Client) *ach.User {
	t.Helper()
	n := achSeq.Add(1)
	u, err := c.CreateUser(t.Context(), ach.UserRequest{FirstName: "Ada", LastName: "Lovelace",
		Email: fmt.Sprintf("ada%d@example.com", n), Phone: "555-0100"})
	if err != nil {
		t.Fatalf("CreateUser: %v", err)
	}
	if !uuidRE.MatchString(u.ID) {
		t.Fatalf("CreateUser: user_id %q is not a UUID", u.ID)
	}
	return u
}

// sourceReq is a micro-deposit link of account at the fixture bank.
func sourceReq(userID, acct string) ach.FundingSourceRequest {
	return ach.FundingSourceRequest{UserID: userID, Routing: fixtureRouting, Account: acct, Type: ach.Checking}
}

// newPending links account to userID for micro-deposit verification and
// fails the test unless the source is Pending.
func newPending(t *testing.T, c *ach.Client, userID, acct string) *ach.FundingSource {
	t.Helper()
	s, err := c.CreateFundingSource(t.Context(), sourceReq(userID, acct))
	if err != nil {
		t.Fatalf("CreateFundingSource: %v", err)
	}
	if s.Status != ach.StatusPending || !uuidRE.MatchString(s.ID) {
		t.Fatalf("CreateFundingSource: %+v, want a Pending source with a UUID", s)
	}
	return s
}

// sourceStatus fetches a source's status through c.
func sourceStatus(t *testing.T, c *ach.Client, id string) ach.Status {
	t.Helper()
	s, err := c.GetFundingSource(t.Context(), id)
	if err != nil {
		t.Fatalf("GetFundingSource: %v", err)
	}
	return s.Status
}

// wantSourceStatus fails unless source id has status want.
func wantSourceStatus(t *testing.T, c *ach.Client, id string, want ach.Status) {
	t.Helper()
	if got := sourceStatus(t, c, id); got != want {
		t.Errorf("source %s: status %v, want %v", id, got, want)
	}
}

// statusWord is how the sandbox writes a status of the contract: as the
// contract spells it in the exact mode, lowercase in quirks mode.
func (e *env) statusWord(s string) string {
	if e.quirks {
		return strings.ToLower(s)
	}
	return s
}

// achErr asserts that err is an *apiwire.Error with HTTP status and class that
// is every one of kinds (and ErrNotFound only when listed).
func achErr(t *testing.T, err error, status int, class apiwire.Class, kinds ...error) *apiwire.Error {
	t.Helper()
	var e *apiwire.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want *apiwire.Error with HTTP %d", err, err, status)
	}
	if e.Status != status {
		t.Errorf("HTTP status %d, want %d (%v)", e.Status, status, err)
	}
	if got := apiwire.ClassOf(err); got != class {
		t.Errorf("ClassOf = %s, want %s (%v)", got, class, err)
	}
	for _, k := range kinds {
		if !errors.Is(err, k) {
			t.Errorf("error is not %v: %v", k, err)
		}
	}
	listed := false
	for _, k := range kinds {
		listed = listed || k == ach.ErrNotFound
	}
	if !listed && errors.Is(err, ach.ErrNotFound) {
		t.Errorf("error is ErrNotFound, unexpectedly: %v", err)
	}
	return e
}

// achRaw sends a raw request to an ACH path.
func (e *env) achRaw(method, path, key string, body any, opts ...reqOpt) rawResp {
	e.t.Helper()
	return e.raw(method, achPrefix+path, key, body, opts...)
}

// achRawErr asserts a raw answer is the ACH error envelope with status
// and, when msg is not "", that message.
func achRawErr(t *testing.T, r rawResp, status int, msg string) {
	t.Helper()
	if r.status != status {
		t.Errorf("HTTP %d, want %d: %s", r.status, status, r.body)
		return
	}
	if r.json["success"] != false || r.json["error"] != true {
		t.Errorf("not the ACH error envelope (success false, error true): %s", r.body)
	}
	if msg != "" && r.message() != msg {
		t.Errorf("message %q, want %q", r.message(), msg)
	}
}

// issueToken asks the sandbox's stand-in provider for a processor token
// of account at the fixture bank. processor "" is svcach; env ""
// (sandbox) and subtype "" (checking) are not sent.
func (e *env) issueToken(key, processor, environment, acct, subtype string) string {
	e.t.Helper()
	if processor == "" {
		processor = "svcach"
	}
	body := map[string]any{"processor": processor, "routing_number": fixtureRouting, "account_number": acct}
	if environment != "" {
		body["environment"] = environment
	}
	if subtype != "" {
		body["subtype"] = subtype
	}
	r := e.achRaw(http.MethodPost, "/_sandbox/processor/token", key, body)
	tok, _ := r.json["processor_token"].(string)
	if r.status != http.StatusOK || !strings.HasPrefix(tok, "processor-") {
		e.t.Fatalf("POST /_sandbox/processor/token: HTTP %d %s", r.status, r.body)
	}
	return tok
}

// revokeToken revokes a processor token at the stand-in provider.
func (e *env) revokeToken(key, tok string) {
	e.t.Helper()
	r := e.achRaw(http.MethodPost, "/_sandbox/processor/token/revoke", key, map[string]any{"processor_token": tok})
	if r.status != http.StatusOK {
		e.t.Fatalf("POST /_sandbox/processor/token/revoke: HTTP %d %s", r.status, r.body)
	}
}

// microDeposits reads the two micro-deposits of a source from the
// sandbox's bank statement, in cents.
func (e *env) microDeposits(key, id string) (money.Cents, money.Cents) {
	e.t.Helper()
	r := e.achRaw(http.MethodGet, "/_sandbox/funding-source/"+id+"/micro-deposits", key, nil)
	a, _ := r.json["amounts"].([]any)
	if r.status != http.StatusOK || len(a) != 2 {
		e.t.Fatalf("GET micro-deposits: HTTP %d %s", r.status, r.body)
	}
	var out [2]money.Cents
	for i, v := range a {
		n, ok := v.(json.Number)
		if !ok {
			e.t.Fatalf("micro-deposit %v is not a JSON number: %s", v, r.body)
		}
		c, err := money.ParseWire(n.String())
		if err != nil || c < 1 || c > 99 {
			e.t.Fatalf("micro-deposit %s: %v, want 0.01 to 0.99", n, err)
		}
		out[i] = c
	}
	if out[0] == out[1] {
		e.t.Errorf("micro-deposits %s and %s are not distinct", out[0], out[1])
	}
	return out[0], out[1]
}

// setDate sets key's sandbox day (POST /_sandbox/clock {"date"}).
func (e *env) setDate(key, date string) {
	e.t.Helper()
	r := e.raw(http.MethodPost, "/_sandbox/clock", key, map[string]any{"date": date})
	now, _ := r.json["now"].(string)
	if r.status != http.StatusOK || !strings.HasPrefix(now, date+" ") {
		e.t.Fatalf("POST /_sandbox/clock date %s: HTTP %d %s", date, r.status, r.body)
	}
}

// day parses a YYYY-MM-DD date the test wrote.
func day(t *testing.T, s string) time.Time {
	t.Helper()
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// noFullAccount fails when text shows acct whole.
func noFullAccount(t *testing.T, text, acct string) {
	t.Helper()
	if strings.Contains(text, acct) {
		t.Errorf("text shows the account number %s: %s", acct, text)
	}
}

// primaries returns the ids of the primary sources among l.
func primaries(l []ach.FundingSource) []string {
	var out []string
	for _, s := range l {
		if s.Primary {
			out = append(out, s.ID)
		}
	}
	return out
}

// listSources lists a customer's sources through c.
func listSources(t *testing.T, c *ach.Client, userID string) []ach.FundingSource {
	t.Helper()
	l, err := c.ListFundingSources(t.Context(), userID)
	if err != nil {
		t.Fatalf("ListFundingSources: %v", err)
	}
	return l
}
