package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

// hookAPI runs before on every list call, then reads the real list.
type hookAPI struct {
	API
	calls  atomic.Int64
	before func(call int64)
}

func (h *hookAPI) ListChecks(ctx context.Context, p payment.CheckQuery) (*payment.CheckPage, error) {
	h.before(h.calls.Add(1))
	return h.API.ListChecks(ctx, p)
}

// TestWalkSeesChecksCreatedDuringIt creates checks at the service while
// the walk runs, some by batchd (as a concurrent submit would) and some
// outside it, between page reads: none may be missed or counted twice.
func TestWalkSeesChecksCreatedDuringIt(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		for _, conc := range []int{1, 4} {
			t.Run(fmt.Sprintf("concurrency=%d", conc), func(t *testing.T) {
				e := newEnv(t, backend, monday(), nil)
				batch := e.load("many.csv", manyPayments(23)...)
				ids := e.submitBatch(batch, 4)
				late := e.load("late.csv", pay(4321, 16, "Late"), pay(4322, 16, "Later"))
				lateKeys := e.keys(late)

				var mu sync.Mutex
				var outsiders []string
				lateIDs := map[string]bool{}
				api := &hookAPI{API: e.svc, before: func(call int64) {
					if call != 2 && call != 3 && call != 5 {
						return
					}
					for j := range 2 {
						id := e.outside("walk-"+fmt.Sprint(call), fmt.Sprint(900+10*call+int64(j)), 5000)
						mu.Lock()
						outsiders = append(outsiders, id)
						mu.Unlock()
					}
					if call <= 3 {
						id := e.submit(lateKeys[call-2])
						mu.Lock()
						lateIDs[id] = true
						mu.Unlock()
					}
				}}
				var logs bytes.Buffer
				sum, err := e.runner(api, Options{PageSize: 5, Concurrency: conc,
					Logger: slog.New(slog.NewTextHandler(&logs, nil))}).Run(context.Background(), Window{})
				if err != nil {
					t.Fatal(err)
				}
				if !sum.Consistent || sum.ChecksSeen != 23+2+6 || sum.Unknown != 6 || sum.Matched != 25 || sum.Confirmed != 0 {
					t.Fatalf("summary %+v\nlog:\n%s", sum, logs.String())
				}
				t.Logf("passes %d pages %d", sum.Passes, sum.PagesRead)
				// Read one by one, the walk follows the growth page by page;
				// read four at a time, a page may come back before a growth
				// it missed, and the walk must say why it reads again.
				if sum.Passes > 1 && !strings.Contains(logs.String(), "check list grew while it was read") {
					t.Errorf("%d passes without saying why\n%s", sum.Passes, logs.String())
				}
				seen := map[string]int{}
				for _, l := range table(t, e.reportPath("status", Date{2026, 3, 2})) {
					seen[l["check_id"]]++
				}
				for _, id := range ids {
					if seen[id] != 1 {
						t.Errorf("check %s on %d status lines", id, seen[id])
					}
				}
				for id := range lateIDs {
					if seen[id] != 1 {
						t.Errorf("check %s created by submit mid-walk on %d status lines", id, seen[id])
					}
				}
				if len(seen) != 25 {
					t.Errorf("status report has %d checks, want 25", len(seen))
				}
				unknown := map[string]int{}
				for _, x := range table(t, e.reportPath("exceptions", Date{2026, 3, 2})) {
					if x["kind"] == KindUnknown {
						unknown[x["check_id"]]++
					}
				}
				for _, id := range outsiders {
					if unknown[id] != 1 {
						t.Errorf("outside check %s reported %d times", id, unknown[id])
					}
				}
			})
		}
	})
}

// manyPayments makes n payments of distinct amounts on a passing account.
func manyPayments(n int) []payment.Payment {
	out := make([]payment.Payment, n)
	for i := range out {
		out[i] = pay(money.Cents(100+i), 16, fmt.Sprintf("Payee %d", i))
	}
	return out
}

// shiftingAPI serves the real list, less the checks it has been told to
// hide, as if the service had deleted them: every later check moves up a
// place, across page boundaries. With keepTotal it still counts them, as a
// service would that under-delivers its pages.
type shiftingAPI struct {
	API
	keepTotal bool
	calls     atomic.Int64
	after     func(call int64, s *shiftingAPI)

	mu     sync.Mutex
	hidden map[string]bool
}

