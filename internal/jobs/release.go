package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
)

// ErrNotReleasable marks a release refused for a reason the person can
// fix (no such row, a row that is not held, a name in several batches):
// the admin API answers it 409 with the message, not 500.
var ErrNotReleasable = errors.New("not releasable")

// notReleasable is a refusal whose message is the reason alone.
type notReleasable struct{ error }

func (n notReleasable) Unwrap() error        { return n.error }
func (n notReleasable) Is(target error) bool { return target == ErrNotReleasable }

// refuse makes a refusal with the reason and the fix.
func refuse(format string, a ...any) error { return notReleasable{fmt.Errorf(format, a...)} }

// ReleaseLedger is what a release reads and writes: the rows to find the
// held one, and the payee ledger to approve it.
type ReleaseLedger interface {
	payment.RowReader
	ApproveHeld(k payment.RowKey, who string) (*payment.Row, error)
}

// ReleaseRequest names a held row as a person sees it: the file's name as
// ingested, the line, and the batch when several files bore that name.
type ReleaseRequest struct {
	File  string `json:"file"`
	Line  int    `json:"line"`
	Batch uint64 `json:"batch,omitempty"`
	By    string `json:"by"` // who approves the change, for the row's history
	// Last4, if set, must be the last four digits of the held row's new
	// account: an approvals file's approver proves they saw the change.
	Last4 string `json:"account_last4,omitempty"`
}

// Release is the one release rule, shared by `batchd release` (ledger
// opened by the command) and POST /v1/release (the running daemon's
// ledger): find the held row, make it pending with who released it, and
// return the line both print. Refusals wrap ErrNotReleasable.
func Release(db ReleaseLedger, req ReleaseRequest) (string, error) {
	if req.File == "" || req.Line <= 0 || req.By == "" {
		return "", refuse("a release needs the file, a line of 1 or more, and who approves it")
	}
	k, err := heldRow(db, req.File, req.Line, req.Batch)
	if err != nil {
		return "", err
	}
	if err := checkLast4(db, k, req); err != nil {
		return "", err
	}
	r, err := db.ApproveHeld(k, req.By)
	if errors.Is(err, payment.ErrIllegal) {
		return "", notReleasable{err}
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("released %s line %d (%s, %s): now %s, sent by the next submit run",
		req.File, req.Line, k, r.Payment.Name, r.State), nil
}

// heldRow finds the row at line of the payment batch ingested as file (of
// batch, when given), and refuses, saying why, one that is not held.
func heldRow(db payment.RowReader, file string, line int, batch uint64) (payment.RowKey, error) {
	r, err := rowAt(db, file, line, batch, func(r *payment.Row) error {
		if r.State != payment.Held {
			return refuse("%s line %d (%s) is %s, not held: there is nothing to release",
				file, line, r.Key, r.ReportStatus())
		}
		return nil
	})
	if err != nil {
		return payment.RowKey{}, err
	}
	return r.Key, nil
}

// rowAt finds the row at line of the payment batch ingested as file (of
// batch, when given): the one way a person names a row. accept refuses,
// saying why, a row the caller cannot act on; a name that several
// batches bore is refused unless batch says which.
func rowAt(db payment.RowReader, file string, line int, batch uint64, accept func(*payment.Row) error) (*payment.Row, error) {
	batches, err := db.Batches()
	if err != nil {
		return nil, err
	}
	var found []*payment.Row
	for _, b := range batches {
		if !b.Kind.Payments() || b.File != file || (batch != 0 && b.ID != batch) {
			continue
		}
		r, err := db.Row(payment.RowKey{Batch: b.ID, Line: uint32(line)})
		if errors.Is(err, payment.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := accept(r); err != nil {
			return nil, err
		}
		found = append(found, r)
	}
	switch len(found) {
	case 0:
		return nil, refuse("no row at %s line %d: check the file name and line with batchd status",
			file, line)
	case 1:
		return found[0], nil
	}
	return nil, refuse("%d batches of %s hold a row at line %d (%s and %s): say which with --batch N",
		len(found), file, line, found[0].Key, found[1].Key)
}

// checkLast4 refuses a release whose Last4 is not the last four digits of
// the held row's new account; no Last4, nothing to check.
func checkLast4(db payment.RowReader, k payment.RowKey, req ReleaseRequest) error {
	if req.Last4 == "" {
		return nil
	}
	r, err := db.Row(k)
	if err != nil {
		return err
	}
	p := r.Payment
	match := p.BankAccount != "" && strings.HasSuffix(strings.TrimSpace(p.BankAccount), req.Last4) ||
		p.BankAccount == "" && p.AccountLast4 == req.Last4
	if !match {
		return refuse("%s line %d (%s): the last four digits of the new account are not %s (it is %s): check the account the payee gave, and approve with its last four digits",
			req.File, req.Line, k, req.Last4, redact.PaymentAccount(&p))
	}
	return nil
}

// ApprovalRelease is ingest's release of one approvals-file line
// (ingest.Options.Release): Release with the line's last four digits; a
// refusal is the line's result, not an error.
func ApprovalRelease(db ReleaseLedger) ingest.ReleaseFunc {
	return func(_ context.Context, a ingest.Approval) (bool, string, error) {
		msg, err := Release(db, ReleaseRequest{File: a.File, Line: a.Line, By: a.By, Last4: a.Last4})
		if errors.Is(err, ErrNotReleasable) {
			return false, err.Error(), nil
		}
		if err != nil {
			return false, "", err
		}
		return true, msg, nil
	}
}
