package state

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// Checks of lost batches. When the database goes back in time, a batch
// ingested and sent shortly before may be gone from the ledger entirely,
// while its checks exist at the service under its label,
// batchd-<instance>-<batch>. Reconcile recognises them (LostLabels) and
// records them here, so that ingest can refuse the same payments dropped
// again without asking the service. The bucket is made by the first
// RecordLost, not by Open, as the webhook events' are: a ledger that never
// lost a batch has none, and the schema stays as it is.
//
//	lost_checks  check id -> payment.LostCheck (JSON)

var bucketLostChecks = []byte("lost_checks")

// LostLabels says which of labels name a batch this ledger gave out and no
// longer has. A label names one when payment.ParseBatchLabel reads it and
// its instance is the ledger's or one of its previous ones (a restore or
// a detected rewind gives a new one). That batch is lost when the ledger
// has no batch of that number, or has one under another label (the
// number was given out again after the rewind), unless the batch was
// pruned: for the current instance, a number the batch sequence has
// passed; for a previous one, a number that a file record still names
// (prune keeps files). A number the ledger has never given out under the
// current instance is lost too: a rewind not yet detected.
func (d *DB) LostLabels(labels []string) (map[string]bool, error) {
	out := make(map[string]bool, len(labels))
	err := d.view(func(tx kv.Tx) error {
		meta := tx.Bucket(bucketMeta)
		current := string(meta.Get(keyInstance))
		var previous []string
		if raw := meta.Get(keyPrevious); raw != nil {
			if err := json.Unmarshal(raw, &previous); err != nil {
				return fmt.Errorf("previous instances: %w", err)
			}
		}
		batches := tx.Bucket(bucketBatches)
		var filed map[uint64]bool // batch ids the files bucket names, read once when needed
		for _, label := range labels {
			inst, id, ok := payment.ParseBatchLabel(label)
			if !ok || inst != current && !slices.Contains(previous, inst) {
				continue
			}
			if b, err := getBatch(tx, id); err == nil {
				out[label] = !payment.SameLabel(b.Label, label)
				continue
			}
			if inst == current {
				out[label] = id > batches.Sequence()
				continue
			}
			if filed == nil {
				var err error
				if filed, err = filedBatches(tx); err != nil {
					return err
				}
			}
			out[label] = !filed[id]
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find lost batches: %w", err)
	}
	return out, nil
}

// filedBatches is the set of batch ids the files bucket names.
func filedBatches(tx kv.Tx) (map[uint64]bool, error) {
	ids := map[uint64]bool{}
	err := tx.Bucket(bucketFiles).ForEach(func(k, v []byte) error {
		var f payment.File
		if err := json.Unmarshal(v, &f); err != nil {
			return fmt.Errorf("decode file %s: %w", k, err)
		}
		ids[f.BatchID] = true
		return nil
	})
	return ids, err
}

// RecordLost records checks of lost batches, in one transaction. A check
// recorded before keeps its first Recorded time; its status is updated.
// A check without an id or a batch label, or one a row owns, is refused,
// and nothing is recorded.
func (d *DB) RecordLost(cs []payment.LostCheck) error {
	if len(cs) == 0 {
		return nil
	}
	err := d.update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketLostChecks)
		if err != nil {
			return err
		}
		for _, c := range cs {
			if c.ID == "" {
				return fmt.Errorf("a lost check without a check id (label %q)", c.Label)
			}
			if _, _, ok := payment.ParseBatchLabel(c.Label); !ok {
				return fmt.Errorf("check %s: %q is not a batch label of batchd, so it is no lost batch's", c.ID, c.Label)
			}
			if owner := tx.Bucket(bucketChecks).Get([]byte(c.ID)); owner != nil {
				return fmt.Errorf("check %s is %s's, so it is no lost batch's", c.ID, keyFrom(owner))
			}
			if raw := b.Get([]byte(c.ID)); raw != nil {
				var old payment.LostCheck
				if err := json.Unmarshal(raw, &old); err != nil {
					return fmt.Errorf("decode lost check %s: %w", c.ID, err)
				}
				c.Recorded = old.Recorded
			}
			raw, err := json.Marshal(c)
			if err != nil {
				return err
			}
			if err := b.Put([]byte(c.ID), raw); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record %d checks of lost batches: %w", len(cs), err)
	}
	return nil
}

// LostChecks lists the recorded checks of lost batches, by check id.
func (d *DB) LostChecks() ([]payment.LostCheck, error) {
	var out []payment.LostCheck
	err := d.view(func(tx kv.Tx) error {
		b := tx.Bucket(bucketLostChecks)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var c payment.LostCheck
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("decode lost check %s: %w", k, err)
			}
			out = append(out, c)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read the checks of lost batches: %w", err)
	}
	return out, nil
}

// lostInvariants checks the recorded checks of lost batches for `batchd
// check`: each decodes under its own id, carries a batch label, and is
// owned by no row (a check a row owns is that row's, not a lost one).
func (r *Report) lostInvariants(tx kv.Tx) {
	b := tx.Bucket(bucketLostChecks)
	if b == nil {
		return
	}
	owners := tx.Bucket(bucketChecks)
	_ = b.ForEach(func(id, raw []byte) error {
		where := "lost check " + string(id)
		var c payment.LostCheck
		if err := json.Unmarshal(raw, &c); err != nil {
			r.add(where, "does not decode: %v", err)
			return nil
		}
		if c.ID != string(id) {
			r.add(where, "is recorded as check %q", c.ID)
		}
		if _, _, ok := payment.ParseBatchLabel(c.Label); !ok {
			r.add(where, "carries %q, which is not a batch label of batchd", c.Label)
		}
		if owners.Get(id) != nil {
			r.add(where, "is owned by a row of the ledger")
		}
		return nil
	})
}
