package payment

// The registry of kinds: the one ordered list of what batchd takes from
// the inbox, with what every part of batchd needs to know of a kind
// without a branch of its own (messages, validation of a stored batch,
// whether ingest applies the file's lines itself, how its header is told,
// its columns, its ledger bucket). A new kind adds its constant and its
// line here, and registers its behaviour once (internal/jobs/kinds.go);
// a part that must act on a kind asks this table, never `if kind == …`.
//
// The order is the order of work: payments first (the money), then
// onboarding's kinds, then the kinds ingest applies line by line.

// BatchKind is what an ingested file holds, told by its header: payments
// (the default, and every batch from before kinds existed), funding-source
// requests or micro-deposit verifications (internal/funding), or lines
// applied one by one (approvals, cancels, payment links, edits).
type BatchKind string

// The batch kinds.
const (
	KindPayments      BatchKind = ""                // a payment file: checks
	KindSources       BatchKind = "funding-sources" // a funding-source file
	KindVerifications BatchKind = "verifications"   // a verification file
	KindApprovals     BatchKind = "approvals"       // an approvals file: releases of held rows
	KindCancels       BatchKind = "cancels"         // a cancel file: voids of checks
	KindLinks         BatchKind = "payment-links"   // a payment-link file: links payers pay through
	KindEdits         BatchKind = "edits"           // an edit file: corrections of checks in process
)

// Payments reports whether the batch's rows are payments.
func (k BatchKind) Payments() bool { return k == KindPayments }

// KindInfo describes one kind of file.
type KindInfo struct {
	Kind BatchKind
	// Word names a file of the kind in messages: "a payment file".
	Word string
	// Applied: ingest applies each line itself once the file is fenced
	// (approvals release rows, cancels void checks, edits correct them) and keeps no rows for
	// submit; the file's results report says what became of each line.
	Applied bool
	// Funding: the kind's rows are funding.Rows, sent by onboarding.
	Funding bool
	// Header tells an applied kind's file by its header row, and names
	// every column its lines are read from.
	Header Header
	// Lines is the ledger bucket of the kind's line records (LineStore);
	// "" for a kind that keeps none.
	Lines string
}

// Header is how an applied kind's file is told by its header row. Names
// are compared as the header's cells are (trimmed, without case or
// underscores). The rules of the kinds are exclusive, so that no header
// is two kinds' (a test holds them to it).
type Header struct {
	Columns []string   // every column a line is read from, in the template's order
	All     []string   // the header names each of these,
	OneOf   [][]string // every column of one of these groups (when any),
	AnyOf   []string   // at least one of these (when any),
	None    []string   // and none of these.
}

// Matches reports whether a header naming the columns has says it names
// is one of the kind's files; a kind with no rule matches none.
func (h Header) Matches(has func(column string) bool) bool {
	if len(h.All)+len(h.OneOf)+len(h.AnyOf) == 0 || !every(has, h.All) || anyOf(has, h.None) {
		return false
	}
	if len(h.AnyOf) > 0 && !anyOf(has, h.AnyOf) {
		return false
	}
	if len(h.OneOf) == 0 {
		return true
	}
	for _, group := range h.OneOf {
		if every(has, group) {
			return true
		}
	}
	return false
}

func every(has func(string) bool, cols []string) bool {
	for _, c := range cols {
		if !has(c) {
			return false
		}
	}
	return true
}

func anyOf(has func(string) bool, cols []string) bool {
	for _, c := range cols {
		if has(c) {
			return true
		}
	}
	return false
}

// The ways a line of a cancel or edit file names a check, in the order
// they are read when a line gives more than one. Label and number name
// no check in an edit file: there they are new values.
var (
	CancelRefs = [][]string{{"check_id"}, {"file", "line"}, {"label", "number"}, {"checkout_token"}}
	EditRefs   = [][]string{{"check_id"}, {"file", "line"}}
)

var kinds = [...]KindInfo{
	{Kind: KindPayments, Word: "a payment file"},
	{Kind: KindSources, Word: "a funding-source file", Funding: true},
	{Kind: KindVerifications, Word: "a verification file", Funding: true},
	// An approvals file names every one of its columns.
	{Kind: KindApprovals, Word: "an approvals file", Applied: true, Header: Header{
		Columns: []string{"file", "line", "account_last4", "approved_by"},
		All:     []string{"file", "line", "account_last4", "approved_by"}}},
	// A cancel file names a reason and one way of naming the check; one
	// with amount is a payment file's (which may carry label and number).
	{Kind: KindCancels, Word: "a cancel file", Applied: true, Lines: "cancels", Header: Header{
		Columns: []string{"check_id", "file", "line", "label", "number", "checkout_token", "reason"},
		All:     []string{"reason"}, OneOf: CancelRefs, None: []string{"approved_by", "amount"}}},
	// A payment-link file names a column only links have (spec §2.2, and
	// batchd's references kept and never sent), and no bank account.
	{Kind: KindLinks, Word: "a payment-link file", Applied: true, Lines: "links", Header: Header{
		Columns: []string{"amount", "memo", "thank_you_url", "error_url", "recurring", "recurring_cycle",
			"recurring_start_date", "recurring_installments", "fund_confirmation", "basic_verification", "is_bankauth",
			"signature_required", "submit_for_approval", "invoice", "payer_email", "payer_name", "memo_reference"},
		AnyOf: []string{"invoice", "payer_email", "payer_name", "thank_you_url", "error_url", "basic_verification",
			"is_bankauth", "signature_required", "submit_for_approval"},
		None: []string{"bank_account", "bank_routing", "token", "name", "approved_by", "reason"}}},
	// An edit file names the check by id or by payment file and line, and
	// carries bank_account (the API's edit takes the whole check); a
	// payment file never has check_id, file or line.
	{Kind: KindEdits, Word: "an edit file", Applied: true, Lines: "edits", Header: Header{
		Columns: []string{"check_id", "file", "line", "amount", "number", "label", "memo", "name", "email", "bank_routing", "bank_account"},
		All:     []string{"bank_account"}, OneOf: EditRefs, None: []string{"approved_by", "reason"}}},
}

// Kinds lists every kind, in the order of work. The slice is the
// caller's.
func Kinds() []KindInfo { return append([]KindInfo(nil), kinds[:]...) }

// Info describes k; ok is false for a kind batchd does not know (a batch
// written by a later version, or a damaged record).
func (k BatchKind) Info() (KindInfo, bool) {
	for _, i := range kinds {
		if i.Kind == k {
			return i, true
		}
	}
	return KindInfo{Kind: k, Word: "a file of kind " + string(k)}, false
}

// KindNamed is the kind whose name (String) is name: "payments",
// "cancels", "payment-links".
func KindNamed(name string) (BatchKind, bool) {
	for _, i := range kinds {
		if i.Kind.String() == name {
			return i.Kind, true
		}
	}
	return "", false
}

// KindNames lists the kinds' names in the registry's order.
func KindNames() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.Kind.String()
	}
	return out
}

// Columns are every column a line of k's file is read from (an applied
// kind's), in the template's order.
func (k BatchKind) Columns() []string {
	i, _ := k.Info()
	return i.Header.Columns
}

// Lines is the ledger bucket of k's line records, "" for none.
func (k BatchKind) Lines() string {
	i, _ := k.Info()
	return i.Lines
}

// Known reports whether batchd knows k.
func (k BatchKind) Known() bool {
	_, ok := k.Info()
	return ok
}

// Word names a file of kind k in messages: "a payment file".
func (k BatchKind) Word() string {
	i, _ := k.Info()
	return i.Word
}
