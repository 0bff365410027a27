package ach

import "strings"

// Status is the state of a funding source (spec 3.3), typed so that the
// spec's "Verified" and the processor answer's "verified" are one value
// and a word batchd does not know cannot pass for a known one.
type Status int

const (
	// StatusUnknown is any word the client does not know. A caller must
	// not debit, credit or verify on it; it should look the source up
	// again or ask a person.
	StatusUnknown Status = iota
	// StatusPending: created with account and routing numbers; waits for
	// micro-deposit verification. No debits.
	StatusPending
	// StatusUnverified: created on demand for credits only. No debits.
	StatusUnverified
	// StatusVerified: usable for debits and credits.
	StatusVerified
	// StatusVerificationFailed: too many wrong micro-deposit amounts; the
	// account must be linked again another way.
	StatusVerificationFailed
	// StatusDeleted: removed from the customer; the account is free for
	// another customer.
	StatusDeleted
)

// ParseStatus reads a status word in any case, with "_", "-" or spaces
// between words or none: "Verified", "verified" and "VERIFIED" are
// StatusVerified; "verification_failed" and "VerificationFailed" are
// StatusVerificationFailed. "pending_verification", seen in public
// clients, is StatusPending. Anything else is StatusUnknown.
func ParseStatus(s string) Status {
	w := strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', ' ', '\t':
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(s)))
	switch w {
	case "pending", "pendingverification":
		return StatusPending
	case "unverified":
		return StatusUnverified
	case "verified":
		return StatusVerified
	case "verificationfailed":
		return StatusVerificationFailed
	case "deleted":
		return StatusDeleted
	}
	return StatusUnknown
}

// String returns the word the contract uses for s ("Pending",
// "Unverified", "Verified", "verification_failed", "deleted"), and
// "unknown" for StatusUnknown. It is safe as a metric label.
func (s Status) String() string {
	switch s {
	case StatusPending:
		return "Pending"
	case StatusUnverified:
		return "Unverified"
	case StatusVerified:
		return "Verified"
	case StatusVerificationFailed:
		return "verification_failed"
	case StatusDeleted:
		return "deleted"
	}
	return "unknown"
}

// CanDebit reports whether a source in status s may be debited: only a
// Verified one (the service answers 402 otherwise).
func (s Status) CanDebit() bool { return s == StatusVerified }

// CanCredit reports whether a source in status s may receive a credit:
// Unverified (credit-only) and Verified sources.
func (s Status) CanCredit() bool { return s == StatusVerified || s == StatusUnverified }
