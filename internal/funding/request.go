package funding

import (
	"log/slog"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/money"
)

// Method is how a row links its bank account, chosen by the file's columns
// (and its method column).
type Method string

// The methods. OnDemand is the default for a row that gives routing and
// account numbers: it needs no verification round trip. MicroDeposits is
// deprecated for new connections from DeprecationDate.
const (
	// OnDemand creates the source with POST /on-demand/funding-source:
	// Verified when the account is enabled for third-party verification,
	// else Unverified (credits only).
	OnDemand Method = "on-demand"
	// MicroDeposits creates a Pending source with POST /funding-source and
	// initiates micro-deposit verification; a verification file completes
	// it. Never attempted from DeprecationDate on.
	MicroDeposits Method = "micro-deposits"
	// Processor exchanges a processor token issued by the bank-linking
	// provider (for processor ProcessorName) for a verified, primary source.
	Processor Method = "processor"
	// Verify completes a micro-deposit verification with the two amounts
	// the customer read on the bank statement (a verification file's row).
	Verify Method = "verify"
)

// ParseMethod reads a method column's value, case-insensitively, with "_"
// for "-" and "ondemand"/"micro" accepted.
func ParseMethod(s string) (Method, bool) {
	switch strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-") {
	case "on-demand", "ondemand":
		return OnDemand, true
	case "micro-deposits", "micro-deposit", "micro", "microdeposits":
		return MicroDeposits, true
	case "processor", "processor-token":
		return Processor, true
	}
	return "", false
}

// DeprecationDate is the day (UTC) from which the service refuses new
// micro-deposit verifications (spec §9): HTTP 410. Verifications initiated
// before it can still complete.
var DeprecationDate = time.Date(2026, 6, 8, 0, 0, 0, 0, time.UTC)

// Deprecated reports whether micro-deposit initiation is deprecated at t.
func Deprecated(t time.Time) bool { return !t.UTC().Before(DeprecationDate) }

// ProcessorName is the processor name a processor token must be issued
// for (spec §4.2, §9): it replaced a legacy name.
const ProcessorName = "svcach"

// BankLinkStep is what a report says of a row that needs the bank-linking
// provider's flow instead of micro-deposits.
const BankLinkStep = "needs the bank-linking flow: micro-deposit verification is deprecated since 2026-06-08; " +
	"have the customer link the account with the provider and send a processor token issued for processor \"svcach\""

// Customer is a customer to create when a row names none by user_id. Its
// Email is its identity: rows of one email share one customer, and a lost
// answer is looked up by it.
type Customer struct {
	FirstName, LastName, Email, Phone string
}

// EmailKey is the form emails are compared in: trimmed, lower case.
func EmailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// Request is one row of a funding-source or verification file, validated.
type Request struct {
	Method Method `json:"method"`
	// UserID names an existing customer; when empty, Customer is created
	// (or found by email) first.
	UserID   string   `json:"user_id,omitempty"`
	Customer Customer `json:"customer,omitzero"`
	// Routing, Account, AccountType and Nickname describe the account of
	// OnDemand and MicroDeposits rows. Account is the full number: the
	// ledger is private (0600); reports and messages mask it.
	Routing string `json:"routing,omitempty"`
	Account string `json:"account,omitempty"`
	// AccountLast4 is what remains of Account once the row has a result
	// (redact.Last4's digits): the ledger keeps the full number only while
	// it may still be needed to recognise the row's source.
	AccountLast4 string `json:"account_last4,omitempty"`
	AccountType  string `json:"account_type,omitempty"` // checking or savings
	Nickname     string `json:"nickname,omitempty"`
	// ProcessorToken is a Processor row's token: a credential for one bank
	// account, never written to a log, report or message.
	ProcessorToken string `json:"processor_token,omitempty"`
	// SourceID and Amounts are a Verify row's funding source and the two
	// micro-deposits, in cents.
	SourceID string         `json:"source_id,omitempty"`
	Amounts  [2]money.Cents `json:"amounts,omitzero"`
}

// LastFour is the last four digits of the request's account (what the
// ledger kept of it once the row had a result), or "".
func (r *Request) LastFour() string {
	if r.Account == "" {
		return r.AccountLast4
	}
	if len(r.Account) < 4 {
		return ""
	}
	return r.Account[len(r.Account)-4:]
}

// String describes the request without its secrets: the account masked to
// its last four digits, the token hidden. fmt's %v and %+v use it, so a
// request printed by mistake leaks nothing.
func (r Request) String() string {
	s := "method=" + string(r.Method)
	if r.UserID != "" {
		s += " user_id=" + r.UserID
	}
	if r.Customer.Email != "" {
		s += " email=" + r.Customer.Email
	}
	if r.Account != "" || r.AccountLast4 != "" {
		s += " routing=" + r.Routing + " account=****" + r.LastFour()
	}
	if r.ProcessorToken != "" {
		s += " processor_token=(hidden)"
	}
	if r.SourceID != "" {
		s += " source_id=" + r.SourceID
	}
	return s
}

// GoString is String, for %#v.
func (r Request) GoString() string { return "funding.Request{" + r.String() + "}" }

// LogValue is String, for log/slog.
func (r Request) LogValue() slog.Value { return slog.StringValue(r.String()) }
