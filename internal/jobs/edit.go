package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
)

// EditLedger is what the edit rule reads and writes: rows to find the
// check a line names, the edit lines' intents, and the row that follows
// its check's edit.
type EditLedger interface {
	payment.RowReader
	payment.LineLedger
	payment.RowEditor
}

// actionEditTooLate is the action of a check too late to edit.
const actionEditTooLate = "the check was already printed or deposited, so it can no longer be corrected: if it pays the wrong amount or person, recover the money from the payee and send a new payment"

// Edit is the one edit rule, for ingest's edit files
// (ingest.Options.Edit). It finds the check the line names (batchd's own:
// its row keeps every value the service's edit needs but the full
// account), refuses a line whose bank details are not the check's,
// records the line's intent in the ledger with the check's values before
// and after, and settles the line from what the service says of the
// check:
//   - in process and showing the values before: edited (POST
//     /v1/check/edit with the whole check); an edit whose answer was lost
//     is settled by reading the check again;
//   - showing the values after: edited (an earlier edit whose answer was
//     lost), never sent again;
//   - printed or deposited: too late to edit, never retried, with the
//     action to take; void, failed or deleted: final; unknown: not found;
//   - in process but showing neither: changed by another hand, refused.
//
// An edited check's row takes the new values and identity. A line
// settled before is answered from the ledger. An error is a failure that
// left the line undone: ingest stops the file, and the next run applies
// it again, the intent making the edit happen at most once in effect.
func Edit(db EditLedger, svc payment.Service, now func() time.Time) ingest.EditFunc {
	return func(ctx context.Context, line ingest.EditLine) (ingest.EditResult, error) {
		var res ingest.EditResult
		res.CheckID, res.Outcome = line.CheckID, payment.EditRefused
		t, why, err := editTarget(db, line)
		if err != nil {
			return res, err
		}
		if t.CheckID != "" {
			res.CheckID, res.Row = t.CheckID, t.row
		}
		if why != "" {
			res.Note = why
			return res, nil
		}
		before := payment.EditFieldsOf(t.r)
		rec, _, err := payment.EditLines.Intent(db, payment.Edit{CheckLine: payment.CheckLine[payment.EditOutcome]{
			Key: payment.EditKey{File: line.FileSHA, Line: line.Line}, CheckID: t.CheckID, Row: t.Row},
			Before: before, After: line.Change.Over(before)}, now())
		if err != nil {
			return res, err
		}
		if !rec.Outcome.Settled() {
			if rec, err = settleEdit(ctx, db, svc, rec, editedRow(t.r, rec.After, line), now); err != nil {
				return res, err
			}
		}
		return editResultOf(rec, res.Row), nil
	}
}

// editTarget finds the row whose check line edits. A line batchd refuses
// (no such row or check of batchd's, or bank details that are not the
// check's) gets the reason, why; err is a failure to read the ledger.
func editTarget(db payment.RowReader, line ingest.EditLine) (t target, why string, err error) {
	t, err = checkTarget(db, checkRef{id: line.CheckID, file: line.File, line: line.RowLine, accept: hasCheckToEdit})
	switch {
	case errors.Is(err, ErrNotReleasable):
		return t, err.Error(), nil
	case err != nil:
		return t, "", err
	case t.r == nil:
		return t, fmt.Sprintf("check %s is not one batchd made: batchd edits only its own checks, whose values it keeps; edit it at the service", t.CheckID), nil
	}
	return t, bankChange(t.r, line), nil
}

// settleEdit takes an edit line's intent rec to its outcome: it edits the
// check if it is still to be edited, makes the row follow an edited
// check, and records the outcome. next is the row as the edit makes it,
// bank details in full. A line whose values are the check's already
// changes nothing, and is refused without a request.
func settleEdit(ctx context.Context, db EditLedger, svc payment.Service, rec payment.Edit, next *payment.Row, now func() time.Time) (payment.Edit, error) {
	outcome, status, note := payment.EditRefused, payment.Status(""), "the line changes nothing: the check already has these values"
	if rec.Before != rec.After {
		var err error
		if outcome, status, note, err = editCheck(ctx, svc, rec, next); err != nil {
			return rec, err
		}
	}
	if outcome == payment.EditEdited {
		if _, err := db.Edited(rec.Row, rec.After, rec.Before.Changes(rec.After)); err != nil {
			return rec, err
		}
	}
	return payment.EditLines.Settle(db, rec.Key, outcome, status, note, now())
}

// hasCheckToEdit refuses a row whose check does not exist yet.
func hasCheckToEdit(r *payment.Row) error {
	if r.CheckID == "" {
		return refuse("%s has no check yet (it is %s): there is nothing to edit at the service", r.Key, r.ReportStatus())
	}
	return nil
}

