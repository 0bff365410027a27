package statetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
)

// Restore semantics: after a ledger goes back in time, no row that may
// have been paid since is ever sent again without a lookup.
var restoreCases = []testCase{
	{"RowsWithoutACheckInDoubt", testRestorePutsRowsWithoutACheckInDoubt},
	{"RestoredMark", testRestoredMark},
	{"ReleaseKeepsHold", testReleaseAfterRestoreKeepsHold},
}

func testRestorePutsRowsWithoutACheckInDoubt(t *testing.T, be Backend) {
	needRestore(t, be)
	d := open(t, be)
	b := load(t, d.DB, "pay.csv", 10)
	k := func(line uint32) payment.RowKey { return key(b, line) }
	submit(t, d.DB, k(2), "chk-2", payment.StatusInProcess)
	d.Send(k(3)) // in doubt since the day before the snapshot
	d.Doubt(k(3), "timeout")
	d.clock.Add(24 * time.Hour)
	d.Send(k(4)) // in flight at the snapshot
	snapAt := d.clock.Add(time.Minute)
	oldInstance := d.Instance()
	restoredAt := snapAt.Add(2 * time.Hour)
	m := d.restore(func() {
		// After the snapshot, row 5 is paid and row 4's check made.
		d.clock.Add(time.Hour)
		d.Created(k(4), payment.CheckResult{CheckID: "chk-4", Status: "in_process"})
		submit(t, d.DB, k(5), "chk-5", payment.StatusInProcess)
	}, restoredAt)
	if !m.SnapshotAt.Equal(snapAt) || !m.RestoredAt.Equal(restoredAt) || m.RowsInDoubt != 9 ||
		m.PreviousInstance != oldInstance || m.Instance == oldInstance {
		t.Fatalf("mark %+v", m)
	}
	for line := uint32(2); line <= 11; line++ {
		r := row(t, d.DB, k(line))
		switch {
		case line == 2:
			if r.State != payment.Submitted || r.CheckID != "chk-2" {
				t.Fatalf("row 2 %s %q", r.State, r.CheckID)
			}
			continue
		case r.State != payment.InDoubt:
			t.Fatalf("row %d is %s, want in_doubt", line, r.State)
		case (line == 3 || line == 4) && !r.AttemptAt.Before(snapAt):
			t.Fatalf("row %d's attempt moved from before the snapshot to %v: its lookup would miss its check", line, r.AttemptAt)
		case line > 4 && !r.AttemptAt.Equal(snapAt):
			t.Fatalf("row %d attempt %v, want the snapshot's time %v", line, r.AttemptAt, snapAt)
		case r.History[len(r.History)-1].Via != payment.Suspect:
			t.Fatalf("row %d last step %+v", line, r.History[len(r.History)-1])
		}
	}
	if owners, _ := d.CheckOwners([]string{"chk-4", "chk-5"}); len(owners) != 0 {
		t.Fatalf("checks made after the snapshot are owned: %v", owners)
	}
	if d.Instance() != m.Instance {
		t.Fatalf("instance %s, the mark says %s", d.Instance(), m.Instance)
	}
	nb := load(t, d.DB, "after.csv", 1)
	if strings.Contains(nb.Label, oldInstance) {
		t.Fatalf("a batch after the restore carries the old instance's label %s", nb.Label)
	}
	if bb := batch(t, d.DB, b.ID); bb.Counts[payment.InDoubt] != 9 || bb.Counts[payment.Submitted] != 1 {
		t.Fatalf("counts %v", bb.Counts)
	}
	d.invariants()
}

// testRestoredMark: the mark is there from the restore until a reconcile
// clears it, also across a reopen, and `batchd check` reports it.
func testRestoredMark(t *testing.T, be Backend) {
	needRestore(t, be)
	d := open(t, be)
	if m, err := d.Restored(); err != nil || m != nil {
		t.Fatalf("a fresh ledger is restored: %+v %v", m, err)
	}
	load(t, d.DB, "pay.csv", 1)
	snapAt := d.clock.Now()
	d.restore(nil, snapAt.Add(time.Hour))
	d.reopen()
	m, err := d.Restored()
	if err != nil || m == nil || !m.SnapshotAt.Equal(snapAt) || m.RowsInDoubt != 1 {
		t.Fatalf("restored mark %+v %v", m, err)
	}
	if rep := d.invariants(); rep.Restored == nil || !rep.Restored.SnapshotAt.Equal(snapAt) {
		t.Fatalf("check's report of the mark: %+v", rep.Restored)
	}
	if err := d.ClearRestored(); err != nil {
		t.Fatal(err)
	}
	d.reopen()
	if m, err := d.Restored(); err != nil || m != nil {
		t.Fatalf("restored mark not cleared: %+v %v", m, err)
	}
}

