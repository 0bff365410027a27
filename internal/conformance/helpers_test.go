package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/sandbox"
)

// Test keys. keyA and keyB have the full plan; keyBasic lacks fund
// confirmation.
const (
	keyA     = "sk_test_conformanceAlpha"
	keyB     = "sk_test_conformanceBeta"
	keyBasic = "sk_test_conformanceBasic"
)

// fixtureRouting is the sandbox test routing number (public-api-notes.md).
const fixtureRouting = "999900001"

// account returns the test account of fixture ordinal n: "11110000" and n
// as two digits.
func account(n int) string { return fmt.Sprintf("11110000%02d", n) }

// startTime is every frozen sandbox clock: Wednesday 4 March 2026, noon
// UTC, far from midnight so that no date computed by a test can roll over.
func startTime() time.Time { return time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC) }

// mode is how the sandbox answers: exactly as sent, or like a less tidy
// service (sandbox.Options.Quirks: numbers without leading zeros, a label
// filter by substring in any case, float amounts, paging numbers as
// numbers or strings, accounts masked "1......016", an edit without phone
// keeping it).
type mode struct {
	name   string
	quirks bool
}

// modes are the sandbox modes every test runs against.
var modes = []mode{{"exact", false}, {"quirks", true}}

// eachMode runs f once per mode, as the subtests "exact" and "quirks".
// Where an assertion depends on the sandbox echoing exactly, it asserts
// the quirky behaviour explicitly in quirks mode.
func eachMode(t *testing.T, f func(t *testing.T, m mode)) {
	t.Helper()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) { f(t, m) })
	}
}

// env is a sandbox behind a real loopback HTTP server.
type env struct {
	t      *testing.T
	sb     *sandbox.Server
	url    string
	hc     *http.Client
	quirks bool // the sandbox runs with Options.Quirks
}

// newEnv starts a sandbox in mode m. Unless opts say otherwise, its clock
// is frozen at startTime and it knows keyA, keyB (full plan) and keyBasic.
func newEnv(t *testing.T, m mode, opts sandbox.Options) *env {
	t.Helper()
	opts.Quirks = m.quirks
	if opts.Now == nil {
		opts.Now = startTime
	}
	if opts.Keys == nil {
		opts.Keys = []sandbox.Key{
			{Value: keyA, FundConfirmation: true},
			{Value: keyB, FundConfirmation: true},
			{Value: keyBasic, FundConfirmation: false},
		}
	}
	sb := sandbox.New(opts)
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	return &env{t: t, sb: sb, url: srv.URL, hc: srv.Client(), quirks: m.quirks}
}

// client returns an API client for key.
func (e *env) client(key string) *echeck.Client {
	e.t.Helper()
	c, err := echeck.New(apiwire.Options{BaseURL: e.url, Key: key})
	if err != nil {
		e.t.Fatalf("echeck.New: %v", err)
	}
	return c
}

// requests is how many requests the sandbox has received so far.
func (e *env) requests() int64 { return e.sb.Stats().Requests }

// rawResp is an answer read with net/http.
type rawResp struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any // nil when the body is not a JSON object
}

// message is the "message" of the answer.
func (r rawResp) message() string { s, _ := r.json["message"].(string); return s }

// obj returns the object under key, or nil.
func (r rawResp) obj(key string) map[string]any { m, _ := r.json[key].(map[string]any); return m }

// reqOpt adjusts a raw request.
type reqOpt func(*http.Request)

// noContentType removes the Content-Type header.
func noContentType(r *http.Request) { r.Header.Del("Content-Type") }

// authHeader replaces the Authorization header; "" removes it.
func authHeader(v string) reqOpt {
	return func(r *http.Request) {
		if v == "" {
			r.Header.Del("Authorization")
		} else {
			r.Header.Set("Authorization", v)
		}
	}
}

// raw sends one request with net/http: body (when not nil) as JSON, the
// key as a Bearer token, Content-Type application/json.
func (e *env) raw(method, path, key string, body any, opts ...reqOpt) rawResp {
	e.t.Helper()
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			e.t.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	return e.send(method, path, key, rd, "application/json", opts...)
}

