package payment

import "time"

// Cancels. A cancel file's line asks batchd to stop one check: void it at
// the service (DELETE /v1/check/{id}) while it is still in process. The
// ledger keeps each line's intent before the request leaves, keyed by the
// cancel file's content and the line, so that a crash between the request
// and its answer is neither lost nor repeated blindly: the same file
// claimed again finds the intent, asks the service where the check stands,
// and settles the line from that (a check found void after batchd's own
// request is batchd's void, not "already void").

// CancelOutcome is what became of one cancel line.
type CancelOutcome string

// The cancel outcomes. CancelSent is the intent: the void may have left,
// nothing is known of its answer. Every other outcome is final: a line
// settled once is never sent again.
const (
	CancelSent        CancelOutcome = "sent"
	CancelVoided      CancelOutcome = "voided"       // batchd voided the check
	CancelTooLate     CancelOutcome = "too_late"     // printed or deposited: the money has left
	CancelAlreadyVoid CancelOutcome = "already_void" // void before batchd asked
	CancelFinal       CancelOutcome = "already_final"
	CancelNotFound    CancelOutcome = "not_found" // the service does not know the check
	CancelRefused     CancelOutcome = "refused"   // the service refused the void for another reason
	// CancelLinkClosed: a payment link deactivated (change-status), so
	// that no payer can pay through it any more.
	CancelLinkClosed CancelOutcome = "link_cancelled"
)

// Settled reports whether the outcome is final (anything but the intent).
func (o CancelOutcome) Settled() bool { return o != "" && o != CancelSent }

// Cancel is the ledger's record of one cancel line.
type Cancel struct {
	Key     LineKey       `json:"key"`
	CheckID string        `json:"check_id,omitempty"`
	Token   string        `json:"checkout_token,omitempty"` // a payment link's, for a line that cancels a link
	Row     RowKey        `json:"row,omitzero"`             // the row that owns the check, when it is batchd's
	Reason  string        `json:"reason"`
	Outcome CancelOutcome `json:"outcome"`
	Note    string        `json:"note,omitempty"`   // the service's words, or what batchd saw
	Status  Status        `json:"status,omitempty"` // the check's status when the line settled
	Sent    time.Time     `json:"sent"`
	Settled time.Time     `json:"settled,omitzero"`
}

// CancelLedger keeps cancel lines' intents and outcomes.
type CancelLedger interface {
	// CancelIntent records c as sent, unless its line has a record: then
	// it returns that record and fresh is false. Only when it returns
	// fresh (or a record still CancelSent) may the void request leave.
	CancelIntent(c Cancel) (rec Cancel, fresh bool, err error)
	// CancelSettled records a line's final outcome; a line settled
	// before keeps its first outcome, which is returned.
	CancelSettled(k LineKey, outcome CancelOutcome, status Status, note string) (Cancel, error)
	// Cancels lists the recorded lines of one cancel file (every file's
	// for ""), by file and line.
	Cancels(file string) ([]Cancel, error)
}
