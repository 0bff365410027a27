package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/state/kv"
	"github.com/batchd/batchd/internal/webhook"
)

// eventChunk is how many events one read or prune transaction takes (a
// variable so that tests can make it small).
var eventChunk = 1000

// Events calls fn with each recorded event, oldest first (by when it was
// received), until fn returns false or an error: what reconcile needs to
// name the checks the service told of that no row owns, and what a test
// needs to see what Record kept. Like the row scans, it reads in short
// transactions and calls fn outside them, so fn may write to the ledger.
func (d *DB) Events(fn func(EventRecord) (bool, error)) error {
	return d.eventsSince(time.Time{}, fn)
}

// UnknownEvents returns the events received at or after since whose
// check or source no row owned (EventUnknown), oldest first: checks the
// service reports that are not batchd's, or belong to a row in doubt.
func (d *DB) UnknownEvents(since time.Time) ([]EventRecord, error) {
	var out []EventRecord
	err := d.eventsSince(since, func(e EventRecord) (bool, error) {
		if e.Outcome == EventUnknown {
			out = append(out, e)
		}
		return true, nil
	})
	return out, err
}

// eventsSince walks hook_times from since, in chunks, reading each
// event's record.
func (d *DB) eventsSince(since time.Time, fn func(EventRecord) (bool, error)) error {
	from := timePrefix(since)
	var after []byte
	for {
		var recs []EventRecord
		end := true
		err := d.view(func(tx kv.Tx) error {
			times, events := tx.Bucket(bucketHookTimes), tx.Bucket(bucketHookEvents)
			if times == nil || events == nil {
				return nil // no event was ever recorded
			}
			c := times.Cursor()
			k, _ := c.Seek(from)
			if after != nil {
				if k, _ = c.Seek(after); k != nil && bytes.Equal(k, after) {
					k, _ = c.Next()
				}
			}
			for ; k != nil && len(recs) < eventChunk; k, _ = c.Next() {
				after = append(after[:0], k...)
				rec, err := eventAt(events, k)
				if err != nil {
					return err
				}
				recs = append(recs, rec)
			}
			end = k == nil
			return nil
		})
		if err != nil {
			return fmt.Errorf("read webhook events: %w", err)
		}
		for _, rec := range recs {
			if more, err := fn(rec); err != nil || !more {
				return err
			}
		}
		if end {
			return nil
		}
	}
}

// eventAt reads the record that the hook_times key k names.
func eventAt(events kv.Bucket, k []byte) (EventRecord, error) {
	if len(k) <= 8 {
		return EventRecord{}, fmt.Errorf("hook_times holds a key of %d bytes", len(k))
	}
	id := k[8:]
	raw := events.Get(id)
	if raw == nil {
		return EventRecord{}, fmt.Errorf("hook_times names event %s, which hook_events does not hold", id)
	}
	return decodeEvent(id, raw)
}

func decodeEvent(id, raw []byte) (EventRecord, error) {
	var rec EventRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return EventRecord{}, fmt.Errorf("decode webhook event %s: %w", id, err)
	}
	rec.ID = string(id)
	return rec, nil
}

// PruneEvents removes the events received before before, and returns how
// many. The records are the dedupe memory of deliveries, which the
// service stops retrying within days; an event older than the horizon
// that comes again is recorded anew, and since a pushed status only ever
// advances, applying it again changes nothing. It deletes in transactions
// of eventChunk events, oldest first, so that it never holds the ledger
// long; a failure leaves the events before it pruned and the rest as
// they were.
func (d *DB) PruneEvents(before time.Time) (int, error) {
	if before.IsZero() {
		return 0, nil
	}
	cut := timePrefix(before)
	total := 0
	for {
		n := 0
		err := d.update(func(tx kv.Tx) error {
			n = 0
			times, events := tx.Bucket(bucketHookTimes), tx.Bucket(bucketHookEvents)
			if times == nil || events == nil {
				return nil
			}
			var keys [][]byte
			c := times.Cursor()
			for k, _ := c.First(); k != nil && len(keys) < eventChunk && bytes.Compare(k, cut) < 0; k, _ = c.Next() {
				keys = append(keys, bytes.Clone(k))
			}
			for _, k := range keys {
				if err := times.Delete(k); err != nil {
					return err
				}
				if len(k) > 8 {
					if err := events.Delete(k[8:]); err != nil {
						return err
					}
				}
			}
			n = len(keys)
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("prune webhook events before %s: %w", before.UTC().Format(time.RFC3339), err)
		}
		total += n
		if n < eventChunk {
			return total, nil
		}
	}
}

// eventInvariants checks the webhook events for `batchd check`: the two
// buckets come together or not at all (a ledger that never received an
// event has neither); every record decodes, with a receive time and a
// known outcome; an applied event names the check or source it applied
// to; and hook_times holds exactly one entry per record, at its receive
// time.
func (r *Report) eventInvariants(tx kv.Tx) {
	events, times := tx.Bucket(bucketHookEvents), tx.Bucket(bucketHookTimes)
	switch {
	case events == nil && times == nil:
		return
	case events == nil || times == nil:
		r.add("ledger", "has only one of the %q and %q buckets", bucketHookEvents, bucketHookTimes)
		return
	}
	_ = events.ForEach(func(id, raw []byte) error {
		r.Events++
		where := "webhook event " + string(id)
		rec, err := decodeEvent(id, raw)
		if err != nil {
			r.add(where, "does not decode: %v", err)
			return nil
		}
		switch rec.Outcome {
		case EventApplied:
			if rec.Kind == webhook.KindSource && rec.SourceID == "" {
				r.add(where, "was applied but names no funding source")
			} else if rec.Kind != webhook.KindSource && rec.CheckID == "" {
				r.add(where, "was applied but names no check")
			}
		case EventUnchanged, EventUnknown, EventIgnored:
		default:
			r.add(where, "has the unknown outcome %q", rec.Outcome)
		}
		if rec.Received.IsZero() {
			r.add(where, "has no receive time")
		} else if times.Get(eventTimeKey(rec.Received, rec.ID)) == nil {
			r.add(where, "is missing from the hook_times index")
		}
		return nil
	})
	if n := times.KeyN(); n != r.Events {
		r.add("hook_times", "holds %d entries for %d webhook events", n, r.Events)
	}
}
