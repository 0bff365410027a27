package reconcile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/retry"
)

// faultTransport answers requests itself with an HTTP error before they
// reach the service, as an overloaded or broken service does: every other
// request when it has a base to send the others to, every request when it
// has none. The real client and its domain adapter read the answers, so
// the Runner meets the errors the service's own would give it.
type faultTransport struct {
	base   http.RoundTripper // nil: every request fails
	status int
	n      atomic.Int64
}

func (f *faultTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.n.Add(1)%2 == 1 || f.base == nil {
		if r.Body != nil {
			r.Body.Close()
		}
		body := `{"status":"error","message":"maintenance"}`
		return &http.Response{StatusCode: f.status, Status: fmt.Sprintf("%d %s", f.status, http.StatusText(f.status)),
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header:        http.Header{"Content-Type": {"application/json"}},
			Body:          io.NopCloser(strings.NewReader(body)),
			ContentLength: int64(len(body)), Request: r}, nil
	}
	return f.base.RoundTrip(r)
}

// serviceVia is the domain service over a client whose requests go
// through rt.
func (e *env) serviceVia(rt http.RoundTripper) API {
	e.t.Helper()
	c, err := echeck.New(apiwire.Options{BaseURL: e.url, Key: testKey, HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		e.t.Fatal(err)
	}
	return echeck.NewService(c)
}

// TestTransientErrorsAreRetried: with every other request failing, the run
// still completes with the same result.
func TestTransientErrorsAreRetried(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		ks := e.keys(e.load("twelve.csv", manyPayments(12)...))
		for _, k := range ks[:11] {
			e.submit(k)
		}
		if _, err := e.db.Send(ks[11]); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.Created(ks[11], payment.CheckResult{CheckID: "7d6c5b4a-3928-4716-a5b4-c3d2e1f0a9b8", Status: payment.StatusInProcess, Created: monday()}); err != nil {
			t.Fatal(err)
		}
		e.advance(3)
		api := &faultTransport{base: http.DefaultTransport, status: http.StatusServiceUnavailable}
		sum, err := e.runner(e.serviceVia(api), Options{PageSize: 5, Retry: retry.Policy{Base: time.Millisecond, Max: 2 * time.Millisecond}}).
			Run(context.Background(), Window{})
		if err != nil {
			t.Fatal(err)
		}
		if !sum.Consistent || sum.ChecksSeen != 11 || sum.StatusChanges != 11 || sum.Missing != 1 || sum.PagesRead != 3 {
			t.Fatalf("summary %+v", sum)
		}
		if api.n.Load() < 2*(3+1) {
			t.Errorf("only %d requests: the faults were not met", api.n.Load())
		}
	})
}

// TestRetriesAreBounded: a service that never recovers fails the run after
// MaxAttempts tries, naming the page.
func TestRetriesAreBounded(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		api := &faultTransport{status: http.StatusInternalServerError}
		_, err := e.runner(e.serviceVia(api), Options{Retry: retry.Policy{MaxAttempts: 3, Base: time.Millisecond, Max: time.Millisecond}}).
			Run(context.Background(), Window{})
		if err == nil || api.n.Load() != 3 || !strings.Contains(err.Error(), "page 1: gave up after 3 attempts") {
			t.Fatalf("error %v after %d calls", err, api.n.Load())
		}
	})
}

// TestInterruptedRunIsCompletedByTheNext stops a run in the middle of the
// walk. What it recorded stays; nothing is reported; the next run records
// the rest and reports everything.
func TestInterruptedRunIsCompletedByTheNext(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		ids := e.submitBatch(e.load("fifteen.csv", manyPayments(15)...), 4)
		e.advance(3) // every check is printed now
		ctx, cancel := context.WithCancel(context.Background())
		api := &hookAPI{API: e.svc, before: func(call int64) {
			if call == 3 {
				cancel()
			}
		}}
		sum, err := e.runner(api, Options{PageSize: 5, Concurrency: 1}).Run(ctx, Window{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted run: %v", err)
		}
		if sum.StatusChanges != 10 {
			t.Errorf("interrupted run recorded %d changes, want the 10 of its two pages", sum.StatusChanges)
		}
		if entries, _ := os.ReadDir(e.dir); len(entries) != 0 {
			t.Errorf("an interrupted run wrote %d files", len(entries))
		}
		sum = e.run(Options{PageSize: 5})
		if sum.StatusChanges != 5 || sum.Matched != 15 || !sum.Consistent {
			t.Fatalf("next run %+v", sum)
		}
		lines := table(t, e.reportPath("status", Date{2026, 3, 5}))
		var got, want []string
		for _, l := range lines {
			if l["status"] != "printed" {
				t.Errorf("line %s: %s", l["line"], l["status"])
			}
			got = append(got, l["check_id"])
		}
		for _, id := range ids {
			want = append(want, id)
		}
		sort.Strings(got)
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("status report checks %v, want %v", got, want)
		}
	})
}

