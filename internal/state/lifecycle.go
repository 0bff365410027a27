package state

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The methods below are the row transitions that submit and reconcile
// drive. Those that workers call concurrently (Send, Created, Reject,
// Doubt, Release) go through bbolt's Batch, which coalesces concurrent
// callers into one fsync'd commit: group commit, so that many workers cost
// far fewer than one commit per row each.

// Send marks a pending row in flight and returns it. When Send returns nil
// the intent is on disk, and only then may the create request leave.
func (d *DB) Send(k RowKey) (*Row, error) {
	at := d.now().UTC()
	return d.batchApply(k, Send, "", func(r *Row) error {
		r.Attempts++
		r.AttemptAt = at
		return nil
	})
}

// Created records the check that a create made, or that a lookup found
// for a row in doubt.
func (d *DB) Created(k RowKey, res CheckResult) (*Row, error) {
	if res.CheckID == "" {
		return nil, fmt.Errorf("row %s: created without a check id", k)
	}
	note := res.Note
	seen := d.now().UTC()
	return d.batchApply(k, Create, note, func(r *Row) error {
		r.CheckID, r.CheckStatus = res.CheckID, res.Status
		r.CheckCreated, r.StatusSeenAt = res.Created, seen
		r.Risk, r.FundConfirmation = res.Risk, res.FundConfirmation
		r.Error = ""
		return nil
	})
}

// Reject records that the API refused the create, with its message.
func (d *DB) Reject(k RowKey, message string) (*Row, error) {
	return d.batchApply(k, Reject, "refused by the API", func(r *Row) error {
		r.Error = message
		return nil
	})
}

// Doubt records that a create's answer was lost: the check may or may not
// exist, and the row must be looked up before it is ever sent again.
func (d *DB) Doubt(k RowKey, reason string) (*Row, error) {
	return d.batchApply(k, Doubt, reason, func(r *Row) error {
		r.Error = reason
		return nil
	})
}

// Release returns a row to pending: the create certainly made no check
// (refused before it was processed, or a lookup proved no check exists).
func (d *DB) Release(k RowKey, reason string) (*Row, error) {
	return d.batchApply(k, Release, reason, nil)
}

// ObserveStatus records a check status seen at the service at time at.
// It reports whether anything changed; an unchanged status adds no step.
func (d *DB) ObserveStatus(k RowKey, status string, at time.Time) (changed bool, err error) {
	rows, err := d.ObserveStatuses([]Observation{{k, status}}, at)
	if err != nil {
		return false, err
	}
	return rows[k] != nil, nil
}

// Observation is one check status seen at the service.
type Observation struct {
	Key    RowKey
	Status string
}

// ObserveStatuses records many observed statuses in one transaction (one
// fsync for a whole page of the check list, not one per row). A row that
// is not submitted, already shows the status, or whose check is already
// final is left alone: a final status never changes. It returns the rows
// it changed, as they now are.
func (d *DB) ObserveStatuses(obs []Observation, at time.Time) (map[RowKey]*Row, error) {
	changed := map[RowKey]*Row{}
	if len(obs) == 0 {
		return changed, nil
	}
	err := d.update(func(tx *bolt.Tx) error {
		clear(changed) // a retried transaction starts over
		for _, o := range obs {
			r, err := getRow(tx, o.Key)
			if err != nil {
				return err
			}
			if r.State != Submitted || r.CheckStatus == o.Status || FinalStatus(r.CheckStatus) {
				continue
			}
			r, err = d.apply(tx, o.Key, Observe, "", func(r *Row) error {
				r.CheckStatus, r.StatusSeenAt = o.Status, at.UTC()
				if o.Status == "deposited" && r.DepositedSeenAt.IsZero() {
					r.DepositedSeenAt = at.UTC()
				}
				return nil
			})
			if err != nil {
				return err
			}
			changed[o.Key] = r
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("observe %d statuses: %w", len(obs), err)
	}
	return changed, nil
}

// Voided records that batchd voided the row's check itself, and why.
func (d *DB) Voided(k RowKey, reason string) error {
	at := d.now().UTC()
	err := d.update(func(tx *bolt.Tx) error {
		_, err := d.apply(tx, k, Observe, "voided by batchd: "+reason, func(r *Row) error {
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
func (d *DB) RecoverInFlight() (int, error) {
	var keys []RowKey
	err := d.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketOpen).ForEach(func(k, v []byte) error {
			if RowState(v) == InFlight {
				keys = append(keys, keyFrom(k))
			}
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("recover rows in flight: %w", err)
	}
	err = d.update(func(tx *bolt.Tx) error {
		for _, k := range keys {
			if _, err := d.apply(tx, k, Doubt, "found in flight at start: the process stopped mid-request", nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("recover rows in flight: %w", err)
	}
	return len(keys), nil
}

// batchApply runs one transition through bbolt's group commit.
func (d *DB) batchApply(k RowKey, t Transition, note string, mutate func(*Row) error) (*Row, error) {
	var out *Row
	err := d.batch(func(tx *bolt.Tx) error {
		r, err := d.apply(tx, k, t, note, mutate)
		out = r
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s row %s: %w", t, k, err)
	}
	return out, nil
}
