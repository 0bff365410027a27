package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/payment"
)

// LinkCloser deactivates a payment link (the link kind's service), for a
// cancel line that names a link's checkout token; an unknown token is an
// error that Is payment.ErrNotFound.
type LinkCloser interface {
	CancelLink(ctx context.Context, token string) error
}

// CancelLedger is what the void rule reads and writes: rows to find the
// check a line names, the cancel lines' intents, and the row's record of
// batchd's own void.
type CancelLedger interface {
	payment.RowReader
	payment.LineLedger
	Voided(k payment.RowKey, reason string) error
}

// actionTooLate is the action of a check too late to void.
const actionTooLate = "the check was already printed or deposited, so the money has left: recover it from the payee"

// Cancel is the one void rule, for ingest's cancel files
// (ingest.Options.Cancel). It finds the check the line names, records the
// line's intent in the ledger before the void leaves, and settles the
// line from what the service says of the check:
//   - in process: voided (DELETE /v1/check/{id}); a void whose answer was
//     lost is settled by reading the check again;
//   - printed or deposited: too late to void, never retried: an
//     exception whose action is to recover the money from the payee;
//   - void: batchd's void when its own intent was recorded before, else
//     already void; failed or deleted: already final; unknown: not found.
//
// A line settled before (the same file claimed again after a crash) is
// answered from the ledger without asking the service. An error is a
// failure that left the line undone (the ledger, the service not
// answering or refusing batchd's key): ingest stops the file, and the
// next run applies it again.
func Cancel(db CancelLedger, svc payment.Service, links LinkCloser, now func() time.Time) ingest.CancelFunc {
	return func(ctx context.Context, line ingest.CancelLine) (ingest.CancelResult, error) {
		if line.Token != "" {
			return cancelLink(ctx, db, links, line, now)
		}
		res := ingest.CancelResult{CheckID: line.CheckID, Outcome: payment.CancelRefused}
		target, err := checkTarget(db, checkRef{id: line.CheckID, file: line.File, line: line.RowLine,
			label: line.Label, number: line.Number, accept: hasCheck})
		if errors.Is(err, ErrNotReleasable) {
			res.Note = err.Error()
			return res, nil
		}
		if err != nil {
			return res, err
		}
		res.CheckID, res.Row = target.CheckID, target.row
		rec, fresh, err := payment.CancelLines.Intent(db, payment.Cancel{CheckLine: payment.CheckLine[payment.CancelOutcome]{
			Key: payment.LineKey{File: line.FileSHA, Line: line.Line}, CheckID: target.CheckID, Row: target.Row}, Reason: line.Reason}, now())
		if err != nil {
			return res, err
		}
		if rec.Outcome.Settled() {
			return resultOf(rec, res.Row), nil
		}
		outcome, status, note, err := payment.Void(ctx, svc, rec.CheckID, !fresh)
		if err != nil {
			return res, err
		}
		if outcome == payment.CancelVoided && rec.Row != (payment.RowKey{}) {
			if err := db.Voided(rec.Row, payment.CancelNote+rec.Reason); err != nil {
				return res, err
			}
		}
		rec, err = payment.CancelLines.Settle(db, rec.Key, outcome, status, note, now())
		if err != nil {
			return res, err
		}
		return resultOf(rec, res.Row), nil
	}
}

// cancelLink deactivates the payment link a cancel line names, so that no
// payer can pay through it, with the line's intent recorded first.
// Deactivating a link twice changes nothing, so a line whose earlier
// attempt may have left is simply sent again.
func cancelLink(ctx context.Context, db CancelLedger, links LinkCloser, line ingest.CancelLine, now func() time.Time) (ingest.CancelResult, error) {
	rec, _, err := payment.CancelLines.Intent(db, payment.Cancel{CheckLine: payment.CheckLine[payment.CancelOutcome]{
		Key: payment.LineKey{File: line.FileSHA, Line: line.Line}}, Token: line.Token, Reason: line.Reason}, now())
	if err != nil {
		return ingest.CancelResult{Token: line.Token, Outcome: payment.CancelRefused}, err
	}
	if rec.Outcome.Settled() {
		return resultOf(rec, ""), nil
	}
	outcome, note := payment.CancelLinkClosed, ""
	switch err := links.CancelLink(ctx, line.Token); {
	case errors.Is(err, payment.ErrNotFound):
		outcome, note = payment.CancelNotFound, "the service does not know this payment link: check the token in the links report"
	case err != nil && payment.FailureOf(err) == payment.FailRefused:
		outcome, note = payment.CancelRefused, payment.ServiceMessage(err)
	case err != nil:
		return ingest.CancelResult{Token: line.Token, Outcome: payment.CancelRefused}, fmt.Errorf("cancel payment link %s: %w", line.Token, err)
	}
	if rec, err = payment.CancelLines.Settle(db, rec.Key, outcome, "", note, now()); err != nil {
		return ingest.CancelResult{Token: line.Token, Outcome: payment.CancelRefused}, err
	}
	return resultOf(rec, ""), nil
}

