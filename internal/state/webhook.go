package state

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
	"github.com/batchd/batchd/internal/webhook"
)

// Webhook events. The service pushes an event whenever a check or a
// funding source changes, and delivers it again until it is answered 2xx,
// so one event may come many times, late, and after a newer one. The
// ledger is the receiver's webhook.Store: Record keeps every event once,
// keyed by its id, and applies it to the row that owns its check or
// source with the rules reconcile uses (seeCheck, sourceMoves), plus one
// of its own: a pushed check status must advance (payment.Status.Advances),
// because an event may be older than what the ledger already has.
//
// Two buckets hold the events. They are made by the first Record, not by
// Open, so a ledger that never received a webhook has neither, the schema
// stays 2, and a ledger without them is sound:
//
//	hook_events  event id -> EventRecord (JSON)
//	hook_times   received (Unix ns, big-endian) + event id -> nil
//
// hook_times orders the events by when they arrived, so that a prune or
// a look at recent events reads only the events it wants, not all of them.

var (
	bucketHookEvents = []byte("hook_events")
	bucketHookTimes  = []byte("hook_times")
)

// EventOutcome is what recording an event did to the ledger.
type EventOutcome string

// The outcomes.
const (
	// EventApplied: the event moved its row (a new status, a history step).
	EventApplied EventOutcome = "applied"
	// EventUnchanged: a row owns the event's check or source, but the
	// event does not move it (a status already recorded, an older one, a
	// final check, a source no longer pending); only its HeardAt moved.
	EventUnchanged EventOutcome = "unchanged"
	// EventUnknown: no row owns the check or source. It is not batchd's,
	// or it belongs to a row in doubt, which submit's resolver settles;
	// reconcile lists such checks among its exceptions.
	EventUnknown EventOutcome = "unknown"
	// EventIgnored: the event names no check or source batchd follows
	// (user.*, endpoint.test, a check event without a check id).
	EventIgnored EventOutcome = "ignored"
)

// EventRecord is what the ledger keeps of one webhook event: enough to
// dedupe a redelivery and to tell later what the event was and what it
// did, not the body (webhook.Event.Raw), which would make every record
// up to 64 KiB.
type EventRecord struct {
	ID       string       `json:"-"` // the key: webhook.Event.ID
	Received time.Time    `json:"received"`
	Name     string       `json:"name"`
	Kind     webhook.Kind `json:"kind"`
	CheckID  string       `json:"check_id,omitempty"`
	SourceID string       `json:"source_id,omitempty"`
	UserID   string       `json:"user_id,omitempty"`
	// Status is the check's status for a check event, the source's for a
	// source event, as the event gave it.
	Status  string       `json:"status,omitempty"`
	At      time.Time    `json:"at,omitzero"` // when the service says it happened
	Outcome EventOutcome `json:"outcome"`
}

// maxEventID bounds an event id; webhook.Decode makes 64 hex digits.
const maxEventID = 256

// testHookRecordTx, when set, runs at the end of Record's transaction,
// after the event was applied and stored; an error it returns rolls the
// transaction back. Tests use it to fail a Record before its commit.
var testHookRecordTx func(e webhook.Event) error

// The ledger is the webhook receiver's Store.
var _ webhook.Store = (*DB)(nil)

// Record keeps e and applies it, in one transaction: when it returns nil
// the event and its effect are on disk together, and when it fails
// neither is. It reports duplicate, changing nothing, when an event with
// e.ID was recorded before (and not yet pruned: see PruneEvents). It is
// safe for concurrent use: of two Records of one event, exactly one
// applies it. A failure to read or write the ledger wraps
// payment.ErrLedger.
//
// ctx is checked only before the transaction: bbolt cannot abandon one,
// and once the ledger's writer lock is had, finishing the small write is
// better than sending the service back to retry it.
func (d *DB) Record(ctx context.Context, e webhook.Event) (duplicate bool, err error) {
	duplicate, _, err = d.RecordEvent(ctx, e)
	return duplicate, err
}

