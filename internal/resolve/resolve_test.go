package resolve

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/state"
)

const key = "sk_test_resolve_0123456789abcdef"

// TestMain stops the shared PostgreSQL server (pgtest) the rigs' ledgers
// on that backend live in.
func TestMain(m *testing.M) { pgtest.Main(m) }

// rig is a ledger of either backend (ledgertest) and a sandbox (exact or
// quirky) behind the real client, on batchd's test clock.
type rig struct {
	db    *state.DB
	api   *echeck.Client
	svc   payment.Service
	clock *clocktest.Clock
	files int // batches loaded, to name each file apart
}

// newRig is a rig on backend, its sandbox exact or quirky.
func newRig(t *testing.T, backend string, quirks bool) *rig {
	t.Helper()
	return newRigWith(t, backend, clocktest.New(clocktest.Monday), sandbox.Options{Quirks: quirks})
}

// newRigWith is a rig whose ledger runs on clock and whose sandbox is
// configured by opts (its Now defaulting to clock's).
func newRigWith(t *testing.T, backend string, clock *clocktest.Clock, opts sandbox.Options) *rig {
	t.Helper()
	return newRigState(t, backend, clock, opts, state.Options{})
}

// newRigState is newRigWith with a ledger opened with stOpts (a send
// window), on clock.
func newRigState(t *testing.T, backend string, clock *clocktest.Clock, opts sandbox.Options, stOpts state.Options) *rig {
	t.Helper()
	stOpts.Now = clock.Now
	db := ledgertest.Open(t, backend, stOpts)
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	srv := httptest.NewServer(sandbox.New(opts))
	t.Cleanup(srv.Close)
	api, err := echeck.New(apiwire.Options{BaseURL: srv.URL, Key: key, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{db: db, api: api, svc: echeck.NewService(api), clock: clock}
}

// inDoubt loads rows with the given label and numbers and puts them in
// doubt, as a lost answer would.
func (r *rig) inDoubt(t *testing.T, label string, numbers ...string) []*payment.Row {
	t.Helper()
	r.files++
	l, err := r.db.BeginBatch(payment.FileMeta{Name: fmt.Sprintf("f%d.csv", r.files), SHA256: fmt.Sprintf("%064d", r.files)})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range numbers {
		p := payment.Payment{Number: n, Label: label, Amount: money.Cents(1000 + i), Memo: "m", Name: "N", Email: "payer@example.com",
			BankRouting: "999900001", BankAccount: fmt.Sprintf("11110000%02d", 1+i%10)}
		if err := l.Add(i+2, p); err != nil {
			t.Fatal(err)
		}
	}
	b, err := l.Commit(len(numbers), 0)
	if err != nil {
		t.Fatal(err)
	}
	var rows []*payment.Row
	err = r.db.Rows(b.ID, func(row *payment.Row) (bool, error) {
		if _, err := r.db.Send(row.Key); err != nil {
			return false, err
		}
		got, err := r.db.Doubt(row.Key, "answer lost")
		rows = append(rows, got)
		return err == nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// create makes the row's check at the service, as the lost request did.
func (r *rig) create(t *testing.T, row *payment.Row) {
	t.Helper()
	if _, err := r.svc.CreateCheck(context.Background(), row); err != nil {
		t.Fatal(err)
	}
}

// pastDeadlines moves the rig's clock past the time a lookup may release
// each of rows (its send-by deadline plus the margin): a shared ledger
// gives every create intent a deadline (bbolt's none), and a resolver
// releases nothing before it.
func (r *rig) pastDeadlines(rows []*payment.Row) {
	res := r.resolver()
	for _, row := range rows {
		if at := res.ReleasableAt(row); at.After(r.clock.Now()) {
			r.clock.Set(at)
		}
	}
}

func (r *rig) resolver() *Resolver {
	return &Resolver{Ledger: r.db, Service: r.svc, Now: r.clock.Now,
		Retry: retry.Policy{Base: time.Millisecond, Max: 10 * time.Millisecond, MaxAttempts: 3}}
}

func TestResolveFindsOrReleases(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		for _, quirks := range []bool{false, true} {
			t.Run(fmt.Sprintf("quirks=%v", quirks), func(t *testing.T) {
				r := newRig(t, backend, quirks)
				rows := r.inDoubt(t, "Payroll-Nov", "0000101", "0000102", "0000103")
				r.create(t, rows[0])
				r.create(t, rows[2])
				r.pastDeadlines(rows)
				out, err := r.resolver().Resolve(context.Background(), rows)
				if err != nil {
					t.Fatal(err)
				}
				if out.Found != 2 || out.Released != 1 {
					t.Fatalf("outcome %+v, want 2 found and 1 released", out)
				}
				want := []payment.RowState{payment.Submitted, payment.Pending, payment.Submitted}
				for i, row := range rows {
					got, err := r.db.Row(row.Key)
					if err != nil {
						t.Fatal(err)
					}
					if got.State != want[i] {
						t.Errorf("row %d is %s, want %s", i, got.State, want[i])
					}
				}
			})
		}
	})
}

// A check another row owns never resolves a row in doubt, even with the
// same identity: the row is released and sent again, never bound to it.
func TestResolveNeverTakesAnotherRowsCheck(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, true)
		first := r.inDoubt(t, "L", "7")[0]
		r.create(t, first)
		if out, err := r.resolver().Resolve(context.Background(), []*payment.Row{first}); err != nil || out.Found != 1 {
			t.Fatalf("first: %+v %v", out, err)
		}
		// A later file reuses label and number with the same amount (line 2
		// again, so the same amount).
		second := r.inDoubt(t, "L", "0007")[0]
		r.pastDeadlines([]*payment.Row{second})
		out, err := r.resolver().Resolve(context.Background(), []*payment.Row{second})
		if err != nil {
			t.Fatal(err)
		}
		if out.Found != 0 || out.Released != 1 {
			t.Fatalf("outcome %+v: the first row's check must not be bound to the second", out)
		}
	})
}

// Reconcile's Bind and submit's Resolve racing on the same rows never
// both change a row: each row ends bound to exactly its own check, once.
func TestBindAndResolveRace(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, true)
		rows := r.inDoubt(t, "Race", "001", "002", "003", "004", "005", "006")
		for _, row := range rows {
			r.create(t, row)
		}
		var listed []payment.Check
		page, err := r.svc.ListChecks(context.Background(), payment.CheckQuery{Limit: 100, Page: 1})
		if err != nil {
			t.Fatal(err)
		}
		listed = page.Checks
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := r.resolver().Resolve(context.Background(), rows)
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := Bind(context.Background(), r.db, rows, listed, "found by reconcile")
			errs <- err
		}()
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		seen := map[string]bool{}
		for _, row := range rows {
			got, err := r.db.Row(row.Key)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != payment.Submitted || seen[got.CheckID] {
				t.Fatalf("row %s: state %s check %q (seen before: %v)", got.Key, got.State, got.CheckID, seen[got.CheckID])
			}
			seen[got.CheckID] = true
		}
		if len(seen) != len(rows) {
			t.Fatalf("%d checks bound for %d rows", len(seen), len(rows))
		}
	})
}
