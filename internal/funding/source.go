package funding

import (
	"strings"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// Status is a funding source's status at the service, in batchd's spelling.
// The service writes the spec's Pending, Unverified and Verified, a
// lowercase "verified" in the processor-token answer, and (public clients
// show) words such as pending_verification; ParseStatus reads them all.
type Status string

// The statuses.
const (
	StatusPending            Status = "pending"             // created; waiting for micro-deposit verification
	StatusUnverified         Status = "unverified"          // on-demand, credits only
	StatusVerified           Status = "verified"            // usable for debits and credits
	StatusVerificationFailed Status = "verification_failed" // too many wrong amounts, or expired
	StatusDeleted            Status = "deleted"             // removed from the customer's profile
)

// ParseStatus reads a status as the service writes it, case-insensitively.
// A word it does not know is kept, lower-cased, and is not Known.
func ParseStatus(s string) Status {
	w := strings.ToLower(strings.TrimSpace(s))
	switch w {
	case "pending", "pending_verification", "pending-verification", "added":
		return StatusPending
	case "unverified":
		return StatusUnverified
	case "verified":
		return StatusVerified
	case "verification_failed", "verification-failed", "failed", "verification_expired", "verification-expired":
		return StatusVerificationFailed
	case "deleted", "removed":
		return StatusDeleted
	}
	return Status(w)
}

// Known reports whether s is one of the statuses batchd names.
func (s Status) Known() bool {
	switch s {
	case StatusPending, StatusUnverified, StatusVerified, StatusVerificationFailed, StatusDeleted:
		return true
	}
	return false
}

// Tracked reports whether reconcile keeps following a source in status s.
// Only Pending moves on by itself (the customer verifies, or it fails);
// Unverified has no documented way out (spec §3.3), so batchd takes it,
// like Verified, as where the row ends.
func (s Status) Tracked() bool { return s == StatusPending }

// Source is what the service says of one funding source.
type Source struct {
	ID       string
	UserID   string
	Status   Status
	Primary  bool
	Routing  string
	LastFour string
	BankName string
	Type     string
	Created  time.Time // a day (MM/DD/YYYY at the service); zero when not given
}

// Owner says whether a source is already recorded for a row, and which.
type Owner struct {
	Key   payment.RowKey
	Owned bool
}

// Belongs is the one rule for "this funding source is this row's", used
// to find the source a create made when its answer was lost. The API has
// no idempotency key; what a source carries of the request is its
// customer, routing number and the last four digits of the account:
//   - the source is the row's customer's;
//   - it is not deleted;
//   - it is owned by no other row;
//   - for an account row, routing and last four are the row's (of an
//     account shorter than eight digits, a service that masks as
//     redact.Account does shows only its last half: that suffix matches);
//   - for a processor row (whose account batchd never sees), it was not
//     among the customer's sources just before the exchange was sent
//     (Row.SourcesBefore) and it is verified.
func Belongs(row *Row, s *Source, owner Owner) bool {
	if owner.Owned && owner.Key != row.Key {
		return false
	}
	if s.ID == "" || s.Status == StatusDeleted || row.UserID == "" || s.UserID != "" && s.UserID != row.UserID {
		return false
	}
	switch row.Request.Method {
	case OnDemand, MicroDeposits:
		return strings.TrimSpace(s.Routing) == row.Request.Routing && lastDigits(s.LastFour, row.Request.Account)
	case Processor:
		for _, id := range row.SourcesBefore {
			if id == s.ID {
				return false
			}
		}
		return s.Status == StatusVerified
	}
	return false
}

// lastDigits reports whether shown, the last digits a source shows of its
// account, are account's: its last four, or, for an account shorter than
// eight digits, at least its last half (the sandbox shows lbacc as
// redact.Last4 does, "001" for 7770001).
func lastDigits(shown, account string) bool {
	shown = strings.TrimSpace(shown)
	return shown != "" && strings.HasSuffix(account, shown) && len(shown) >= min(4, len(account)/2)
}
