package webhook

import (
	"strings"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
)

// Event is one webhook delivery, decoded. Fields the delivery did not carry
// are empty; only Name and ID are always set.
type Event struct {
	// ID is the dedupe key: equal for two deliveries of the same event
	// (also when one came as JSON and the other form-encoded), different
	// for two changes of one object (they differ in status or time). See
	// eventID for the canonical form it hashes.
	ID string
	// Name is the event name as the service sent it, such as
	// "check.changed" or "funding-source.verified", trimmed of spaces.
	// Unknown names are kept: the ledger decides what to do with them.
	Name string
	// Kind says which object the event is about, from Name.
	Kind Kind

	CheckID string
	// CheckStatus is the check's status as payment.ParseStatus reads it,
	// so an ACH transaction word such as "processed" is kept but not
	// Known. check.deleted without a status means StatusDeleted.
	CheckStatus payment.Status

	SourceID string
	// SourceStatus is the funding source's status as funding.ParseStatus
	// reads it; when the body has none it is taken from the event name
	// (funding-source.verified is verified), and stays empty for names
	// that imply no status (.updated, .made-primary).
	SourceStatus funding.Status

	UserID string
	// At is when the event happened as the delivery says; zero when it
	// gives no time or one batchd cannot read. A time without a zone
	// ("2026-02-19 15:59:10") is taken as UTC: the service does not say.
	At time.Time

	// Raw is the body as received, cut at MaxRawBytes, for a Store that
	// wants more than the fields above. It may hold bank details, so it is
	// never logged (batchd's ledger does not keep it).
	Raw []byte
}

// MaxRawBytes bounds Event.Raw.
const MaxRawBytes = 64 << 10

// Kind is the kind of object an event is about.
type Kind string

// The kinds. A name batchd does not know is KindOther unless its prefix
// says otherwise, so that a new check.* event still reaches the checks.
const (
	KindCheck  Kind = "check"  // check.*, payment.*, transaction.*: an eCheck or an ACH transaction
	KindSource Kind = "source" // funding-source.*, funding_source.*
	KindOther  Kind = "other"  // user.*, subscription.*, endpoint.test, anything else
)

// kindOf classifies an event name by its first dot-separated word, case
// and '-'/'_' not counting: the service spells funding sources both ways.
func kindOf(name string) Kind {
	head, _, _ := strings.Cut(strings.ToLower(name), ".")
	switch strings.ReplaceAll(head, "-", "_") {
	case "check", "payment", "transaction":
		return KindCheck
	case "funding_source", "fundingsource":
		return KindSource
	}
	return KindOther
}

// isUserEvent reports whether a bare "id" in the body names a customer.
func isUserEvent(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), "user.")
}

// sourceStatusFromName reads the status a funding-source event name
// implies: its last word as funding.ParseStatus reads it, if that is a
// status batchd knows. ".verification-expired" gives verification_failed
// and ".added" gives pending, as funding.ParseStatus has it.
func sourceStatusFromName(name string) funding.Status {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return ""
	}
	if s := funding.ParseStatus(name[i+1:]); s.Known() {
		return s
	}
	return ""
}

// checkStatusFromName reads the status a check event name implies. Only
// check.deleted implies one: payment.success and payment.failed are not
// mapped, because what they mean for a check's status is not documented.
func checkStatusFromName(name string) payment.Status {
	if strings.EqualFold(name, "check.deleted") {
		return payment.StatusDeleted
	}
	return ""
}

// object is the id of the object the event is about, for log lines.
func (e Event) object() string {
	switch {
	case e.Kind == KindCheck && e.CheckID != "":
		return e.CheckID
	case e.Kind == KindSource && e.SourceID != "":
		return e.SourceID
	case e.CheckID != "":
		return e.CheckID
	case e.SourceID != "":
		return e.SourceID
	}
	return e.UserID
}
