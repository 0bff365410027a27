package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
)

// record is what the reports need of one submitted row: a few hundred
// bytes instead of the whole row with its history, so that a run over
// 100,000 checks stays small.
type record struct {
	key     payment.RowKey
	version int // len(Row.History): a later version of the same row has a longer history
	checkID string
	number  string
	label   string
	name    string
	account string // masked
	amount  money.Cents
	status  payment.Status

	created       time.Time // the check's date at the service
	statusSeen    time.Time
	depositedSeen time.Time
	finalSince    time.Time // when the check was first recorded in its final status; zero while not final
	unpaid        *unpaid   // nil unless the check ended not paid (outcomes.go)
	cancelled     bool      // a cancel file had batchd void the check (payment.Row.Cancelled)
	routing       string    // the payee's bank's routing number, for its name
}

func recordOf(r *payment.Row) *record {
	return &record{
		key: r.Key, version: len(r.History), checkID: r.CheckID, number: r.Number, label: r.Label,
		name: r.Payment.Name, account: redact.PaymentAccount(&r.Payment), amount: r.Payment.Amount, status: r.CheckStatus,
		created: r.CheckCreated, statusSeen: r.StatusSeenAt, depositedSeen: r.DepositedSeenAt,
		finalSince: finalSince(r), unpaid: unpaidOf(r), cancelled: cancelledOf(r), routing: r.Payment.BankRouting,
	}
}

func cancelledOf(r *payment.Row) bool {
	_, asked := r.Cancelled()
	return asked
}

// outcome is what the record's status says of the money, as
// payment.Row.Outcome says it: a check voided on a cancel file's request
// is cancelled, not owed.
func (rec *record) outcome() payment.Outcome {
	if rec.cancelled && rec.status == payment.StatusVoid {
		return payment.OutcomeCancelled
	}
	return rec.status.Outcome()
}

// final reports whether nothing more will happen to the record's check.
func (rec *record) final() bool { return rec.status.Final() }

// serviceDate is the check's creation date as the service's list filters
// it: the service writes dates in UTC.
func (rec *record) serviceDate() Date { return DateOf(rec.created.UTC()) }

// depositDay is the day, in loc, batchd first saw the check deposited:
// DepositedSeenAt, or for a check that was already deposited when batchd
// first recorded it (a lookup after a lost answer), when it recorded it;
// the zero Date when it is not deposited.
func (rec *record) depositDay(loc *time.Location) Date {
	if rec.status != "deposited" {
		return Date{}
	}
	t := rec.depositedSeen
	if t.IsZero() {
		t = rec.statusSeen
	}
	if t.IsZero() {
		return Date{}
	}
	return DateOf(t.In(loc))
}

// identity is the check identity of the record's row.
func (rec *record) identity() payment.Identity {
	return payment.Identity{Label: rec.label, Number: rec.number, Amount: rec.amount}
}

// eachRow calls fn for every row of the Ready batches, in batch and line
// order, until fn returns false or an error, or ctx ends: the one way the
// run reads the whole ledger.
func (m *matcher) eachRow(ctx context.Context, fn func(*payment.Row) (bool, error)) error {
	for _, b := range m.batches {
		if b.Status != payment.BatchReady {
			continue
		}
		more := true
		err := m.db.Rows(b.ID, func(r *payment.Row) (bool, error) {
			if err := ctx.Err(); err != nil {
				return false, err
			}
			var err error
			more, err = fn(r)
			return more, err
		})
		if err != nil {
			return fmt.Errorf("read rows of batch %d: %w", b.ID, err)
		}
		if !more {
			return nil
		}
	}
	return nil
}