// target is the check a line of an applied file names, and its row when
// the check is batchd's.
type target struct {
	CheckID string
	Row     payment.RowKey
	row     string       // "payroll.csv line 4", for the report
	r       *payment.Row // the row; nil for a check that is not batchd's
}

// checkRef is how a line of an applied file (cancels, edits) names a
// check: by its id, or by the payment file and line that made it, or by
// its label and number. accept refuses, saying why, a row named by file
// and line that the kind cannot act on.
type checkRef struct {
	id, file      string
	line          int
	label, number string
	accept        func(*payment.Row) error
}

// checkTarget finds the check ref names, for every kind that names one. A
// line naming a row that accept refuses, or no row, is refused
// (ErrNotReleasable) with the reason.
func checkTarget(db payment.RowReader, ref checkRef) (target, error) {
	var r *payment.Row
	var err error
	switch {
	case ref.id != "":
		owners, err := db.CheckOwners([]string{ref.id})
		if err != nil {
			return target{}, err
		}
		k, ok := owners[ref.id]
		if !ok {
			return target{CheckID: ref.id}, nil // not batchd's: the kind decides, and the report says whose
		}
		if r, err = db.Row(k); err != nil {
			return target{}, err
		}
	case ref.file != "":
		r, err = rowAt(db, ref.file, ref.line, 0, ref.accept)
	default:
		r, err = rowByIdentity(db, ref.label, ref.number)
	}
	if err != nil {
		return target{}, err
	}
	return target{CheckID: r.CheckID, Row: r.Key, row: rowName(db, r), r: r}, nil
}

// hasCheck refuses a row whose check does not exist yet.
func hasCheck(r *payment.Row) error {
	if r.CheckID == "" {
		return refuse("%s has no check yet (it is %s): there is nothing to void; to stop it, hold it before submit runs", r.Key, r.ReportStatus())
	}
	return nil
}

// rowByIdentity finds the row whose check, not yet final, carries label
// and number: only such a check can still be voided.
func rowByIdentity(db payment.RowReader, label, number string) (*payment.Row, error) {
	var found *payment.Row
	err := db.TrackedRows(func(r *payment.Row) (bool, error) {
		if payment.SameLabel(r.Payment.Label, label) && payment.SameNumber(r.Payment.Number, number) && r.CheckID != "" {
			found = r
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, refuse("no check of batchd that is not final carries label %q and number %q: check both with batchd status, or name the check by check_id", label, number)
	}
	return found, nil
}

// rowName names r as a person knows it: "payroll.csv line 4".
func rowName(db payment.RowReader, r *payment.Row) string {
	if b, err := db.Batch(r.Key.Batch); err == nil {
		return fmt.Sprintf("%s line %d", b.File, r.Key.Line)
	}
	return r.Key.String()
}

// resultOf words a settled cancel line for the results report.
func resultOf(c payment.Cancel, row string) ingest.CancelResult {
	res := ingest.CancelResult{CheckID: c.CheckID, Token: c.Token, Row: row, Outcome: c.Outcome, Status: c.Status, Note: c.Note}
	if c.Outcome == payment.CancelTooLate {
		res.Action = actionTooLate
	}
	return res
}

// readCheck reads check id before a line acts on it (doing: "voiding").
// A check the service does not know, or whose read it refuses, settles
// the line: o is then notFound or refused, with its note. err is a
// failure that leaves the line undone.
func readCheck[O ~string](ctx context.Context, svc payment.Service, id, doing string, notFound, refused O) (ck *payment.Check, o O, note string, err error) {
	ck, err = svc.GetCheck(ctx, id)
	switch {
	case errors.Is(err, payment.ErrNotFound):
		return nil, notFound, "the service does not know check " + id + ": check the id with the status report", nil
	case err != nil && payment.FailureOf(err) == payment.FailRefused:
		return nil, refused, payment.ServiceMessage(err), nil
	case err != nil:
		return nil, o, "", fmt.Errorf("read check %s before %s it: %w", id, doing, err)
	}
	return ck, o, "", nil
}
