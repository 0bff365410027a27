package reconcile

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/state"
)

const testKey = "sk_test_reconcile_Q7xLEAK"

// monday is where every test clock starts: Monday 2 March 2026, 10:00 UTC.
func monday() time.Time { return time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC) }

// clock is the test's clock for the ledger and the Runner. The sandbox
// keeps its own clock (frozen at the start, moved by /_sandbox/clock);
// env.advance moves both together.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// env is a ledger and a sandbox behind a loopback HTTP server, driven by
// the real client.
type env struct {
	t     testing.TB
	sb    *sandbox.Server
	url   string
	api   *echeck.Client  // the wire client, to act at the service as a test
	svc   *echeck.Service // the domain adapter of api, what the Runner is given
	db    *state.DB
	clock *clock
	dir   string // reports
}

// newEnv starts a sandbox whose clock starts at start, and a ledger of
// backend (ledgertest) and a client; limiter may be nil (unlimited).
func newEnv(t testing.TB, backend string, start time.Time, limiter apiwire.Limiter) *env {
	t.Helper()
	fixed := start
	sb := sandbox.New(sandbox.Options{Now: func() time.Time { return fixed }})
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	e := newEnvAt(t, backend, srv.URL, start, limiter)
	e.sb = sb
	return e
}

// newEnvAt is newEnv with a sandbox already serving at url, its clock
// frozen at start.
func newEnvAt(t testing.TB, backend, url string, start time.Time, limiter apiwire.Limiter) *env {
	t.Helper()
	api, err := echeck.New(apiwire.Options{BaseURL: url, Key: testKey, Limiter: limiter})
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: start}
	db := ledgertest.Open(t, backend, state.Options{Now: c.Now})
	return &env{t: t, url: url, api: api, svc: echeck.NewService(api), db: db, clock: c, dir: t.TempDir()}
}

// control posts to a /_sandbox endpoint.
func (e *env) control(path string, body any) {
	e.t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, e.url+path, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("%s: HTTP %d %s", path, resp.StatusCode, out)
	}
}

// advance moves the sandbox's clock and the test clock by days.
func (e *env) advance(days int) {
	e.t.Helper()
	e.control("/_sandbox/clock", map[string]any{"advance_days": days})
	e.clock.add(time.Duration(days) * 24 * time.Hour)
}

// deposit marks checks deposited, as the sandbox dashboard does.
func (e *env) deposit(ids ...string) {
	e.t.Helper()
	e.control("/_sandbox/deposit", map[string]any{"check_ids": ids})
}

// void voids a check at the service, as a person at the dashboard would.
func (e *env) void(id string) {
	e.t.Helper()
	if err := e.api.DeleteCheck(context.Background(), id); err != nil {
		e.t.Fatal(err)
	}
}

// pay is a valid payment on sandbox fixture account n (1 to 22).
func pay(cents money.Cents, account int, name string) payment.Payment {
	return payment.Payment{Amount: cents, Memo: "invoice", Name: name, Email: "payer@example.com",
		BankRouting: "999900001", BankAccount: fmt.Sprintf("11110000%02d", account)}
}

