package payment

import "strings"

// Status is the status of a check at the service (public-api-notes.md,
// "Check status values"). The empty Status means "not known yet".
type Status string

// The check statuses the service is known to use. StatusUnknown stands for a
// status word batchd does not know; ParseStatus never loses the word itself
// (a report shows what the service said), so it is only a category.
const (
	StatusInProcess Status = "in_process" // created; waiting for the processing batch to close
	StatusInReview  Status = "in_review"  // held for manual review
	StatusPrinted   Status = "printed"    // batch closed; check printed
	StatusDeposited Status = "deposited"  // funds deposited (settled); final
	StatusFailed    Status = "failed"     // cancelled automatically; final
	StatusVoid      Status = "void"       // cancelled by hand; final
	StatusDeleted   Status = "deleted"    // removed; final
	StatusUnknown   Status = "unknown"    // a word the service used that batchd does not know
)

var known = map[Status]bool{
	StatusInProcess: true, StatusInReview: true, StatusPrinted: true,
	StatusDeposited: true, StatusFailed: true, StatusVoid: true, StatusDeleted: true,
}

// ParseStatus reads a status word as the service may write it: case and
// surrounding spaces do not count, and a space or hyphen stands for an
// underscore ("In Process" is in_process). A word batchd does not know is
// kept as written, lower-cased, so that a report can still show it; Known
// tells it apart.
func ParseStatus(s string) Status {
	if known[Status(s)] {
		return Status(s) // the usual answer, already in its canonical form
	}
	return Status(statusSeparators.Replace(strings.ToLower(strings.TrimSpace(s))))
}

// statusSeparators turns the separators a status may be written with
// into the underscore; a Replacer is safe for concurrent use.
var statusSeparators = strings.NewReplacer(" ", "_", "-", "_")

// Known reports whether s is one of the statuses the service documents.
func (s Status) Known() bool { return known[s] }

// Final reports whether no check ever leaves status s: deposited, failed,
// void and deleted. An unknown status is not final: batchd keeps watching
// the check rather than forget it.
func (s Status) Final() bool {
	switch s {
	case StatusDeposited, StatusFailed, StatusVoid, StatusDeleted:
		return true
	}
	return false
}

// rank orders the known statuses along a check's lifecycle: every final
// status ends it, so they share the last rank.
var rank = map[Status]int{StatusInProcess: 1, StatusInReview: 2, StatusPrinted: 3,
	StatusDeposited: 4, StatusFailed: 4, StatusVoid: 4, StatusDeleted: 4}

// Advances reports whether s, a status an event pushed by the service
// says a check has, may replace from, the status batchd has recorded.
// Events arrive late, twice and out of order, so only a step forward
// counts: never from a final status, never to the same one, never to an
// empty or unknown one (nothing says where it stands), and never back
// along in_process, in_review, printed, final. A late "printed" thus
// cannot undo the "deposited" that overtook it. A recorded status batchd
// does not know (or none) has no place in the lifecycle, so any known
// status advances from it.
//
// Polling needs no such rule: a listing is the service's word as of now,
// and reconcile takes it as it is (a final status still never changes).
func (s Status) Advances(from Status) bool {
	if from.Final() || s == from || !s.Known() {
		return false
	}
	return rank[s] > rank[from]
}

// String returns the status word, or "unknown" for the empty status.
func (s Status) String() string {
	if s == "" {
		return string(StatusUnknown)
	}
	return string(s)
}
