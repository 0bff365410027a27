package funding

import (
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// Row is one funding-source (or verification) request and everything
// batchd knows of it. Its State moves by the payment.Transition table, as
// a payment row's does: Pending, InFlight (intent durable, request out),
// InDoubt (answer lost: look it up first), Submitted (the source exists, or
// the verification is done), Rejected (refused; final).
type Row struct {
	Key     payment.RowKey   `json:"-"`
	State   payment.RowState `json:"state"`
	Request Request          `json:"request"`

	// UserID is the customer: the request's, or the one created or found
	// for Request.Customer. Recorded as soon as it is known, so a lost
	// answer of the source's create is looked up under it.
	UserID string `json:"user_id,omitempty"`
	// SourcesBefore are the customer's source ids just before a processor
	// token was sent: a source not among them is one this row made.
	SourcesBefore []string `json:"sources_before,omitempty"`

	Attempts  int       `json:"attempts,omitempty"`
	AttemptAt time.Time `json:"attempt_at,omitzero"`
	// SendBy is the last moment a request of the latest send (the
	// customer's or the source's create) may leave, on a ledger shared
	// under a leader lease (payment.Row.SendBy); zero: no deadline.
	SendBy time.Time `json:"send_by,omitzero"`

	SourceID     string    `json:"source_id,omitempty"`
	Status       Status    `json:"status,omitempty"`
	BankName     string    `json:"bank_name,omitempty"`
	LastFour     string    `json:"last_four,omitempty"`
	StatusSeenAt time.Time `json:"status_seen_at,omitzero"`
	// HeardAt is when a webhook event last told batchd something about
	// the row's source, whether or not it changed the status; zero when
	// none ever did.
	HeardAt time.Time `json:"heard_at,omitzero"`
	// Initiated is when batchd initiated micro-deposit verification.
	Initiated time.Time `json:"initiated,omitzero"`
	// NextStep tells the finance team what the row still needs (the
	// bank-linking flow, a verification file); empty when nothing.
	NextStep string `json:"next_step,omitempty"`
	Error    string `json:"error,omitempty"` // the service's message, or batchd's reason

	History []payment.Step `json:"history"`
}

// ReportStatus is the one word a report shows for the row: its source's
// status once it has one, else its own state.
func (r *Row) ReportStatus() string {
	if r.State == payment.Submitted && r.Status != "" {
		return string(r.Status)
	}
	return string(r.State)
}

// Result is what a create, a verification or a lookup tells of the row's
// source, for the ledger to record.
type Result struct {
	SourceID string
	Status   Status
	BankName string
	LastFour string
	NextStep string
	Note     string // how it was found, e.g. "found by routing and last four after a lost answer"
}

// ResultOf is what the ledger keeps of a source the service described.
func ResultOf(s *Source, note string) Result {
	return Result{SourceID: s.ID, Status: s.Status, BankName: s.BankName, LastFour: s.LastFour, Note: note}
}

// Observation is one source status seen at the service.
type Observation struct {
	Key    payment.RowKey
	Status Status
}

// Attempt is the row's, for the row engine (internal/rowrun).
func (r *Row) Attempt() payment.Attempt {
	return payment.Attempt{Key: r.Key, State: r.State, At: r.AttemptAt, SendBy: r.SendBy}
}