// load commits a batch with the payments on lines 2, 3, ...
func (e *env) load(name string, pays ...payment.Payment) payment.Batch {
	e.t.Helper()
	l, err := e.db.BeginBatch(payment.FileMeta{Name: name, SHA256: "sha-" + name, Size: 1})
	if err != nil {
		e.t.Fatal(err)
	}
	for i, p := range pays {
		if err := l.Add(i+2, p); err != nil {
			e.t.Fatal(err)
		}
	}
	b, err := l.Commit(len(pays), 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// request is the create request submit would send for a row.
func request(r *payment.Row) echeck.CheckRequest {
	p := r.Payment
	return echeck.CheckRequest{Number: r.Number, Amount: p.Amount, Memo: p.Memo, Name: p.Name, Email: p.Email,
		Label: r.Label, BankAccount: p.BankAccount, BankRouting: p.BankRouting}
}

// created is the CheckResult submit records for a created check.
func created(c *echeck.Check) payment.CheckResult {
	t, _ := time.Parse(time.DateTime, c.Date)
	return payment.CheckResult{CheckID: c.CheckID, Status: payment.ParseStatus(c.Status), Created: t}
}

// submit does what submit does for one row: in flight, create at the
// sandbox, record the check. It returns the check id.
func (e *env) submit(k payment.RowKey) string {
	e.t.Helper()
	row, err := e.db.Send(k)
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := e.api.CreateCheck(context.Background(), request(row))
	if err != nil {
		e.t.Fatalf("create %s: %v", k, err)
	}
	if _, err := e.db.Created(k, created(c)); err != nil {
		e.t.Fatal(err)
	}
	return c.CheckID
}

// submitBatch submits every row of a batch with workers, so that the
// ledger's group commit keeps it fast; it returns check ids by line.
func (e *env) submitBatch(b payment.Batch, workers int) map[uint32]string {
	e.t.Helper()
	ids := map[uint32]string{}
	var mu sync.Mutex
	e.recordBatch(b, workers, func(row *payment.Row) (payment.CheckResult, error) {
		c, err := e.api.CreateCheck(context.Background(), request(row))
		if err != nil {
			return payment.CheckResult{}, err
		}
		mu.Lock()
		ids[row.Key.Line] = c.CheckID
		mu.Unlock()
		return created(c), nil
	})
	return ids
}

// recordBatch does for every row of a batch, with workers, what submit
// does: in flight, then the check that check returns recorded. check may
// create it at the sandbox, or replay one created for another ledger.
func (e *env) recordBatch(b payment.Batch, workers int, check func(*payment.Row) (payment.CheckResult, error)) {
	e.t.Helper()
	keys := e.keys(b)
	work := make(chan payment.RowKey)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				if err := e.recordRow(k, check); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		e.t.Fatal(err)
	}
}

// recordRow sends row k and records the check that check gives it.
func (e *env) recordRow(k payment.RowKey, check func(*payment.Row) (payment.CheckResult, error)) error {
	row, err := e.db.Send(k)
	if err != nil {
		return err
	}
	res, err := check(row)
	if err != nil {
		return fmt.Errorf("check of %s: %w", k, err)
	}
	_, err = e.db.Created(k, res)
	return err
}

// keys lists a batch's row keys in line order.
func (e *env) keys(b payment.Batch) []payment.RowKey {
	e.t.Helper()
	var ks []payment.RowKey
	err := e.db.Rows(b.ID, func(r *payment.Row) (bool, error) {
		ks = append(ks, r.Key)
		return true, nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return ks
}

// outside creates a check at the service that batchd knows nothing of.
func (e *env) outside(label, number string, cents money.Cents) string {
	e.t.Helper()
	c, err := e.api.CreateCheck(context.Background(), echeck.CheckRequest{Number: number, Amount: cents,
		Memo: "by hand", Name: "Someone Else", Email: "x@example.com", Label: label,
		BankAccount: "1111000016", BankRouting: "999900001"})
	if err != nil {
		e.t.Fatal(err)
	}
	return c.CheckID
}

// runner makes a Runner on the env's ledger, clock and reports directory.
func (e *env) runner(api API, o Options) *Runner {
	e.t.Helper()
	if api == nil {
		api = e.svc
	}
	if o.ReportsDir == "" {
		o.ReportsDir = e.dir
	}
	if o.Now == nil {
		o.Now = e.clock.Now
	}
	r, err := New(e.db, api, o)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// run runs reconcile over the default window and requires success.
func (e *env) run(o Options) *Summary {
	e.t.Helper()
	sum, err := e.runner(nil, o).Run(context.Background(), Window{})
	if err != nil {
		e.t.Fatalf("reconcile: %v", err)
	}
	return sum
}

// readCSV reads a report: it must start with the byte-order mark, end its
// lines with CRLF and quote every cell. The header line is returned first.
func readCSV(t testing.TB, path string) [][]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte(report.BOM)) {
		t.Fatalf("%s does not start with a byte-order mark", path)
	}
	body := raw[len(report.BOM):]
	if len(body) > 0 && !bytes.HasSuffix(body, []byte("\r\n")) {
		t.Fatalf("%s does not end with CRLF", path)
	}
	if bytes.Count(body, []byte("\n")) != bytes.Count(body, []byte("\r\n")) {
		t.Fatalf("%s has a line end that is not CRLF", path)
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// table turns a report into maps keyed by its header.
func table(t testing.TB, path string) []map[string]string {
	t.Helper()
	rows := readCSV(t, path)
	if len(rows) == 0 {
		t.Fatalf("%s is empty", path)
	}
	out := make([]map[string]string, 0, len(rows)-1)
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// reportPath is the path of a report of the run date d.
func (e *env) reportPath(kind string, d Date) string {
	return filepath.Join(e.dir, reportName(kind, d))
}

// dirOutbox is a fake payment.Outbox that writes into the folder dir of
// a local directory, atomically.
type dirOutbox struct {
	dir string
	mu  sync.Mutex
	n   int
}

func (o *dirOutbox) Upload(_ context.Context, dir, name string, r io.Reader) error {
	if strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("bad name %q", name)
	}
	if dir == "" || strings.Contains(dir, "..") {
		return fmt.Errorf("bad folder %q", dir)
	}
	target := filepath.Join(o.dir, filepath.FromSlash(dir))
	if err := os.MkdirAll(target, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(target, ".up-*")
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	o.mu.Lock()
	o.n++
	o.mu.Unlock()
	return os.Rename(f.Name(), filepath.Join(target, name))
}

// mustCents parses an amount cell.
func mustCents(t testing.TB, s string) money.Cents {
	t.Helper()
	c, err := money.Parse(s)
	if err != nil {
		t.Fatalf("amount %q: %v", s, err)
	}
	return c
}

// stamp is a time as the reports show it in loc; "" for the zero time.
func stamp(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	return t.In(loc).Format(time.DateTime)
}