// testReleaseAfterRestoreKeepsHold: a held row suspected by a restore is
// looked up; when the lookup proves it has no check, it is held again,
// never made pending. A row approved before the snapshot goes to pending
// as any other.
func testReleaseAfterRestoreKeepsHold(t *testing.T, be Backend) {
	needRestore(t, be)
	d := open(t, be)
	b := loadMarked(t, d.DB, "pay.csv", "hold")
	held := key(b, 3)
	d.restore(nil, d.clock.Add(time.Hour))
	if r := row(t, d.DB, held); r.State != payment.InDoubt || r.History[len(r.History)-1].Via != payment.Suspect {
		t.Fatalf("held row after a restore: %+v", r)
	}
	r, err := d.Release(held, "a complete walk found no check")
	if err != nil || r.State != payment.Held || r.History[len(r.History)-1].Via != payment.Rehold {
		t.Fatalf("release of a held row: %+v %v", r, err)
	}
	if want := "held: bank details changed from …0001 to …0002; release with batchd release --file pay.csv --line 3"; r.Error != want {
		t.Fatalf("error %q", r.Error)
	}
	if _, err := d.Send(held); !errors.Is(err, payment.ErrIllegal) {
		t.Fatalf("sent: %v", err)
	}
	if bb := batch(t, d.DB, b.ID); bb.Counts[payment.Held] != 1 || bb.Counts[payment.InDoubt] != 1 {
		t.Fatalf("counts %v", bb.Counts)
	}

	// Approved, then suspected: released to pending.
	if _, err := d.ApproveHeld(held, "alice"); err != nil {
		t.Fatal(err)
	}
	d.restore(nil, d.clock.Add(time.Hour))
	if r, err := d.Release(held, "no check"); err != nil || r.State != payment.Pending {
		t.Fatalf("release of an approved row: %+v %v", r, err)
	}
	d.invariants()
}

// fundingLedger holds a payment batch, a funding-source batch (line 2
// pending, 3 submitted src-3, 4 submitted src-4, 5 in doubt, 6 rejected)
// and a verification batch (line 2 verifies src-3).
func fundingLedger(t *testing.T, d *fixture) (pb, sb, vb payment.Batch) {
	t.Helper()
	pb = load(t, d.DB, "pay.csv", 3)
	submit(t, d.DB, key(pb, 2), "chk-2", payment.StatusInProcess)
	sb = loadSources(t, d.DB, "src.csv", payment.KindSources, srcReq(1), srcReq(2), srcReq(3), srcReq(4), srcReq(5))
	k := func(line uint32) payment.RowKey { return key(sb, line) }
	submitSource(t, d.DB, k(3), "src-3", funding.StatusPending)
	submitSource(t, d.DB, k(4), "src-4", funding.StatusUnverified)
	d.SendSource(k(5), nil)
	d.DoubtSource(k(5), "timeout")
	d.SendSource(k(6), nil)
	d.RejectSource(k(6), "This bank account is associated with another user", "")
	vb = loadSources(t, d.DB, "v.csv", payment.KindVerifications, verifyReq("src-3"))
	submitSource(t, d.DB, key(vb, 2), "src-3", funding.StatusVerified)
	return pb, sb, vb
}

func testRestoreSuspectsFundingRows(t *testing.T, be Backend) {
	needRestore(t, be)
	d := open(t, be)
	pb, sb, vb := fundingLedger(t, d)
	k := func(line uint32) payment.RowKey { return key(sb, line) }
	snapAt := d.clock.Add(time.Hour)
	m := d.restore(nil, snapAt.Add(time.Hour))
	// Payment rows 3 and 4; funding rows 2 (pending) and 5 (in doubt).
	if m.RowsInDoubt != 4 {
		t.Fatalf("restoral %+v", m)
	}
	for _, line := range []uint32{2, 5} {
		r := sourceRow(t, d.DB, k(line))
		if r.State != payment.InDoubt || r.History[len(r.History)-1].Via != payment.Suspect || r.AttemptAt.After(snapAt) {
			t.Fatalf("funding row %d after restore: %+v", line, r)
		}
	}
	if r := sourceRow(t, d.DB, k(2)); !r.AttemptAt.Equal(snapAt) {
		t.Fatalf("a never-sent row's attempt %v, want the snapshot's time", r.AttemptAt)
	}
	for _, kk := range []payment.RowKey{k(3), k(4), k(6), key(vb, 2)} {
		if r := sourceRow(t, d.DB, kk); r.State.Open() || r.History[len(r.History)-1].Via == payment.Suspect {
			t.Fatalf("row %s with a result was suspected: %+v", kk, r)
		}
	}
	if r := row(t, d.DB, key(pb, 3)); r.State != payment.InDoubt {
		t.Fatalf("payment row after restore: %s", r.State)
	}
	bb := batch(t, d.DB, sb.ID)
	if bb.Counts[payment.InDoubt] != 2 || bb.Counts[payment.Pending] != 0 {
		t.Fatalf("counts %v", bb.Counts)
	}
	if rep := d.invariants(); rep.SourceRows != 6 {
		t.Fatalf("report %+v", rep)
	}
}

// Invariants: `batchd check` finds a sound ledger sound, and counts it.
var invariantCases = []testCase{
	{"SoundLedgerCounted", testSoundLedgerCounted},
}

func testSoundLedgerCounted(t *testing.T, be Backend) {
	d := open(t, be)
	if rep := d.invariants(); rep.Rows != 0 || rep.Batches != 0 {
		t.Fatalf("fresh ledger %+v", rep)
	}
	_, sb, _ := fundingLedger(t, d)
	d.SendSource(key(sb, 2), nil) // in flight: counted as such
	rep := d.invariants()
	if rep.Batches != 3 || rep.Rows != 9 || rep.SourceRows != 6 || rep.Sources != 2 || rep.Checks != 1 ||
		rep.ByState[payment.Submitted] != 4 || rep.ByState[payment.Pending] != 2 || rep.ByState[payment.InFlight] != 1 ||
		rep.ByState[payment.InDoubt] != 1 || rep.ByState[payment.Rejected] != 1 {
		t.Fatalf("report %+v", rep)
	}
	if !strings.Contains(rep.Summary(), "6 funding rows, 2 funding sources") {
		t.Errorf("summary %q", rep.Summary())
	}
	if rep.Instance != "" && rep.Instance != d.Instance() {
		t.Errorf("report instance %q, ledger %q", rep.Instance, d.Instance())
	}
}