// rawForm sends a form-encoded body.
func (e *env) rawForm(method, path, key, form string) rawResp {
	e.t.Helper()
	return e.send(method, path, key, strings.NewReader(form), "application/x-www-form-urlencoded")
}

func (e *env) send(method, path, key string, body io.Reader, ctype string, opts ...reqOpt) rawResp {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.url+path, body)
	if err != nil {
		e.t.Fatalf("new request: %v", err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", ctype)
	for _, o := range opts {
		o(req)
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	r := rawResp{status: resp.StatusCode, header: resp.Header, body: b}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	_ = d.Decode(&r.json)
	return r
}

// today is the date of key's sandbox clock, read from GET /_sandbox/clock.
func (e *env) today(key string) time.Time {
	e.t.Helper()
	r := e.raw(http.MethodGet, "/_sandbox/clock", key, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("GET /_sandbox/clock: HTTP %d %s", r.status, r.body)
	}
	s, _ := r.json["now"].(string)
	now, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		e.t.Fatalf("GET /_sandbox/clock: now %q: %v", s, err)
	}
	return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
}

// advance moves key's sandbox clock days on.
func (e *env) advance(key string, days int) {
	e.t.Helper()
	r := e.raw(http.MethodPost, "/_sandbox/clock", key, map[string]any{"advance_days": days})
	if r.status != http.StatusOK {
		e.t.Fatalf("POST /_sandbox/clock: HTTP %d %s", r.status, r.body)
	}
}

// deposit marks checks deposited through the sandbox's dashboard action.
func (e *env) deposit(key string, ids ...string) rawResp {
	e.t.Helper()
	r := e.raw(http.MethodPost, "/_sandbox/deposit", key, map[string]any{"check_ids": ids})
	if r.status != http.StatusOK {
		e.t.Fatalf("POST /_sandbox/deposit: HTTP %d %s", r.status, r.body)
	}
	return r
}

// validRequest is a check every rule accepts, drawn on fixture account 16
// (risk Pass, SufficientFunds).
func validRequest(label string) echeck.CheckRequest {
	return echeck.CheckRequest{
		Amount: 1234, Memo: "conformance", Name: "Ada Lovelace", Email: "ada@example.com",
		Label: label, BankRouting: fixtureRouting, BankAccount: account(16),
	}
}

// create creates r through c and fails the test on any error.
func create(t *testing.T, c *echeck.Client, r echeck.CheckRequest) *echeck.Check {
	t.Helper()
	ch, err := c.CreateCheck(t.Context(), r)
	if err != nil {
		t.Fatalf("CreateCheck(%s): %v", r.Label, err)
	}
	if len(ch.CheckID) != 36 {
		t.Fatalf("CreateCheck(%s): check_id %q is not 36 characters", r.Label, ch.CheckID)
	}
	return ch
}

// get fetches a check through c and fails the test on any error.
func get(t *testing.T, c *echeck.Client, id string) *echeck.Check {
	t.Helper()
	ch, err := c.GetCheck(t.Context(), id)
	if err != nil {
		t.Fatalf("GetCheck: %v", err)
	}
	return ch
}

// wantStatus fails unless check id has status want.
func wantStatus(t *testing.T, c *echeck.Client, id, want string) {
	t.Helper()
	if got := get(t, c, id).Status; got != want {
		t.Errorf("check %s: status %q, want %q", id, got, want)
	}
}

// apiErr asserts that err is an *apiwire.Error with HTTP status and class,
// whose message names field (alternatives separated by "|"; "" for any).
func apiErr(t *testing.T, err error, status int, class apiwire.Class, field string) *apiwire.Error {
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
	if field != "" && !namesField(e.Message, field) {
		t.Errorf("message %q does not name field %s", e.Message, field)
	}
	return e
}

// refused asserts that the client refused a call without sending it: a
// Permanent *apiwire.Error with no status, and no request at the sandbox.
func refused(t *testing.T, e *env, before int64, err error) {
	t.Helper()
	var ee *apiwire.Error
	if !errors.As(err, &ee) {
		t.Fatalf("error %v (%T), want the client's own refusal", err, err)
	}
	if ee.Status != 0 || ee.Class != apiwire.Permanent {
		t.Errorf("refusal: status %d class %s, want 0 and permanent (%v)", ee.Status, ee.Class, err)
	}
	if n := e.requests() - before; n != 0 {
		t.Errorf("the client refused, yet the sandbox received %d request(s)", n)
	}
}

// rawErr asserts a raw answer's status and that its error envelope names
// field ("" for any; alternatives separated by "|").
func rawErr(t *testing.T, r rawResp, status int, field string) {
	t.Helper()
	if r.status != status {
		t.Errorf("HTTP %d, want %d: %s", r.status, status, r.body)
		return
	}
	if r.json["error"] != true {
		t.Errorf("error envelope lacks \"error\": true: %s", r.body)
	}
	if field != "" && !namesField(r.message(), field) {
		t.Errorf("message %q does not name field %s", r.message(), field)
	}
}

// namesField reports whether msg mentions one of the "|"-separated field
// names as a whole word ("name" is not found in "first_name").
func namesField(msg, fields string) bool {
	for _, f := range strings.Split(fields, "|") {
		re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(f) + `($|[^A-Za-z0-9_])`)
		if re.MatchString(msg) {
			return true
		}
	}
	return false
}

