package statetest

import (
	"errors"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// Payee marks, held rows and their approval.
var payeeCases = []testCase{
	{"HeldRowLifecycle", testHeldRowLifecycle},
	{"HeldRowSurvivesReopen", testHeldRowSurvivesReopen},
	{"NoMarkNoMemory", testNoMarkNoMemory},
	{"RejectedBatchDropsMarks", testRejectedBatchDropsMarks},
}

// loadMarked commits a batch of two rows for one payee: line 2 with no
// change, line 3 held (or warned) for a changed account.
func loadMarked(t *testing.T, d *state.DB, name, action string) payment.Batch {
	t.Helper()
	l, err := d.BeginBatch(payment.FileMeta{Name: name, SHA256: "sha-" + name, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	same := payment.PayeeMark{Payee: "p1", Account: payment.PayeeAccount{KeyID: "k", Hash: "h1", Last4: "0001", Length: 10}}
	if err := l.AddMarked(2, pay("1111000001", 1), same); err != nil {
		t.Fatal(err)
	}
	changed := payment.PayeeMark{Payee: "p1", Account: payment.PayeeAccount{KeyID: "k", Hash: "h2", Last4: "0002", Length: 10},
		Change: &payment.AccountChange{From: "0001", To: "0002", Action: action}}
	if err := l.AddMarked(3, pay("1111000002", 1), changed); err != nil {
		t.Fatal(err)
	}
	b, err := l.Commit(2, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testHeldRowLifecycle(t *testing.T, be Backend) {
	d := open(t, be)
	b := loadMarked(t, d.DB, "pay.csv", "hold")
	if b.Counts[payment.Pending] != 1 || b.Counts[payment.Held] != 1 || b.Busy() != 1 || b.OpenRows() != 2 {
		t.Fatalf("counts %v", b.Counts)
	}
	held := payment.RowKey{Batch: b.ID, Line: 3}
	r, err := d.Row(held)
	if err != nil || r.State != payment.Held || r.Payment.BankAccount != "1111000002" {
		t.Fatalf("held row %+v %v", r, err)
	}
	if want := "held: bank details changed from …0001 to …0002; release with batchd release --file pay.csv --line 3"; r.Error != want {
		t.Fatalf("held reason %q", r.Error)
	}
	if _, err := d.Send(held); !errors.Is(err, payment.ErrIllegal) {
		t.Fatalf("a held row must never be sent: %v", err)
	}
	if _, err := d.ApproveHeld(payment.RowKey{Batch: b.ID, Line: 2}, "alice"); !errors.Is(err, payment.ErrIllegal) {
		t.Fatalf("approving a row not held: %v", err)
	}

	// The pending row is paid: its account becomes the payee's last.
	if _, err := d.Send(payment.RowKey{Batch: b.ID, Line: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Created(payment.RowKey{Batch: b.ID, Line: 2}, payment.CheckResult{CheckID: "c1", Status: payment.StatusInProcess}); err != nil {
		t.Fatal(err)
	}
	last, ok, err := d.LastPaid("p1")
	if err != nil || !ok || last.Hash != "h1" || last.Last4 != "0001" || last.Row.Line != 2 {
		t.Fatalf("last paid %+v %v %v", last, ok, err)
	}
	if err := d.ResultsReported(b.ID); err != nil {
		t.Fatal(err)
	}

	// Released: pending, who in the history, the report to be written again.
	r, err = d.ApproveHeld(held, "alice")
	if err != nil || r.State != payment.Pending || r.Error != "" {
		t.Fatalf("approve: %+v %v", r, err)
	}
	if s := r.History[len(r.History)-1]; s.Via != payment.Approve || s.Note != "released by alice" {
		t.Fatalf("history step %+v", s)
	}
	bb, err := d.Batch(b.ID)
	if err != nil || !bb.ResultsReported.IsZero() || bb.Counts[payment.Held] != 0 || bb.Counts[payment.Pending] != 1 {
		t.Fatalf("batch after release %+v %v", bb, err)
	}
	if _, err := d.ApproveHeld(held, "alice"); !errors.Is(err, payment.ErrIllegal) {
		t.Fatalf("a second release: %v", err)
	}
	if _, err := d.Send(held); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Created(held, payment.CheckResult{CheckID: "c2", Status: payment.StatusInProcess}); err != nil {
		t.Fatal(err)
	}
	if last, _, _ := d.LastPaid("p1"); last.Hash != "h2" || last.Last4 != "0002" {
		t.Fatalf("last paid after the released row %+v", last)
	}
	marks, err := d.PayeeMarks(b.ID)
	// Once paid, only the change's mark stays: nothing reports the other.
	if err != nil || len(marks) != 1 || marks[3].Change == nil || marks[3].Change.To != "0002" {
		t.Fatalf("marks %+v %v", marks, err)
	}
	d.invariants()
}

func testHeldRowSurvivesReopen(t *testing.T, be Backend) {
	d := open(t, be)
	b := loadMarked(t, d.DB, "pay.csv", "hold")
	d.reopen()
	if n, err := d.RecoverInFlight(); err != nil || n != 0 {
		t.Fatalf("recover %d %v", n, err)
	}
	var held []payment.RowKey
	err := d.OpenRows(func(r *payment.Row) (bool, error) {
		if r.State == payment.Held {
			held = append(held, r.Key)
		}
		return true, nil
	})
	if err != nil || len(held) != 1 || held[0] != (payment.RowKey{Batch: b.ID, Line: 3}) {
		t.Fatalf("held rows after reopen %v %v", held, err)
	}
}

func testNoMarkNoMemory(t *testing.T, be Backend) {
	d := open(t, be)
	b := load(t, d.DB, "plain.csv", 1)
	k := payment.RowKey{Batch: b.ID, Line: 2}
	if _, err := d.Send(k); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Created(k, payment.CheckResult{CheckID: "c", Status: payment.StatusInProcess, Created: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := d.LastPaid("p1"); ok || err != nil {
		t.Fatalf("a row without a mark remembers nothing: %v %v", ok, err)
	}
	if m, err := d.PayeeMarks(b.ID); err != nil || len(m) != 0 {
		t.Fatalf("marks %v %v", m, err)
	}
}

func testRejectedBatchDropsMarks(t *testing.T, be Backend) {
	d := open(t, be)
	l, err := d.BeginBatch(payment.FileMeta{Name: "r.csv", SHA256: "sha-r", Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	for line := 2; line < 6; line++ { // more than a chunk (3): some are written before the refusal
		if err := l.AddMarked(line, pay("1111000001", 1), payment.PayeeMark{Payee: "p"}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := l.Reject(4, 0, "no")
	if err != nil {
		t.Fatal(err)
	}
	if m, err := d.PayeeMarks(b.ID); err != nil || len(m) != 0 {
		t.Fatalf("a rejected batch keeps no marks: %v %v", m, err)
	}
}
