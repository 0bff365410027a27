package state

import (
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// The methods below are the row transitions that submit and reconcile
// drive. Those that workers call concurrently (Send, Created, Reject,
// Doubt, Release) go through bbolt's Batch, which coalesces concurrent
// callers into one fsync'd commit: group commit, so that many workers cost
// far fewer than one commit per row each.

// Send marks a pending row in flight and returns it. When Send returns nil
// the intent is on disk, and only then may the create request leave.
func (d *DB) Send(k payment.RowKey) (*payment.Row, error) {
	return paymentRows.send(d, k, nil)
}

// Created records the check that a create made, or that a lookup found
// for a row in doubt.
func (d *DB) Created(k payment.RowKey, res payment.CheckResult) (*payment.Row, error) {
	if res.CheckID == "" {
		return nil, fmt.Errorf("row %s: created without a check id", k)
	}
	note := res.Note
	seen := d.now().UTC()
	return paymentRows.batchApply(d, k, payment.Create, note, func(r *payment.Row) error {
		r.CheckID, r.CheckStatus = res.CheckID, res.Status
		r.CheckCreated, r.StatusSeenAt = res.Created, seen
		r.Risk, r.FundConfirmation = res.Risk, res.FundConfirmation
		r.Error = ""
		return nil
	})
}

// Reject records that the API refused the create, with its message.
func (d *DB) Reject(k payment.RowKey, message string) (*payment.Row, error) {
	return paymentRows.batchApply(d, k, payment.Reject, "refused by the API", func(r *payment.Row) error {
		r.Error = message
		return nil
	})
}

// Doubt records that a create's answer was lost: the check may or may not
// exist, and the row must be looked up before it is ever sent again.
func (d *DB) Doubt(k payment.RowKey, reason string) (*payment.Row, error) {
	return paymentRows.doubt(d, k, reason)
}

// Release returns a row to pending: the create certainly made no check
// (refused before it was processed, or a lookup proved no check exists).
// A row loaded held and never approved (a held row suspected by a
// restore) goes back to held instead (payment.Rehold), with its reason:
// the lookup proved it unpaid, not approved.
func (d *DB) Release(k payment.RowKey, reason string) (*payment.Row, error) {
	var out *payment.Row
	err := d.batch(func(tx kv.Tx) error {
		r, err := paymentRows.get(d.ring(), tx, k)
		if err != nil {
			return err
		}
		if !r.HeldUnapproved() {
			out, err = paymentRows.apply(d, tx, k, payment.Release, reason, nil)
			return err
		}
		why, err := heldReason(tx, k)
		if err != nil {
			return err
		}
		out, err = paymentRows.apply(d, tx, k, payment.Rehold, reason, func(r *payment.Row) error {
			r.Error = why
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("release row %s: %w", k, err)
	}
	return out, nil
}

// ObserveStatus records a check status seen at the service at time at.
// It reports whether anything changed; an unchanged status adds no step.
func (d *DB) ObserveStatus(k payment.RowKey, status payment.Status, at time.Time) (changed bool, err error) {
	rows, err := d.ObserveStatuses([]payment.Observation{{Key: k, Status: status}}, at)
	if err != nil {
		return false, err
	}
	return rows[k] != nil, nil
}

// ObserveStatuses records many observed statuses in one transaction (one
// fsync for a whole page of the check list, not one per row). A row that
// is not submitted, already shows the status, or whose check is already
// final is left alone: a final status never changes. It returns the rows
// it changed, as they now are.
func (d *DB) ObserveStatuses(obs []payment.Observation, at time.Time) (map[payment.RowKey]*payment.Row, error) {
	changed, err := observe(d, paymentRows, obs, func(o payment.Observation) payment.RowKey { return o.Key },
		func(r *payment.Row, o payment.Observation) bool {
			return checkObservable(r) && r.CheckStatus != o.Status
		},
		func(r *payment.Row, o payment.Observation) { seeCheck(r, o.Status, at) })
	if err != nil {
		return nil, fmt.Errorf("observe %d statuses: %w", len(obs), err)
	}
	return changed, nil
}

// checkObservable is the rule every observed status starts from, polled
// or pushed: only a submitted row whose check is not final takes one.
func checkObservable(r *payment.Row) bool {
	return r.State == payment.Submitted && !r.CheckStatus.Final()
}

// seeCheck records on r that its check was seen in status s at at: the
// status, when it was seen, and the first time it was seen deposited.
// Reconcile and webhooks both apply a status through it, so a row reads
// the same whichever way the status reached batchd.
func seeCheck(r *payment.Row, s payment.Status, at time.Time) {
	r.CheckStatus, r.StatusSeenAt = s, at.UTC()
	if s == payment.StatusDeposited && r.DepositedSeenAt.IsZero() {
		r.DepositedSeenAt = at.UTC()
	}
}

// Voided records that batchd voided the row's check itself, and why.
func (d *DB) Voided(k payment.RowKey, reason string) error {
	at := d.now().UTC()
	err := d.update(func(tx kv.Tx) error {
		_, err := paymentRows.apply(d, tx, k, payment.Observe, payment.VoidedByBatchdNote+reason, func(r *payment.Row) error {
			r.CheckStatus, r.StatusSeenAt, r.Error = "void", at, reason
			return nil
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("record void of %s: %w", k, err)
	}
	return nil
}

// RecoverInFlight turns every row left in flight by an earlier process into
// a row in doubt: its request may have left before the crash. It returns
// how many it found.
func (d *DB) RecoverInFlight() (int, error) { return paymentRows.recoverInFlight(d) }