func TestPruneKeepsRecentReportsAndForeignFiles(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC)
	files := map[string]bool{ // name -> survives
		"status-2026-03-31.csv":                       true,
		"settlement-2026-03-01.csv":                   true, // exactly 30 days old
		"exceptions-2026-02-28.csv":                   false,
		"funding-sources-2026-02-27.xlsx":             false,
		"funding-sources-2026-03-02.csv":              true,
		"status-2025-12-01.csv":                       false,
		"notes-2020-01-01.csv":                        true,
		"status-2020-01-01.csv.bak":                   true,
		".status-2026-03-30.csv.123.tmp":              false, // old temporary file
		".settlement-2026-03-31.csv.456.tmp":          true,  // one being written
		"status-2020-01-01.csv.d/":                    true,
		filepath.Join("sub", "status-2020-01-01.csv"): true,
	}
	for name := range files {
		p := filepath.Join(dir, name)
		if name[len(name)-1] == '/' {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := now.Add(-48 * time.Hour)
	os.Chtimes(filepath.Join(dir, ".status-2026-03-30.csv.123.tmp"), old, old)
	os.Chtimes(filepath.Join(dir, ".settlement-2026-03-31.csv.456.tmp"), now, now)
	n, err := prune(dir, DateOf(now), 30, now)
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("deleted %d files, want 4", n)
	}
	for name, survives := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if (err == nil) != survives {
			t.Errorf("%s: exists %v, want %v", name, err == nil, survives)
		}
	}
	if n, _ := prune(dir, DateOf(now), -1, now); n != 0 {
		t.Errorf("negative keep_days deleted %d files", n)
	}
}

func TestDefaultWindow(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		ny, err := time.LoadLocation("America/New_York")
		if err != nil {
			t.Fatal(err)
		}
		w, err := DefaultWindow(e.db, monday(), time.UTC, 60)
		if err != nil || w != (Window{Date{2026, 3, 1}, Date{2026, 3, 2}}) {
			t.Errorf("empty ledger: %s %v", w, err)
		}
		// 22:00 in New York is already tomorrow at the service (UTC).
		late := time.Date(2026, 3, 3, 3, 0, 0, 0, time.UTC)
		if w, _ := DefaultWindow(e.db, late, ny, 60); w != (Window{Date{2026, 3, 1}, Date{2026, 3, 3}}) {
			t.Errorf("late in New York: %s", w)
		}
		ks := e.keys(e.load("w.csv", pay(100, 16, "A"), pay(200, 16, "B")))
		e.submit(ks[0])
		e.advance(20)
		if _, err := e.db.Send(ks[1]); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.Doubt(ks[1], "lost"); err != nil {
			t.Fatal(err)
		}
		now := e.clock.Now()
		if w, _ := DefaultWindow(e.db, now, time.UTC, 60); w.From != (Date{2026, 3, 2}) {
			t.Errorf("oldest open check: %s", w)
		}
		if w, _ := DefaultWindow(e.db, now, time.UTC, 10); w.From != (Date{2026, 3, 12}) {
			t.Errorf("lookback cap: %s", w)
		}
		// The open check is settled; the row in doubt since day 20 remains.
		if _, err := e.db.ObserveStatuses([]payment.Observation{{Key: ks[0], Status: payment.StatusDeposited}}, now); err != nil {
			t.Fatal(err)
		}
		e.advance(5)
		if w, _ := DefaultWindow(e.db, e.clock.Now(), time.UTC, 60); w.From != (Date{2026, 3, 22}) {
			t.Errorf("row in doubt: %s", w)
		}
	})
}

type failingOutbox struct{}

func (failingOutbox) Upload(context.Context, string, string, io.Reader) error {
	return errors.New("connection refused")
}

// TestUploadFailureKeepsLocalReports: a dead outbox fails the run, naming
// the file, but the reports stay in the local directory.
func TestUploadFailureKeepsLocalReports(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		e.submit(e.keys(e.load("a.csv", pay(100, 16, "A")))[0])
		sum, err := e.runner(nil, Options{Outbox: report.Destination{Outbox: failingOutbox{}, Dir: "/outbox"}}).Run(context.Background(), Window{})
		if err == nil || !strings.Contains(err.Error(), "deliver status-2026-03-02.csv to /outbox: connection refused") {
			t.Fatalf("error %v", err)
		}
		for _, p := range sum.Reports {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("local report: %v", err)
			}
		}
	})
}

// TestReportTimesAreLocal: times and deposit days are shown in the
// configured zone, not the service's.
func TestReportTimesAreLocal(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	seen := time.Date(2026, 3, 3, 3, 30, 0, 0, time.UTC) // 22:30 on 2 March in New York
	rec := &record{status: "deposited", created: monday(), statusSeen: seen, depositedSeen: seen}
	if got := rec.depositDay(ny).String(); got != "2026-03-02" {
		t.Errorf("deposit day %s", got)
	}
	if got := local(rec.created, ny).Format(time.DateTime); got != "2026-03-02 05:00:00" {
		t.Errorf("created %s", got)
	}
	rec.depositedSeen = time.Time{} // deposited when batchd first recorded the check
	if got := rec.depositDay(ny).String(); got != "2026-03-02" {
		t.Errorf("deposit day without DepositedSeenAt: %s", got)
	}
	if got := (&record{status: "printed", statusSeen: seen}).depositDay(ny); !got.IsZero() {
		t.Errorf("deposit day of a printed check: %s", got)
	}
}

// TestExplicitWindow: an operator may name the dates to list; checks
// created outside them are fetched by id when they are not final.
func TestExplicitWindow(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		id := e.submit(e.keys(e.load("a.csv", pay(100, 16, "A")))[0])
		r := e.runner(nil, Options{})
		if _, err := r.Run(context.Background(), Window{Date{2026, 3, 2}, Date{2026, 3, 1}}); err == nil {
			t.Fatal("a window ending before it starts was accepted")
		}
		sum, err := r.Run(context.Background(), Window{Date{2026, 2, 1}, Date{2026, 2, 28}})
		if err != nil {
			t.Fatal(err)
		}
		if sum.ChecksSeen != 0 || sum.Confirmed != 1 || sum.Matched != 1 || sum.StatusRows != 1 {
			t.Fatalf("summary %+v", sum)
		}
		if l := table(t, sum.Reports[0]); len(l) != 1 || l[0]["check_id"] != id {
			t.Errorf("status report %v", l)
		}
	})
}
