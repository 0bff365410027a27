package state

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
)

func TestFundingSourceOwnership(t *testing.T) {
	d := open(t, t.TempDir())
	b := loadSources(t, d, "src.csv", payment.KindSources, srcReq(1), srcReq(2))
	ka, kb := payment.RowKey{Batch: b.ID, Line: 2}, payment.RowKey{Batch: b.ID, Line: 3}
	submitSource(t, d, ka, "src-1", funding.StatusPending)

	d.SendSource(kb, nil)
	if _, err := d.SourceCreated(kb, funding.Result{SourceID: "src-1", Status: funding.StatusPending}); !errors.Is(err, payment.ErrCheckOwned) {
		t.Fatalf("a source owned by another row: %v, want ErrCheckOwned", err)
	}
	if r, _ := d.SourceRow(kb); r.State != payment.InFlight || r.SourceID != "" {
		t.Fatalf("the refused row changed: %+v", r)
	}
	bb, _ := d.Batch(b.ID)
	if bb.Counts[payment.InFlight] != 1 || bb.Counts[payment.Submitted] != 1 {
		t.Fatalf("counts after a refusal %v", bb.Counts)
	}
	owners, err := d.SourceOwners([]string{"src-1", "src-x"})
	if err != nil || !reflect.DeepEqual(owners, map[string]payment.RowKey{"src-1": ka}) {
		t.Fatalf("owners %v %v", owners, err)
	}

	// Two verifications of src-1 (a second file, say) both settle, and
	// neither takes the source from the row that created it.
	v := loadSources(t, d, "verify.csv", payment.KindVerifications, verifyReq("src-1"), verifyReq("src-1"))
	for line := uint32(2); line <= 3; line++ {
		kv := payment.RowKey{Batch: v.ID, Line: line}
		d.SendSource(kv, nil)
		r, err := d.SourceCreated(kv, funding.Result{SourceID: "src-1", Status: funding.StatusVerified})
		if err != nil || r.State != payment.Submitted || r.Status != funding.StatusVerified {
			t.Fatalf("verification %s: %+v %v", kv, r, err)
		}
	}
	if owners, _ := d.SourceOwners([]string{"src-1"}); owners["src-1"] != ka {
		t.Fatalf("a verification took the source: %v", owners)
	}
	// The verifications are not tracked: their status is verified.
	if got := srcKeys(t, d.TrackedSourceRows); !reflect.DeepEqual(got, []payment.RowKey{ka}) {
		t.Fatalf("tracked %v", got)
	}
	rep := wantInvariants(t, d)
	if rep.Sources != 1 || rep.SourceRows != 4 {
		t.Fatalf("report: %d sources, %d funding rows", rep.Sources, rep.SourceRows)
	}
}

func TestObserveSources(t *testing.T) {
	d := open(t, t.TempDir())
	b := loadSources(t, d, "src.csv", payment.KindSources, srcReq(1), srcReq(2), srcReq(3), srcReq(4))
	k := func(line uint32) payment.RowKey { return payment.RowKey{Batch: b.ID, Line: line} }
	submitSource(t, d, k(2), "src-2", funding.StatusPending)
	submitSource(t, d, k(3), "src-3", funding.StatusUnverified)
	submitSource(t, d, k(4), "src-4", funding.StatusPending)
	d.SendSource(k(5), nil)

	if got, err := d.ObserveSources(nil, time.Now()); err != nil || len(got) != 0 {
		t.Fatalf("no observations: %v %v", got, err)
	}
	at := time.Date(2026, 5, 2, 8, 0, 0, 0, time.FixedZone("x", 3600))
	changed, err := d.ObserveSources([]funding.Observation{
		{Key: k(2), Status: funding.StatusVerified},
		{Key: k(3), Status: funding.StatusVerified}, // unverified is not tracked: kept
		{Key: k(4), Status: funding.StatusPending},  // seen again: no step
		{Key: k(5), Status: funding.StatusVerified}, // no source yet
	}, at)
	if err != nil || len(changed) != 1 || changed[k(2)] == nil {
		t.Fatalf("changed %v %v", changed, err)
	}
	r := changed[k(2)]
	last := r.History[len(r.History)-1]
	if r.Status != funding.StatusVerified || !r.StatusSeenAt.Equal(at) || r.StatusSeenAt.Location() != time.UTC ||
		last.Via != payment.Observe || last.CheckStatus != "verified" || last.State != payment.Submitted {
		t.Fatalf("observed row %+v, last step %+v", r, last)
	}
	if r3, _ := d.SourceRow(k(3)); r3.Status != funding.StatusUnverified || len(r3.History) != 3 {
		t.Fatalf("an untracked status changed: %+v", r3)
	}
	if r4, _ := d.SourceRow(k(4)); len(r4.History) != 3 {
		t.Fatalf("a status seen again added a step: %+v", r4.History)
	}
	// Once verified, the row keeps it.
	if changed, _ := d.ObserveSources([]funding.Observation{{Key: k(2), Status: funding.StatusDeleted}}, at); len(changed) != 0 {
		t.Fatalf("a verified row changed: %v", changed)
	}
	if got := srcKeys(t, d.TrackedSourceRows); !reflect.DeepEqual(got, []payment.RowKey{k(4)}) {
		t.Fatalf("tracked %v", got)
	}
	if _, err := d.ObserveSources([]funding.Observation{{Key: k(99), Status: funding.StatusVerified}}, at); !errors.Is(err, payment.ErrNotFound) {
		t.Fatalf("unknown row: %v", err)
	}
	wantInvariants(t, d)
}

