package state

import (
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/state/kv"
)

// LastSuccess returns when the named job last ran successfully, so that a
// daemon started after a missed run can catch it up.
func (d *DB) LastSuccess(job string) (time.Time, bool, error) {
	var (
		at time.Time
		ok bool
	)
	err := d.view(func(tx kv.Tx) error {
		raw := tx.Bucket(bucketJobs).Get([]byte(job))
		if raw == nil {
			return nil
		}
		ok = true
		return at.UnmarshalText(raw)
	})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("last success of %s: %w", job, err)
	}
	return at, ok, nil
}

// RecordSuccess stores the start time of the named job's latest successful
// run.
func (d *DB) RecordSuccess(job string, at time.Time) error {
	raw, err := at.UTC().MarshalText()
	if err != nil {
		return err
	}
	// Each success also raises the ledger's generation and records it in
	// the marker, so that a copy taken before it and put back by hand is
	// refused (see Open).
	err = d.update(func(tx kv.Tx) error {
		if err := tx.Bucket(bucketJobs).Put([]byte(job), raw); err != nil {
			return err
		}
		return d.bumpGeneration(tx)
	})
	if err != nil {
		return fmt.Errorf("record success of %s: %w", job, err)
	}
	_ = d.writeMarker() // best effort: a marker behind the ledger is never wrong
	return nil
}

// Ping checks that the database answers a read, for health checks.
func (d *DB) Ping() error {
	return d.view(func(tx kv.Tx) error {
		if tx.Bucket(bucketMeta) == nil {
			return fmt.Errorf("state %s: meta bucket missing", d.Path())
		}
		return nil
	})
}
