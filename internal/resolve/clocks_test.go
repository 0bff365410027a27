package resolve

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/sandbox"
)

// eastern is US Eastern time, the zone a service may date its checks in.
func eastern(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatalf("load America/New_York (the time zone database is needed): %v", err)
	}
	return loc
}

// serviceDay is the day the service's clock shows when batchd's shows at:
// skewDays from at's day in the service's zone, for sandbox.Options.Date.
func serviceDay(at time.Time, loc *time.Location, skewDays int) time.Time {
	y, m, d := at.In(loc).Date()
	return time.Date(y, m, d+skewDays, 0, 0, 0, 0, time.UTC)
}

// TestResolveAcrossClocks runs the lookup of rows in doubt against a
// service whose clock is 1 and 3 days ahead of batchd's and behind it,
// dating checks in UTC or US Eastern time, with batchd's clock at 23:30
// and 00:30 UTC (creates crossing midnight), exact and quirky, and the
// lookup run three days after the creates: every row whose check exists
// is bound, and only the row without one is released.
func TestResolveAcrossClocks(t *testing.T) {
	ny := eastern(t)
	monday := clocktest.Monday
	starts := []struct {
		name string
		at   time.Time
	}{
		{"23:30UTC", time.Date(monday.Year(), monday.Month(), monday.Day(), 23, 30, 0, 0, time.UTC)},
		{"00:30UTC", time.Date(monday.Year(), monday.Month(), monday.Day()+1, 0, 30, 0, 0, time.UTC)},
	}
	for _, quirks := range []bool{false, true} {
		for _, loc := range []*time.Location{time.UTC, ny} {
			for _, skew := range []int{-3, -1, 1, 3} {
				for _, st := range starts {
					name := fmt.Sprintf("quirks=%v/%s/service%+dd/%s", quirks, loc, skew, st.name)
					t.Run(name, func(t *testing.T) {
						clock := clocktest.New(st.at)
						r := newRigWith(t, ledgertest.Bbolt, clock, sandbox.Options{Quirks: quirks, Location: loc, Date: serviceDay(st.at, loc, skew)})
						resolveAcross(t, r, skew)
					})
				}
			}
		}
	}
}

// resolveAcross puts five rows in doubt, makes the checks of four of them
// twenty minutes apart (with another file's look-alike checks between),
// lets three days pass on both clocks and resolves.
func resolveAcross(t *testing.T, r *rig, skew int) {
	t.Helper()
	ctx := context.Background()
	rows := r.inDoubt(t, "Payroll-Nov", "0000101", "0000102", "0000103", "0000104", "0000105")
	others := r.inDoubt(t, "payroll-nov-2", "0000101", "0000102")
	made := map[payment.RowKey]bool{}
	for i, row := range rows {
		r.clock.Advance(20 * time.Minute)
		if i == 2 {
			continue // its request never reached the service
		}
		r.create(t, row)
		made[row.Key] = true
		if i < len(others) {
			r.create(t, others[i])
		}
	}
	// The service dates the checks on its own day, which is not batchd's.
	page, err := r.svc.ListChecks(ctx, payment.CheckQuery{Label: "Payroll-Nov", Limit: 100, Page: 1})
	if err != nil || len(page.Checks) == 0 {
		t.Fatalf("list: %v (%d checks)", err, len(page.Checks))
	}
	if d := page.Checks[0].Created.Sub(rows[0].AttemptAt); d < time.Duration(skew)*24*time.Hour-6*time.Hour || d > time.Duration(skew)*24*time.Hour+6*time.Hour {
		t.Fatalf("check dated %s for an attempt at %s: the service's clock is not %+d days off", page.Checks[0].Created, rows[0].AttemptAt, skew)
	}
	r.clock.Advance(3 * 24 * time.Hour)
	out, err := r.resolver().Resolve(ctx, rows)
	if err != nil {
		t.Fatal(err)
	}
	if out.Found != len(made) || out.Released != len(rows)-len(made) {
		t.Errorf("outcome %+v, want %d found and %d released", out, len(made), len(rows)-len(made))
	}
	for _, row := range rows {
		got, err := r.db.Row(row.Key)
		if err != nil {
			t.Fatal(err)
		}
		want := payment.Pending
		if made[row.Key] {
			want = payment.Submitted
		}
		if got.State != want {
			t.Errorf("%s (check made: %v) is %s, want %s", row.Key, made[row.Key], got.State, want)
		}
	}
}

