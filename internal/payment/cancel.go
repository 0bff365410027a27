package payment

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
	CheckLine[CancelOutcome]
	Token  string `json:"checkout_token,omitempty"` // a payment link's, for a line that cancels a link
	Reason string `json:"reason"`
}

// CancelLines are the cancel lines in the ledger. A line names a check,
// or a payment link's token: one of them.
var CancelLines = NewCheckLines(KindCancels, "cancel line", CancelSent,
	func(c *Cancel) *CheckLine[CancelOutcome] { return &c.CheckLine },
	func(c *Cancel) string {
		if (c.CheckID == "") == (c.Token == "") {
			return " and a check id or a payment link's token (one of them)"
		}
		return ""
	})
