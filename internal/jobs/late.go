package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/reconcile"
)

// The reconcile steps of the kinds that act on checks (cancels, edits): a
// line that came too late, its check already printed or deposited, needs
// a person (the money has left), so besides its line in the file's
// results report it is an exception in the daily exceptions report, with
// its action, for reconcile.exception_days after it was applied.

// Exception kinds of lines that came too late.
const (
	KindCancelTooLate = "cancel_too_late"
	KindEditTooLate   = "edit_too_late"
)

// lateLine is a line of a kind that acts on checks, as its step reads it.
type lateLine struct {
	key     payment.LineKey
	checkID string
	row     payment.RowKey
	status  payment.Status
	settled time.Time
}

// lateStep is one such kind's step: lines lists the kind's lines that
// came too late.
type lateStep struct {
	db     payment.RowReader
	kind   string
	file   string // the kind's file: "cancel", "edit"
	asked  string // what the line asked: "void", "edit"
	action string
	lines  func() ([]lateLine, error)
}

// Reconcile raises an exception for each line too late in the window.
func (s lateStep) Reconcile(_ context.Context, run reconcile.StepRun) (*reconcile.StepReport, error) {
	lines, err := s.lines()
	if err != nil {
		return nil, err
	}
	rep := &reconcile.StepReport{}
	for _, l := range lines {
		if !run.Recent(l.settled) {
			continue
		}
		c := &payment.Check{ID: l.checkID, Status: l.status}
		file := ""
		if l.row != (payment.RowKey{}) {
			r, err := s.db.Row(l.row)
			if err != nil {
				return nil, fmt.Errorf("read row %s of a %s line: %w", l.row, s.asked, err)
			}
			c.Label, c.Number, c.Amount = r.Label, r.Number, r.Payment.Amount
			if b, err := s.db.Batch(l.row.Batch); err == nil {
				file = b.File
			}
		}
		rep.Exceptions = append(rep.Exceptions, reconcile.Exception{Kind: s.kind, Check: c, File: file, Action: s.action,
			Detail: fmt.Sprintf("a %s file's line %d asked to %s it on %s: too late, the check was %s",
				s.file, l.key.Line, s.asked, l.settled.UTC().Format(time.DateOnly), l.status)})
	}
	return rep, nil
}

// cancelsTooLate is the cancel kind's step.
func cancelsTooLate(db CancelLedger) lateStep {
	return lateStep{db: db, kind: KindCancelTooLate, file: "cancel", asked: "void", action: actionTooLate,
		lines: tooLate(db, payment.CancelLines, payment.CancelTooLate)}
}

// editsTooLate is the edit kind's step.
func editsTooLate(db EditLedger) lateStep {
	return lateStep{db: db, kind: KindEditTooLate, file: "edit", asked: "edit", action: actionEditTooLate,
		lines: tooLate(db, payment.EditLines, payment.EditTooLate)}
}

// tooLate lists the lines of store whose outcome is late.
func tooLate[T any, O interface {
	~string
	Settled() bool
}](db payment.LineLedger, store payment.CheckLines[T, O], late O) func() ([]lateLine, error) {
	return func() ([]lateLine, error) {
		recs, err := store.List(db, "")
		var out []lateLine
		for i := range recs {
			if l := store.Line(&recs[i]); l.Outcome == late {
				out = append(out, lateLine{l.Key, l.CheckID, l.Row, l.Status, l.Settled})
			}
		}
		return out, err
	}
}