// RecordEvent is Record, also returning the final status the event moved
// its check's row to ("" when it moved none there), so that the receiver
// can count how payments ended (batchd_checks_final_total) as reconcile
// does: once, by whichever way the status reached the ledger first.
func (d *DB) RecordEvent(ctx context.Context, e webhook.Event) (duplicate bool, final payment.Status, err error) {
	if err := ctx.Err(); err != nil {
		return false, "", fmt.Errorf("record webhook event %s: %w", e.ID, err)
	}
	if e.ID == "" || len(e.ID) > maxEventID {
		return false, "", fmt.Errorf("record webhook event %q: an event id must be 1 to %d bytes", clip(e.ID, 80), maxEventID)
	}
	id := []byte(e.ID)
	// A redelivery is common (the service retries after any slow
	// answer): it costs a read, not a commit.
	err = d.view(func(tx kv.Tx) error {
		b := tx.Bucket(bucketHookEvents)
		duplicate = b != nil && b.Get(id) != nil
		return nil
	})
	if err != nil || duplicate {
		return duplicate, "", wrapRecord(e, err)
	}
	// Unfenced: a standby's webhook receiver records events too. That is
	// safe because an event only ever advances a check's status (a final
	// one never changes), creates, sends and releases nothing, and the
	// store serialises it with the leader's writes.
	err = d.updateUnfenced(func(tx kv.Tx) error {
		duplicate, final = false, ""
		events, err := tx.CreateBucketIfNotExists(bucketHookEvents)
		if err != nil {
			return err
		}
		if events.Get(id) != nil {
			duplicate = true // recorded between the read and this write
			return nil
		}
		times, err := tx.CreateBucketIfNotExists(bucketHookTimes)
		if err != nil {
			return err
		}
		now := d.now().UTC()
		rec := recordOf(e, now)
		if rec.Outcome, err = d.applyEvent(tx, e, now); err != nil {
			return err
		}
		if rec.Outcome == EventApplied && e.Kind == webhook.KindCheck && e.CheckStatus.Final() {
			final = e.CheckStatus
		}
		raw, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		if err := events.Put(id, raw); err != nil {
			return err
		}
		if err := times.Put(eventTimeKey(now, e.ID), nil); err != nil {
			return err
		}
		if testHookRecordTx != nil {
			return testHookRecordTx(e)
		}
		return nil
	})
	if err != nil {
		final = ""
	}
	return duplicate, final, wrapRecord(e, err)
}

func wrapRecord(e webhook.Event, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("record webhook event %s (%s): %w", e.ID, clip(e.Name, 80), err)
}

// recordOf is what the ledger keeps of e, received at now.
func recordOf(e webhook.Event, now time.Time) EventRecord {
	rec := EventRecord{ID: e.ID, Received: now, Name: e.Name, Kind: e.Kind, CheckID: e.CheckID,
		SourceID: e.SourceID, UserID: e.UserID, Status: string(e.CheckStatus)}
	if e.Kind == webhook.KindSource || rec.Status == "" {
		rec.Status = string(e.SourceStatus)
	}
	if !e.At.IsZero() {
		rec.At = e.At.UTC()
	}
	return rec
}

// applyEvent applies e inside tx, at now, and says what it did.
func (d *DB) applyEvent(tx kv.Tx, e webhook.Event, now time.Time) (EventOutcome, error) {
	switch {
	case e.Kind == webhook.KindCheck && e.CheckID != "":
		return d.hearCheck(tx, e, now)
	case e.Kind == webhook.KindSource && e.SourceID != "":
		return d.hearSource(tx, e, now)
	}
	return EventIgnored, nil
}

// hearCheck applies a check event to the row that owns the check. The
// status moves only forward (payment.Status.Advances), and through
// seeCheck, as reconcile moves it; the row's HeardAt moves in any case.
func (d *DB) hearCheck(tx kv.Tx, e webhook.Event, now time.Time) (EventOutcome, error) {
	return paymentRows.hear(d, tx, e.CheckID, eventNote(e), now,
		func(r *payment.Row) bool { return checkObservable(r) && e.CheckStatus.Advances(r.CheckStatus) },
		func(r *payment.Row) { seeCheck(r, e.CheckStatus, now) })
}

// hearSource applies a source event to the row that owns the source, by
// the rule reconcile follows (sourceMoves: only a pending source's row
// changes); the row's HeardAt moves in any case.
func (d *DB) hearSource(tx kv.Tx, e webhook.Event, now time.Time) (EventOutcome, error) {
	// A word batchd does not know changes nothing here: an event is news,
	// not the listing reconcile takes as the current truth.
	return sourceRows.hear(d, tx, e.SourceID, eventNote(e), now,
		func(r *funding.Row) bool { return e.SourceStatus.Known() && sourceMoves(r, e.SourceStatus) },
		func(r *funding.Row) { seeSource(r, e.SourceStatus, now) })
}

// eventNote is the history step's note for a change an event made. Every
// row keeps its whole history, so an odd, long name is cut short.
func eventNote(e webhook.Event) string { return "webhook " + clip(e.Name, 64) }

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// eventTimeKey is an event's key in hook_times: when it was received, in
// Unix nanoseconds, big-endian so that keys sort by time, then its id.
func eventTimeKey(t time.Time, id string) []byte {
	return append(timePrefix(t), id...)
}

// timePrefix is the first 8 bytes of the hook_times keys of events
// received at t. A time before 1970 sorts first.
func timePrefix(t time.Time) []byte {
	ns := t.UnixNano()
	if t.IsZero() || ns < 0 {
		ns = 0
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(ns))
	return b[:]
}
