package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
	bolt "go.etcd.io/bbolt"
)

// RowState is where a row stands in batchd's own lifecycle. The status of
// its check at the service is kept apart, in Row.CheckStatus.
type RowState string

// The row states. Pending, InFlight and InDoubt are "open": the row has no
// check yet. Submitted and Rejected are the ends of submission.
const (
	Pending   RowState = "pending"   // valid, waiting to be sent
	InFlight  RowState = "in_flight" // create request about to leave or out
	InDoubt   RowState = "in_doubt"  // the create's answer was lost; look it up before anything else
	Submitted RowState = "submitted" // the check exists; CheckID is set
	Rejected  RowState = "rejected"  // the API refused the create (4xx); final
)

// Open reports whether the row still has no check.
func (s RowState) Open() bool { return s == Pending || s == InFlight || s == InDoubt }

// Final check statuses (public-api-notes.md): nothing changes after these.
var finalStatus = map[string]bool{"deposited": true, "failed": true, "void": true, "deleted": true}

// FinalStatus reports whether a check status is one no check leaves.
func FinalStatus(status string) bool { return finalStatus[status] }

// Transition names a legal change of a row's state.
type Transition string

// The transitions. Each lists the states it may start from in transitions.
const (
	Send    Transition = "send"    // pending -> in_flight, committed before the request leaves
	Create  Transition = "create"  // in_flight|in_doubt -> submitted
	Doubt   Transition = "doubt"   // in_flight -> in_doubt
	Reject  Transition = "reject"  // in_flight -> rejected
	Release Transition = "release" // in_flight|in_doubt -> pending: certainly not created
	Observe Transition = "observe" // submitted -> submitted, a new check status seen
)

var transitions = map[Transition]struct {
	from []RowState
	to   RowState
}{
	Send:    {[]RowState{Pending}, InFlight},
	Create:  {[]RowState{InFlight, InDoubt}, Submitted},
	Doubt:   {[]RowState{InFlight}, InDoubt},
	Reject:  {[]RowState{InFlight}, Rejected},
	Release: {[]RowState{InFlight, InDoubt}, Pending},
	Observe: {[]RowState{Submitted}, Submitted},
}

// ErrIllegal is wrapped by every refused transition.
var ErrIllegal = errors.New("illegal row transition")

// ErrNotFound is returned for a row, batch or file that does not exist.
var ErrNotFound = errors.New("not found")

// RowKey identifies a row: its batch and its physical line in the file.
// Keys sort in batch then line order, the order submit works in.
type RowKey struct {
	Batch uint64
	Line  uint32
}

func (k RowKey) bytes() []byte {
	var b [12]byte
	binary.BigEndian.PutUint64(b[:8], k.Batch)
	binary.BigEndian.PutUint32(b[8:], k.Line)
	return b[:]
}

func keyFrom(b []byte) RowKey {
	return RowKey{Batch: binary.BigEndian.Uint64(b[:8]), Line: binary.BigEndian.Uint32(b[8:12])}
}

// String formats the key as "batch 7 line 12" for messages.
func (k RowKey) String() string { return fmt.Sprintf("batch %d line %d", k.Batch, k.Line) }

// Step is one entry of a row's history. Via names the transition; Note is
// kept only when it says more than Via does (a reason, how a check was
// found), because a million rows each carry their whole history.
type Step struct {
	At          time.Time  `json:"at"`
	State       RowState   `json:"state"`
	CheckStatus string     `json:"check_status,omitempty"`
	Note        string     `json:"note,omitempty"`
	Via         Transition `json:"via,omitempty"`
}

// Row is one payment and everything batchd knows of it.
type Row struct {
	Key     RowKey          `json:"-"`
	State   RowState        `json:"state"`
	Payment payment.Payment `json:"payment"`

	// Label and Number are the identity the check carries; they are fixed
	// at ingest and never change, so a lost answer can be looked up.
	Label  string `json:"label"`
	Number string `json:"number"`

	Attempts  int       `json:"attempts,omitempty"`
	AttemptAt time.Time `json:"attempt_at,omitzero"` // when the last create was sent

	CheckID          string    `json:"check_id,omitempty"`
	CheckStatus      string    `json:"check_status,omitempty"`
	CheckCreated     time.Time `json:"check_created,omitzero"` // the check's date at the service
	StatusSeenAt     time.Time `json:"status_seen_at,omitzero"`
	DepositedSeenAt  time.Time `json:"deposited_seen_at,omitzero"`
	Risk             string    `json:"risk,omitempty"`
	FundConfirmation string    `json:"fund_confirmation,omitempty"`
	Error            string    `json:"error,omitempty"` // the API's message, or why batchd voided

	History []Step `json:"history"`
}

