package submit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/batchd/batchd/internal/delayproxy"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/state"
)

const testKey = "sk_test_submit_harness_0123456789"

// testSendWindow and testSendMargin are the send-by window of the rigs'
// PostgreSQL ledgers and the margin the tests on the real clock give
// their Runners (Options.SendMargin; bbolt ledgers set no deadlines).
const (
	testSendWindow = time.Second
	testSendMargin = 20 * time.Millisecond
)

// TestMain stops the shared PostgreSQL server (pgtest) the rigs' ledgers
// on that backend live in.
func TestMain(m *testing.M) {
	if delayproxy.ServeChild() {
		return
	}
	pgtest.Main(m)
}

// rig is a ledger, a sandbox served over loopback HTTP, and a client.
type rig struct {
	t   *testing.T
	db  *state.DB
	sb  *sandbox.Server
	srv *httptest.Server
	api *echeck.Client
	svc *echeck.Service
	log *requestLog
}

// requestLog records what reached the sandbox, for assertions on timing.
type requestLog struct {
	mu      sync.Mutex
	entries []logEntry
}

type logEntry struct {
	at     time.Time
	method string
	path   string
	status int
	number string // the "number" member of the request's JSON body, if any
}

// newRig starts a rig on a ledger of backend (ledgertest), calling the
// sandbox with key.
func newRig(t *testing.T, backend string, sbOpts sandbox.Options, key string) *rig {
	t.Helper()
	return newRigOpts(t, backend, sbOpts, key, state.Options{})
}

// newRigOpts is newRig with a ledger opened with stOpts (a clock, a send
// window).
func newRigOpts(t *testing.T, backend string, sbOpts sandbox.Options, key string, stOpts state.Options) *rig {
	t.Helper()
	if backend == ledgertest.Postgres && stOpts.SendWindow == 0 {
		// A row in doubt on a shared ledger is looked up only after its
		// send-by deadline (plus the margin, which the tests on the real
		// clock shorten as they shorten ResolveAfter): a short window
		// keeps them quick, yet lets a create that waited for the
		// sandbox's rate limit under -race still leave.
		stOpts.SendWindow = testSendWindow
	}
	db := ledgertest.Open(t, backend, stOpts)
	sb := sandbox.New(sbOpts)
	rl := &requestLog{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recordingWriter{ResponseWriter: w, status: 200}
		number := bodyNumber(r)
		sb.ServeHTTP(rec, r)
		rl.mu.Lock()
		rl.entries = append(rl.entries, logEntry{time.Now(), r.Method, r.URL.Path, rec.status, number})
		rl.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	api, err := echeck.New(apiwire.Options{BaseURL: srv.URL, Key: key, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, db: db, sb: sb, srv: srv, api: api, svc: echeck.NewService(api), log: rl}
}

// bodyNumber reads the "number" member of r's JSON body, leaving the body
// readable again; "" when there is none.
func bodyNumber(r *http.Request) string {
	if r.Body == nil {
		return ""
	}
	b, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	var v struct {
		Number string `json:"number"`
	}
	if err != nil || json.Unmarshal(b, &v) != nil {
		return ""
	}
	return v.Number
}

// creates returns the numbers of the check creates that reached the
// sandbox, in order.
func (l *requestLog) creates() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.entries {
		if e.method == http.MethodPost && e.path == "/v1/check/create" {
			out = append(out, e.number)
		}
	}
	return out
}

// count returns how many requests reached the sandbox with method and path.
func (l *requestLog) count(method, path string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.entries {
		if e.method == method && e.path == path {
			n++
		}
	}
	return n
}

// fixture returns a payment on sandbox fixture account n.
func fixture(n int, cents money.Cents) payment.Payment {
	return payment.Payment{
		Amount: cents, Memo: "invoice", Name: "Payer Name", Email: "payer@example.com",
		BankRouting: "999900001", BankAccount: fmt.Sprintf("11110000%02d", n),
	}
}

// load commits a batch with the given payments on lines 2, 3, ...
func (r *rig) load(name string, ps ...payment.Payment) payment.Batch {
	r.t.Helper()
	l, err := r.db.BeginBatch(payment.FileMeta{Name: name, SHA256: "sha-" + name})
	if err != nil {
		r.t.Fatal(err)
	}
	for i, p := range ps {
		if err := l.Add(i+2, p); err != nil {
			r.t.Fatal(err)
		}
	}
	b, err := l.Commit(len(ps), 0)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// serviceChecks lists every check the sandbox holds for the rig's key. A
// read refused for a while (a 429, or a 500 or 503 the sandbox's ErrorRate
// injects into this read as into any other) is read again.
func (r *rig) serviceChecks() []echeck.Check {
	r.t.Helper()
	var out []echeck.Check
	for page, tries := 1, 0; ; page++ {
		p, err := r.api.ListChecks(context.Background(), echeck.ListParams{Limit: 100, Page: page, Sort: "date", Direction: "ASC"})
		var apiErr *apiwire.Error
		if errors.As(err, &apiErr) && apiErr.Class == apiwire.Retryable && tries < 20 {
			tries++
			time.Sleep(max(apiErr.RetryAfter, 10*time.Millisecond)) // the service asked for this wait
			page--
			continue
		}
		if err != nil {
			r.t.Fatal(err)
		}
		out = append(out, p.Checks...)
		if page >= p.LastPage || len(p.Checks) == 0 {
			return out
		}
	}
}

// rows returns every row of a batch.
func (r *rig) rows(batch uint64) []*payment.Row {
	r.t.Helper()
	var out []*payment.Row
	if err := r.db.Rows(batch, func(row *payment.Row) (bool, error) { out = append(out, row); return true, nil }); err != nil {
		r.t.Fatal(err)
	}
	return out
}

// assertExactlyOnce checks that every row of the batch has a distinct check
// at the service whose label, number and amount match the row, and that
// the service holds no other check.
func (r *rig) assertExactlyOnce(batch uint64, wantRows int) {
	r.t.Helper()
	checks := r.serviceChecks()
	byID := map[string]echeck.Check{}
	for _, c := range checks {
		byID[c.CheckID] = c
	}
	if len(checks) != wantRows || len(byID) != wantRows {
		r.t.Fatalf("service holds %d checks (%d distinct), want exactly %d", len(checks), len(byID), wantRows)
	}
	seen := map[string]bool{}
	for _, row := range r.rows(batch) {
		if row.State != payment.Submitted {
			r.t.Fatalf("row %s is %s, want submitted (error %q)", row.Key, row.State, row.Error)
		}
		c, ok := byID[row.CheckID]
		if !ok || seen[row.CheckID] {
			r.t.Fatalf("row %s: check %q missing at the service or shared", row.Key, row.CheckID)
		}
		seen[row.CheckID] = true
		if c.Label != row.Label || c.Number != row.Number || c.Amount != row.Payment.Amount {
			r.t.Fatalf("row %s: check has label %q number %q amount %s; row has %q %q %s",
				row.Key, c.Label, c.Number, c.Amount, row.Label, row.Number, row.Payment.Amount)
		}
	}
}

type recordingWriter struct {
	http.ResponseWriter
	status int
}

func (w *recordingWriter) WriteHeader(c int) { w.status = c; w.ResponseWriter.WriteHeader(c) }

// Hijack passes the sandbox's drop fault through to the connection.
func (w *recordingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.status = 0 // no answer
	return w.ResponseWriter.(http.Hijacker).Hijack()
}