func TestRecoverSourcesInFlight(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir)
	pb := load(t, d, "pay.csv", 2)
	b := loadSources(t, d, "src.csv", payment.KindSources, srcReq(1), srcReq(2), srcReq(3))
	k := func(line uint32) payment.RowKey { return payment.RowKey{Batch: b.ID, Line: line} }
	d.SendSource(k(2), nil)
	d.SendSource(k(3), nil)
	d.CustomerFound(k(3), "u-3", "")
	d.Send(payment.RowKey{Batch: pb.ID, Line: 2})
	d.Close()

	d = open(t, dir)
	n, err := d.RecoverSourcesInFlight()
	if err != nil || n != 2 {
		t.Fatalf("RecoverSourcesInFlight = %d, %v", n, err)
	}
	for _, line := range []uint32{2, 3} {
		r, _ := d.SourceRow(k(line))
		if r.State != payment.InDoubt || r.History[len(r.History)-1].Via != payment.Doubt || r.Request.Account == "" {
			t.Fatalf("recovered row %+v: must be in doubt and keep its account", r)
		}
	}
	if r, _ := d.SourceRow(k(3)); r.UserID != "u-3" {
		t.Fatalf("the customer found was lost: %+v", r)
	}
	if r, _ := d.Row(payment.RowKey{Batch: pb.ID, Line: 2}); r.State != payment.InFlight {
		t.Fatalf("RecoverSourcesInFlight moved a payment row: %s", r.State)
	}
	if n, err := d.RecoverInFlight(); err != nil || n != 1 {
		t.Fatalf("RecoverInFlight = %d, %v: it must see only the payment row", n, err)
	}
	if n, _ := d.RecoverSourcesInFlight(); n != 0 {
		t.Fatalf("a second recovery found %d", n)
	}
	bb, _ := d.Batch(b.ID)
	if bb.Counts[payment.InDoubt] != 2 || bb.Counts[payment.Pending] != 1 {
		t.Fatalf("counts %v", bb.Counts)
	}
	wantInvariants(t, d)
}

func TestFundingLedgerReopens(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir)
	pb := load(t, d, "pay.csv", 2)
	b := loadSources(t, d, "src.csv", payment.KindSources, srcReq(1), srcReq(2), srcReq(3))
	v := loadSources(t, d, "v.csv", payment.KindVerifications, verifyReq("src-1"))
	k := func(line uint32) payment.RowKey { return payment.RowKey{Batch: b.ID, Line: line} }
	submitSource(t, d, k(2), "src-1", funding.StatusPending)
	d.Initiated(k(2), time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), "")
	d.SendSource(k(3), nil)
	d.DoubtSource(k(3), "timeout")
	submitSource(t, d, payment.RowKey{Batch: v.ID, Line: 2}, "src-1", funding.StatusVerified)

	type view struct {
		Rows            []*funding.Row
		Open, Tracked   []payment.RowKey
		Owners          map[string]payment.RowKey
		Batches         []payment.Batch
		PayOpen, PayAll []payment.RowKey
	}
	look := func() view {
		var w view
		for _, id := range []uint64{b.ID, v.ID} {
			d.SourceRows(id, func(r *funding.Row) (bool, error) { w.Rows = append(w.Rows, r); return true, nil })
		}
		w.Open, w.Tracked = srcKeys(t, d.OpenSourceRows), srcKeys(t, d.TrackedSourceRows)
		w.Owners, _ = d.SourceOwners([]string{"src-1"})
		w.Batches, _ = d.Batches()
		w.PayOpen = payKeys(t, d.OpenRows)
		w.PayAll = payKeys(t, func(fn func(*payment.Row) (bool, error)) error { return d.Rows(pb.ID, fn) })
		return w
	}
	before := look()
	d.Close()
	d = open(t, dir)
	after := look()
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("reopened ledger differs:\nbefore %+v\nafter  %+v", before, after)
	}
	if len(after.Rows) != 4 || len(after.Open) != 2 || len(after.Tracked) != 1 || after.Owners["src-1"] != k(2) ||
		after.Batches[1].Kind != payment.KindSources || after.Batches[2].Kind != payment.KindVerifications || len(after.PayOpen) != 2 {
		t.Fatalf("reopened view %+v", after)
	}
	wantInvariants(t, d)
}
