package reconcile

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
)

// reversedAPI lists each page's checks in reverse, and the pages from the
// last, so that the walk looks at the rows against the ledger's order.
type reversedAPI struct {
	API
}

func (r reversedAPI) ListChecks(ctx context.Context, q payment.CheckQuery) (*payment.CheckPage, error) {
	pg, err := r.API.ListChecks(ctx, q)
	if err == nil {
		slices.Reverse(pg.Checks)
	}
	return pg, err
}

// TestStatusReportInLedgerOrderWhateverTheWalkOrder: the status report is
// written while the walk runs, yet its lines come in batch and line order
// with each row's status as the walk recorded it, whatever order the
// checks come in; a row whose check the list lacks is fetched and
// written in its place.
func TestStatusReportInLedgerOrderWhateverTheWalkOrder(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		first := e.submitBatch(e.load("a.csv", manyPayments(12)...), 4)
		e.submitBatch(e.load("b.csv", manyPayments(9)...), 4)
		e.advance(3) // every check is printed now
		hidden := first[5]
		api := &hiding{API: reversedAPI{e.svc}, id: hidden}
		sum, err := e.runner(api, Options{PageSize: 4, Concurrency: 3}).Run(context.Background(), Window{})
		if err != nil {
			t.Fatal(err)
		}
		if sum.StatusRows != 21 || sum.Confirmed != 1 || sum.Matched != 21 || sum.StatusChanges != 21 {
			t.Fatalf("summary %+v", sum)
		}
		lines := table(t, e.reportPath("status", Date{2026, 3, 5}))
		var keys [][2]int
		for _, l := range lines {
			b, _ := strconv.Atoi(l["batch"])
			n, _ := strconv.Atoi(l["line"])
			keys = append(keys, [2]int{b, n})
			if l["status"] != "printed" {
				t.Errorf("line %v: status %s", keys[len(keys)-1], l["status"])
			}
		}
		if len(keys) != 21 || !slices.IsSortedFunc(keys, func(a, b [2]int) int {
			if a[0] != b[0] {
				return a[0] - b[0]
			}
			return a[1] - b[1]
		}) {
			t.Fatalf("status lines out of order: %v", keys)
		}
	})
}

// TestStatusPassReadsAheadTheRowsItDidNotKeep: when the walk runs ahead
// of the status report's pass by more records than the matcher keeps,
// the pass reads the rows it lacks several at a time (RowsByKey), never
// one by one, and each line still shows the status the walk recorded:
// no row is read before the walk's observation of it committed.
func TestStatusPassReadsAheadTheRowsItDidNotKeep(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		e.submitBatch(e.load("a.csv", manyPayments(12)...), 4)
		e.submitBatch(e.load("b.csv", manyPayments(9)...), 4)
		e.advance(3) // every check is printed now
		r := e.runner(reversedAPI{e.svc}, Options{PageSize: 4, Concurrency: 3})
		counted := newCountedLedger(r.db)
		r.db, r.keep = counted, 1
		sum, err := r.Run(context.Background(), Window{})
		if err != nil {
			t.Fatal(err)
		}
		if sum.StatusRows != 21 || sum.Matched != 21 || sum.StatusChanges != 21 {
			t.Fatalf("summary %+v", sum)
		}
		t.Logf("ledger calls: %s", counted)
		if n, ahead := counted.n["Row"].Load(), counted.n["RowsByKey"].Load(); n != 0 || ahead == 0 || ahead >= 21 {
			t.Fatalf("rows read alone %d, reads ahead %d; want none alone, and fewer reads than rows", n, ahead)
		}
		for _, l := range table(t, e.reportPath("status", Date{2026, 3, 5})) {
			if l["status"] != "printed" {
				t.Errorf("batch %s line %s: status %s, want the walk's printed", l["batch"], l["line"], l["status"])
			}
		}
	})
}

// hiding leaves one check out of every list page.
type hiding struct {
	API
	id string
}

func (h *hiding) ListChecks(ctx context.Context, q payment.CheckQuery) (*payment.CheckPage, error) {
	pg, err := h.API.ListChecks(ctx, q)
	if err == nil {
		pg.Checks = slices.DeleteFunc(pg.Checks, func(c payment.Check) bool { return c.ID == h.id })
		if pg.Total > 0 {
			pg.Total--
		}
	}
	return pg, err
}