func (s *shiftingAPI) hide(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hidden == nil {
		s.hidden = map[string]bool{}
	}
	s.hidden[id] = true
}

func (s *shiftingAPI) ListChecks(ctx context.Context, p payment.CheckQuery) (*payment.CheckPage, error) {
	defer func() {
		if s.after != nil {
			s.after(s.calls.Add(1), s)
		}
	}()
	s.mu.Lock()
	n := len(s.hidden)
	s.mu.Unlock()
	if n == 0 {
		return s.API.ListChecks(ctx, p)
	}
	var all []payment.Check
	total := 0
	for page := 1; ; page++ {
		q := p
		q.Page, q.Limit = page, 100
		pg, err := s.API.ListChecks(ctx, q)
		if err != nil {
			return nil, err
		}
		total = pg.Total
		s.mu.Lock()
		for _, c := range pg.Checks {
			if !s.hidden[c.ID] {
				all = append(all, c)
			}
		}
		s.mu.Unlock()
		if page >= pg.LastPage {
			break
		}
	}
	if !s.keepTotal {
		total = len(all)
	}
	lo, hi := min(len(all), (p.Page-1)*p.Limit), min(len(all), p.Page*p.Limit)
	return &payment.CheckPage{CurrentPage: p.Page, LastPage: max(1, ceilDiv(total, p.Limit)),
		PerPage: p.Limit, Total: total, Checks: all[lo:hi]}, nil
}

// listAll reads the whole list, oldest first, as the service orders it.
func (e *env) listAll() []echeck.Check {
	e.t.Helper()
	pg, err := e.api.ListChecks(context.Background(), echeck.ListParams{Limit: 100, Sort: "date", Direction: "ASC"})
	if err != nil {
		e.t.Fatal(err)
	}
	return pg.Checks
}

// TestWalkRereadsWhenListShrinks deletes a check of page 1 right after page
// 1 was read, so that the first check of page 2 moves onto page 1: a walk
// that did not notice would miss it.
func TestWalkRereadsWhenListShrinks(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		for _, k := range e.keys(e.load("twelve.csv", manyPayments(12)...)) {
			e.submit(k)
		}
		outsider := e.outside("by-hand", "777", 1500) // 13th in the list: page 3
		order := e.listAll()
		api := &shiftingAPI{API: e.svc, after: func(call int64, s *shiftingAPI) {
			if call == 1 {
				s.hide(order[1].CheckID)
			}
		}}
		var logs bytes.Buffer
		sum, err := e.runner(api, Options{PageSize: 5, Concurrency: 1,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))}).Run(context.Background(), Window{})
		if err != nil {
			t.Fatal(err)
		}
		if !sum.Consistent || sum.Passes != 2 || !strings.Contains(logs.String(), "shrank") {
			t.Fatalf("summary %+v\n%s", sum, logs.String())
		}
		// The check that moved up a page was seen, and so was the outsider.
		if sum.ChecksSeen != 13 || sum.Matched != 12 || sum.Unknown != 1 || sum.Confirmed != 0 {
			t.Fatalf("summary %+v", sum)
		}
		excs := table(t, e.reportPath("exceptions", Date{2026, 3, 2}))
		if len(excs) != 1 || excs[0]["check_id"] != outsider {
			t.Errorf("exceptions %v", excs)
		}
	})
}

// TestWalkThatCannotCompleteSaysSo serves pages that never add up to their
// total: the walk re-reads a bounded number of times, then reports the
// walk as incomplete instead of pretending.
func TestWalkThatCannotCompleteSaysSo(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		for _, k := range e.keys(e.load("seven.csv", manyPayments(7)...)) {
			e.submit(k)
		}
		ghost := e.outside("ghost", "13", 1300)
		api := &shiftingAPI{API: e.svc, keepTotal: true}
		api.hide(ghost)
		var logs bytes.Buffer
		sum, err := e.runner(api, Options{PageSize: 3, MaxPasses: 3,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))}).Run(context.Background(), Window{})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Consistent || sum.Passes != 3 || sum.ChecksSeen != 7 || !strings.Contains(logs.String(), "giving up") {
			t.Fatalf("summary %+v\n%s", sum, logs.String())
		}
		excs := table(t, e.reportPath("exceptions", Date{2026, 3, 2}))
		if len(excs) != 1 || excs[0]["kind"] != KindIncomplete || !strings.Contains(excs[0]["detail"], "7 distinct checks seen, the list reported 8") {
			t.Errorf("exceptions %v", excs)
		}
	})
}