// bankChange refuses an edit line whose bank details are not the check's:
// a check paid from a tokenized account, another routing number, or an
// account whose last four digits are not the ones batchd kept. Such a
// change is a change of payee's account: it goes through the payee-change
// rules as a new payment, never through an edit.
func bankChange(r *payment.Row, line ingest.EditLine) string {
	p := &r.Payment
	const fix = ": cancel the check and send a new payment, which goes through the payee-change rules"
	switch {
	case p.Token != "":
		return "bank details change: the check was paid from a tokenized account, and an edit file carries an account" + fix
	case strings.TrimSpace(p.BankRouting) != line.BankRouting:
		return fmt.Sprintf("bank details change: routing number %s is not the check's (%s)%s", line.BankRouting, p.BankRouting, fix)
	case redact.Last4(line.BankAccount) != accountLast4(p):
		return fmt.Sprintf("bank details change: account %s is not the check's (%s)%s", redact.Account(line.BankAccount), redact.PaymentAccount(p), fix)
	}
	return ""
}

// accountLast4 are the last four digits batchd keeps of p's account.
func accountLast4(p *payment.Payment) string {
	if p.BankAccount != "" {
		return redact.Last4(p.BankAccount)
	}
	return p.AccountLast4
}

// editedRow is r as the edit makes it: the values after, and the line's
// bank details in full, which the service's edit needs. It is sent, never
// stored.
func editedRow(r *payment.Row, after payment.EditFields, line ingest.EditLine) *payment.Row {
	next := *r
	next.History = nil
	after.ApplyTo(&next)
	next.Payment.BankRouting, next.Payment.BankAccount = line.BankRouting, line.BankAccount
	return &next
}

// editResultOf words a settled edit line for the results report.
func editResultOf(e payment.Edit, row string) ingest.EditResult {
	res := ingest.EditResult{Changed: e.Before.Changes(e.After), AmountChanged: e.Before.Amount != e.After.Amount,
		CheckResult: ingest.CheckResult[payment.EditOutcome]{CheckID: e.CheckID, Row: row, Outcome: e.Outcome, Status: e.Status, Note: e.Note}}
	if e.Outcome == payment.EditTooLate {
		res.Action = actionEditTooLate
	}
	return res
}

// editCheck edits check rec.CheckID to next if the check is in process
// and still shows the values before, and says how its line settles. A
// check already showing the values after is not edited again. An error
// leaves the line in its intent, for the next run.
func editCheck(ctx context.Context, svc payment.Service, rec payment.Edit, next *payment.Row) (payment.EditOutcome, payment.Status, string, error) {
	id := rec.CheckID
	ck, o, note, err := readCheck(ctx, svc, id, "editing", payment.EditNotFound, payment.EditRefused)
	if err != nil || o != "" {
		return o, "", note, err
	}
	if o, note, done := editSettledBy(ck, rec); done {
		return o, ck.Status, note, nil
	}
	edited, eerr := svc.EditCheck(ctx, id, next)
	if eerr == nil {
		return payment.EditEdited, edited.Status, "", nil
	}
	if payment.FailureOf(eerr) == payment.FailKeyRefused {
		return "", "", "", fmt.Errorf("edit check %s: %w", id, eerr)
	}
	// Refused, lost or not done: only the check now says whether the
	// edit was made.
	again, err := svc.GetCheck(ctx, id)
	if err != nil {
		return "", "", "", fmt.Errorf("read check %s after its edit failed (%v): %w", id, eerr, err)
	}
	if o, note, done := editSettledBy(again, rec); done {
		return o, again.Status, note, nil
	}
	if payment.FailureOf(eerr) == payment.FailRefused {
		return payment.EditRefused, again.Status, payment.ServiceMessage(eerr), nil
	}
	return "", "", "", fmt.Errorf("edit check %s: the check still shows its values before the edit, which the next run sends again: %w", id, eerr)
}

// editSettledBy is how an edit line settles on check c without an edit
// request; done is false when c is in process and shows the values
// before the edit: the edit is to be sent. A check showing the values
// after and not those before was edited (by an earlier request of this
// line whose answer was lost, or by another hand to the same values).
func editSettledBy(c *payment.Check, rec payment.Edit) (payment.EditOutcome, string, bool) {
	after, before := rec.After.ShownBy(c), rec.Before.ShownBy(c)
	switch {
	case after && !before:
		return payment.EditEdited, "the check already shows the new values: an earlier edit's answer was lost", true
	case c.Status == payment.StatusPrinted, c.Status == payment.StatusDeposited:
		return payment.EditTooLate, "too late to edit: the check is " + string(c.Status), true
	case c.Status == payment.StatusVoid, c.Status == payment.StatusFailed, c.Status == payment.StatusDeleted:
		return payment.EditFinal, "the check is already " + string(c.Status) + ": there is nothing to edit", true
	case c.Status == payment.StatusInReview:
		return payment.EditRefused, "the check is held for review at the service, which edits only checks in process", true
	case c.Status != payment.StatusInProcess:
		return payment.EditRefused, fmt.Sprintf("the check's status is %q, which batchd cannot edit", c.Status), true
	case !before:
		diff := rec.Before.Identity().Differences(c.Identity())
		if len(diff) == 0 {
			diff = []string{"memo or name"}
		}
		return payment.EditRefused, "the check at the service shows neither batchd's values nor the edit's (" + strings.Join(diff, "; ") +
			"): it was changed by another hand, and nothing was edited: compare it with the status report", true
	}
	return "", "", false
}