// A service whose dates show its clock more than SkewBound behind
// batchd's may date a lost check before any range batchd can trust: the
// row stays in doubt and the lookup says why, rather than release it.
func TestResolveRefusesBeyondSkewBound(t *testing.T) {
	at := clocktest.Monday
	r := newRigWith(t, ledgertest.Bbolt, clocktest.New(at), sandbox.Options{Date: serviceDay(at, time.UTC, -10)})
	ctx := context.Background()
	rows := r.inDoubt(t, "Far", "1", "2")
	chk, err := r.svc.CreateCheck(ctx, rows[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.db.Created(rows[0].Key, payment.ResultOf(chk, "")); err != nil {
		t.Fatal(err)
	}
	out, err := r.resolver().Resolve(ctx, rows[1:])
	if !errors.Is(err, ErrSkew) || !errors.Is(err, ErrLookup) {
		t.Fatalf("Resolve: %+v, %v; want ErrSkew", out, err)
	}
	if out.Released != 0 {
		t.Errorf("released %d rows", out.Released)
	}
	t.Log(err)
	got, err := r.db.Row(rows[1].Key)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != payment.InDoubt {
		t.Errorf("row is %s, want in_doubt", got.State)
	}
	// A file whose every row is in doubt has no evidence of its own: an
	// earlier file's checks speak for the service's clock.
	alone := r.inDoubt(t, "Far-2", "9")
	if out, err := r.resolver().Resolve(ctx, alone); !errors.Is(err, ErrSkew) || out.Released != 0 {
		t.Fatalf("Resolve of a file all in doubt: %+v, %v; want ErrSkew", out, err)
	}
}

// A Resolver built without batchd's clock looks nothing up and releases
// nothing.
func TestResolveWithoutClock(t *testing.T) {
	r := newRig(t, ledgertest.Bbolt, false)
	rows := r.inDoubt(t, "L", "1")
	res := r.resolver()
	res.Now = nil
	if _, err := res.Resolve(context.Background(), rows); !errors.Is(err, ErrNoClock) {
		t.Fatalf("Resolve: %v, want ErrNoClock", err)
	}
	got, err := r.db.Row(rows[0].Key)
	if err != nil || got.State != payment.InDoubt {
		t.Fatalf("row %v %v, want in_doubt", got.State, err)
	}
}

// The lookup's range starts SkewBound and a day before the earliest
// attempt's UTC day and has no end; with an attempt missing, no start.
func TestWindow(t *testing.T) {
	at := time.Date(2026, 3, 3, 0, 30, 0, 0, time.UTC)
	rows := []*payment.Row{{AttemptAt: at.Add(time.Hour)}, {AttemptAt: at}}
	if got, anchor := window(rows, at.Add(72*time.Hour)); got != "2026-02-23" || !anchor.Equal(at) {
		t.Errorf("window %q from %v, want 2026-02-23 from %v", got, anchor, at)
	}
	if got, anchor := window(rows, at.Add(-48*time.Hour)); got != "2026-02-21" || !anchor.Equal(at.Add(-48*time.Hour)) {
		t.Errorf("window with batchd's clock set back %q from %v, want 2026-02-21 from now", got, anchor)
	}
	if got, anchor := window(append(rows, &payment.Row{}), at); got != "" || !anchor.IsZero() {
		t.Errorf("window with an attempt unknown %q from %v, want none", got, anchor)
	}
}

// A row without a check is released only after a complete walk: when no
// page of the list can be read, the row stays in doubt and the lookup
// fails, whatever the clocks.
func TestResolveReleasesOnlyAfterCompleteWalk(t *testing.T) {
	at := clocktest.NewYearsEve
	r := newRigWith(t, ledgertest.Bbolt, clocktest.New(at), sandbox.Options{ErrorRate: 1, StartDays: -3, Location: eastern(t)})
	rows := r.inDoubt(t, "Unread", "1")
	out, err := r.resolver().Resolve(context.Background(), rows)
	if !errors.Is(err, ErrLookup) || out.Released != 0 {
		t.Fatalf("Resolve: %+v, %v; want ErrLookup and nothing released", out, err)
	}
	got, err := r.db.Row(rows[0].Key)
	if err != nil || got.State != payment.InDoubt {
		t.Fatalf("row %v %v, want in_doubt", got.State, err)
	}
}

// When batchd's own clock ran ahead as it sent (and has been set right
// since), the service's dates look far behind the recorded attempts: the
// range starts from batchd's corrected now, the check made then is found,
// and the row without one is released, not held for ever by a skew that
// the range already covers.
func TestResolveAfterBatchdClockSetBack(t *testing.T) {
	real := clocktest.New(clocktest.Monday)
	batchd := clocktest.New(clocktest.Monday.Add(10 * 24 * time.Hour))
	r := newRigWith(t, ledgertest.Bbolt, batchd, sandbox.Options{Now: real.Now})
	ctx := context.Background()
	rows := r.inDoubt(t, "Ahead", "1", "2", "3")
	chk, err := r.svc.CreateCheck(ctx, rows[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.db.Created(rows[0].Key, payment.ResultOf(chk, "")); err != nil {
		t.Fatal(err)
	}
	r.create(t, rows[1])
	real.Advance(time.Hour)
	batchd.Set(real.Now())
	out, err := r.resolver().Resolve(ctx, rows[1:])
	if err != nil || out.Found != 1 || out.Released != 1 {
		t.Fatalf("Resolve: %+v, %v; want 1 found and 1 released", out, err)
	}
}

// A service any number of days ahead of batchd dates its checks after
// batchd's now: the range has no end, so the check is found, and the row
// without one is released (a service ahead cannot hide a check).
func TestResolveServiceFarAhead(t *testing.T) {
	at := clocktest.Friday
	r := newRigWith(t, ledgertest.Bbolt, clocktest.New(at), sandbox.Options{StartDays: 30, Quirks: true})
	rows := r.inDoubt(t, "Ahead", "1", "2")
	r.create(t, rows[0])
	out, err := r.resolver().Resolve(context.Background(), rows)
	if err != nil || out.Found != 1 || out.Released != 1 {
		t.Fatalf("Resolve: %+v, %v; want 1 found and 1 released", out, err)
	}
}
