package payment

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// RowState is where a row stands in batchd's own lifecycle. The status of
// its check at the service is kept apart, in Row.CheckStatus.
type RowState string

// The row states. Pending, InFlight, InDoubt and Held are "open": the row
// has no check yet. Submitted and Rejected are the ends of submission.
const (
	Pending   RowState = "pending"   // valid, waiting to be sent
	InFlight  RowState = "in_flight" // create request about to leave or out
	InDoubt   RowState = "in_doubt"  // the create's answer was lost; look it up before anything else
	Submitted RowState = "submitted" // the check exists; CheckID is set
	Rejected  RowState = "rejected"  // the API refused the create (4xx); final
	// Held is a row loaded held because its payee's bank account changed
	// (ingest.on_account_change: hold): never sent until a person
	// approves it (Approve). It keeps its account, as a pending row does.
	Held RowState = "held"
)

// Open reports whether the row still has no check.
func (s RowState) Open() bool { return s == Pending || s == InFlight || s == InDoubt || s == Held }

// Transition names a legal change of a row's state. Every ledger backend
// applies the same table (Rule), so the lifecycle is decided here once.
type Transition string

// The transitions.
const (
	Send    Transition = "send"    // pending -> in_flight, committed before the request leaves
	Create  Transition = "create"  // in_flight|in_doubt -> submitted
	Doubt   Transition = "doubt"   // in_flight -> in_doubt
	Reject  Transition = "reject"  // in_flight -> rejected
	Release Transition = "release" // in_flight|in_doubt -> pending: certainly not created
	Observe Transition = "observe" // submitted -> submitted, a new check status seen
	// Suspect puts a row that has no check on record in doubt although no
	// answer was lost: the ledger was restored from a snapshot, and a
	// create may have left after the snapshot was taken. The row is then
	// looked up before it is ever sent.
	Suspect Transition = "suspect" // pending|in_flight|in_doubt|held -> in_doubt
	// Approve is a person's release of a held row (batchd release): it
	// may be sent from then on.
	Approve Transition = "approve" // held -> pending
	// Rehold is Release for a row loaded held and never approved: a
	// lookup after a restore proved it has no check, and it goes back to
	// waiting for a person rather than to pending (see HeldUnapproved).
	Rehold Transition = "rehold" // in_flight|in_doubt -> held
	// KeyLost gives up a row never sent whose full account number no key
	// of the ledger's ring opens any more (batchd keylost): it cannot be
	// sent, so it is rejected, and its payee is paid from a file sent
	// again.
	KeyLost Transition = "key_lost" // pending|held -> rejected
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
	// A held row is suspected too: it may have been approved and sent
	// after the snapshot was taken (see README "Payee bank-detail
	// changes").
	Suspect: {[]RowState{Pending, InFlight, InDoubt, Held}, InDoubt},
	Approve: {[]RowState{Held}, Pending},
	Rehold:  {[]RowState{InFlight, InDoubt}, Held},
	KeyLost: {[]RowState{Pending, Held}, Rejected},
}

// HeldUnapproved reports whether r was loaded held and no person has
// approved it since: such a row, released after a lookup, is held again
// (Rehold), never made pending.
func (r *Row) HeldUnapproved() bool {
	if len(r.History) == 0 || r.History[0].State != Held {
		return false
	}
	for _, s := range r.History {
		if s.Via == Approve {
			return false
		}
	}
	return true
}

// Next returns the state transition t leads to from state from, or an
// error wrapping ErrIllegal when t may not start there.
func (t Transition) Next(from RowState) (RowState, error) {
	rule, ok := transitions[t]
	if !ok {
		return "", fmt.Errorf("%w: unknown transition %q", ErrIllegal, t)
	}
	if !slices.Contains(rule.from, from) {
		return "", fmt.Errorf("%w: %s from %s", ErrIllegal, t, from)
	}
	return rule.to, nil
}

// Errors every ledger backend returns for the same refusals, so that the
// jobs can tell a refused change (someone else got there first) from a
// ledger that cannot be written.
var (
	// ErrIllegal is wrapped by every refused transition.
	ErrIllegal = errors.New("illegal row transition")
	// ErrNotFound is returned for a row, batch or file that does not exist.
	ErrNotFound = errors.New("not found")
	// ErrCheckOwned is wrapped when a check would be bound to a row while
	// another row already owns it.
	ErrCheckOwned = errors.New("check already belongs to another row")
	// ErrDuplicate is returned by BeginBatch for content already ingested.
	ErrDuplicate = errors.New("file content already ingested")
)