// cents parses a decimal amount the test itself wrote.
func cents(t *testing.T, s string) money.Cents {
	t.Helper()
	c, err := money.Parse(s)
	if err != nil {
		t.Fatalf("money.Parse(%q): %v", s, err)
	}
	return c
}

// listByLabel returns every check with label, following pages.
func listByLabel(t *testing.T, c *echeck.Client, label string) []echeck.Check {
	t.Helper()
	var all []echeck.Check
	for page := 1; ; page++ {
		p, err := c.ListChecks(t.Context(), echeck.ListParams{Label: label, Limit: 100, Page: page})
		if err != nil {
			t.Fatalf("ListChecks(label %s, page %d): %v", label, page, err)
		}
		all = append(all, p.Checks...)
		if len(p.Checks) == 0 || p.CurrentPage >= p.LastPage {
			return all
		}
	}
}

// number is the check number the sandbox answers for a number sent: the
// same in the exact mode; without leading zeros in quirks mode, as a
// service that stores numbers as integers would answer.
func (e *env) number(sent string) string {
	if !e.quirks || sent == "" {
		return sent
	}
	if n := strings.TrimLeft(sent, "0"); n != "" {
		return n
	}
	return "0"
}

// sameNumber compares check numbers as numbers: "0042" and "42" are the
// same check number to a service that stores integers.
func sameNumber(a, b string) bool {
	trim := func(s string) string {
		if s = strings.TrimLeft(s, "0"); s == "" {
			return "0"
		}
		return s
	}
	return trim(a) == trim(b)
}

// wantMasked asserts that got, a decoded bank_account, masks acct (a
// fixture account of 10 digits): "****" and the last four digits in the
// exact mode, the service's mask (first digit, dots, last three, as long
// as the account) in quirks mode. It never shows the account whole.
func (e *env) wantMasked(t *testing.T, got, acct string) {
	t.Helper()
	want := "****" + acct[len(acct)-4:]
	if e.quirks {
		want = acct[:1] + strings.Repeat(".", len(acct)-4) + acct[len(acct)-3:]
	}
	if got != want || strings.Contains(got, acct) {
		t.Errorf("bank_account %q, want %q (masked account %s)", got, want, acct)
	}
}

// pagingText reads a paging number of a raw list answer: a JSON string in
// the exact mode (spec 2.7); a string or a number in quirks mode
// (public-api-notes: "Paging numbers may come as strings or numbers").
// isNumber tells which it was.
func (e *env) pagingText(t *testing.T, v any) (text string, isNumber bool) {
	t.Helper()
	switch x := v.(type) {
	case string:
		return x, false
	case json.Number:
		if !e.quirks {
			t.Errorf("paging number %s is a JSON number in the exact mode, want a string (spec 2.7)", x)
		}
		return x.String(), true
	}
	t.Errorf("paging number %#v is neither a string nor a number", v)
	return "", false
}