// Final reports whether nothing more will happen to the row: rejected, or
// its check reached a final status.
func (r *Row) Final() bool {
	return r.State == Rejected || (r.State == Submitted && FinalStatus(r.CheckStatus))
}

// CheckResult is what a successful create (or a lookup that found the
// check) tells about the check.
type CheckResult struct {
	CheckID          string
	Status           string
	Created          time.Time
	Risk             string
	FundConfirmation string
	Note             string // how it was found, e.g. "found by label and number after a lost answer"
}

// apply runs transition t on the row stored under k inside tx. mutate may
// adjust the row further; the state change, the history step and every
// index are maintained here, so no caller can forget one.
func (d *DB) apply(tx *bolt.Tx, k RowKey, t Transition, note string, mutate func(*Row) error) (*Row, error) {
	rule, ok := transitions[t]
	if !ok {
		return nil, fmt.Errorf("%w: unknown transition %q", ErrIllegal, t)
	}
	r, err := getRow(tx, k)
	if err != nil {
		return nil, err
	}
	allowed := false
	for _, s := range rule.from {
		allowed = allowed || r.State == s
	}
	if !allowed {
		return nil, fmt.Errorf("%s: %w: %s from %s", k, ErrIllegal, t, r.State)
	}
	before := r.State
	r.State = rule.to
	if mutate != nil {
		if err := mutate(r); err != nil {
			return nil, err
		}
	}
	at := d.now().UTC().Truncate(time.Millisecond)
	r.History = append(r.History, Step{At: at, State: r.State, CheckStatus: r.CheckStatus, Note: note, Via: t})
	if !r.State.Open() && r.Payment.BankAccount != "" {
		// Submitted or rejected rows are never sent again: keep only
		// the digits a report may show.
		r.Payment.AccountLast4 = redact.Last4(r.Payment.BankAccount)
		r.Payment.BankAccount = ""
	}
	if err := d.index(tx, r); err != nil {
		return nil, err
	}
	if err := putRow(tx, r); err != nil {
		return nil, err
	}
	if before != r.State {
		if err := bumpCounts(tx, k.Batch, before, r.State); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// index keeps the open, track and checks buckets in step with r.
func (d *DB) index(tx *bolt.Tx, r *Row) error {
	key := r.Key.bytes()
	open, track := tx.Bucket(bucketOpen), tx.Bucket(bucketTrack)
	if r.State.Open() {
		if err := open.Put(key, []byte(r.State)); err != nil {
			return err
		}
	} else if err := open.Delete(key); err != nil {
		return err
	}
	if r.State == Submitted && !FinalStatus(r.CheckStatus) {
		if err := track.Put(key, nil); err != nil {
			return err
		}
	} else if err := track.Delete(key); err != nil {
		return err
	}
	if r.CheckID != "" {
		checks := tx.Bucket(bucketChecks)
		if prev := checks.Get([]byte(r.CheckID)); prev != nil && keyFrom(prev) != r.Key {
			return fmt.Errorf("%s: check %s already belongs to %s", r.Key, r.CheckID, keyFrom(prev))
		}
		return checks.Put([]byte(r.CheckID), key)
	}
	return nil
}

func getRow(tx *bolt.Tx, k RowKey) (*Row, error) {
	raw := tx.Bucket(bucketRows).Get(k.bytes())
	if raw == nil {
		return nil, fmt.Errorf("row %s: %w", k, ErrNotFound)
	}
	return decodeRow(k, raw)
}

func decodeRow(k RowKey, raw []byte) (*Row, error) {
	r := &Row{}
	if err := decodeRowValue(raw, r); err != nil {
		return nil, fmt.Errorf("decode row %s: %w", k, err)
	}
	r.Key = k
	return r, nil
}

func putRow(tx *bolt.Tx, r *Row) error {
	b := tx.Bucket(bucketRows)
	b.FillPercent = rowFill
	return b.Put(r.Key.bytes(), encodeRow(nil, r))
}

// rowFill is how full bbolt fills a page of rows before splitting it.
// Rows are written in key order and then rewritten, growing, as they move
// through their states; splitting pages half-full (bbolt's default)
// leaves the ledger about twice the size of its data, and reconcile, which
// reads every row, keeps all of it in memory.
const rowFill = 0.9