// RowKey identifies a row: its batch and its physical line in the file.
// Keys sort in batch then line order, the order submit works in.
type RowKey struct {
	Batch uint64
	Line  uint32
}

// String formats the key as "batch 7 line 12" for messages.
func (k RowKey) String() string { return fmt.Sprintf("batch %d line %d", k.Batch, k.Line) }

// Step is one entry of a row's history. Via names the transition; Note is
// kept only when it says more than Via does (a reason, how a check was
// found), because a million rows each carry their whole history.
type Step struct {
	At          time.Time  `json:"at"`
	State       RowState   `json:"state"`
	CheckStatus Status     `json:"check_status,omitempty"`
	Note        string     `json:"note,omitempty"`
	Via         Transition `json:"via,omitempty"`
}

// Row is one payment and everything batchd knows of it.
type Row struct {
	Key     RowKey   `json:"-"`
	State   RowState `json:"state"`
	Payment Payment  `json:"payment"`

	// Label and Number are the identity the check carries, so a lost
	// answer can be looked up. They are fixed at ingest and change only
	// with the check itself, by an edit file (EditFields.ApplyTo).
	Label  string `json:"label"`
	Number string `json:"number"`

	Attempts  int       `json:"attempts,omitempty"`
	AttemptAt time.Time `json:"attempt_at,omitzero"` // when the last create was sent

	CheckID          string    `json:"check_id,omitempty"`
	CheckStatus      Status    `json:"check_status,omitempty"`
	CheckCreated     time.Time `json:"check_created,omitzero"` // the check's date at the service
	StatusSeenAt     time.Time `json:"status_seen_at,omitzero"`
	DepositedSeenAt  time.Time `json:"deposited_seen_at,omitzero"`
	Risk             string    `json:"risk,omitempty"`
	FundConfirmation string    `json:"fund_confirmation,omitempty"`
	Error            string    `json:"error,omitempty"` // the API's message, or why batchd voided
	// HeardAt is when a webhook event last told batchd something about
	// the row's check, whether or not it changed the status, so that a
	// check the service still reports on can be told from one it has gone
	// quiet about, which only polling then follows. Zero when no event
	// ever named the check.
	HeardAt time.Time `json:"heard_at,omitzero"`
	// SendBy is the last moment the create intent recorded by the latest
	// Send may leave the process, on a ledger that fences (several
	// instances, one leader): a worker drops a request past it, and a
	// new leader resolves the row in doubt only after it (plus a margin
	// for clocks). Zero when the ledger sets no deadline (bbolt: one
	// process, nothing to fence).
	SendBy time.Time `json:"send_by,omitzero"`

	History []Step `json:"history"`
}

// Identity is the row's check identity: what its check carries.
func (r *Row) Identity() Identity {
	return Identity{Label: r.Label, Number: r.Number, Amount: r.Payment.Amount}
}

// ReportStatus is the one word a report shows for the row: its check's
// status once it has a check, else its own state (pending, rejected, …).
func (r *Row) ReportStatus() string {
	if r.State == Submitted {
		return string(r.CheckStatus)
	}
	return string(r.State)
}

// Final reports whether nothing more will happen to the row: rejected, or
// its check reached a final status.
func (r *Row) Final() bool {
	return r.State == Rejected || (r.State == Submitted && r.CheckStatus.Final())
}

// CheckResult is what a successful create (or a lookup that found the
// check) tells about the check.
type CheckResult struct {
	CheckID          string
	Status           Status
	Created          time.Time
	Risk             string
	FundConfirmation string
	Note             string // how it was found, e.g. "found by label and number after a lost answer"
}

// ResultOf is what the ledger keeps of a check the service described.
func ResultOf(c *Check, note string) CheckResult {
	return CheckResult{CheckID: c.ID, Status: c.Status, Created: c.Created, Risk: c.Risk,
		FundConfirmation: c.FundConfirmation, Note: note}
}

// Observation is one check status seen at the service.
type Observation struct {
	Key    RowKey
	Status Status
}

// Attempt is what the row engine (internal/rowrun) reads of a row of any
// kind that calls the service: its key and state, when its last request
// was made, and its send-by deadline (zero: none).
type Attempt struct {
	Key    RowKey
	State  RowState
	At     time.Time
	SendBy time.Time
}

// Attempt is the row's, for the row engine.
func (r *Row) Attempt() Attempt {
	return Attempt{Key: r.Key, State: r.State, At: r.AttemptAt, SendBy: r.SendBy}
}
