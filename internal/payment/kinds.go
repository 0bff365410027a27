package payment

// The registry of kinds: the one ordered list of what batchd takes from
// the inbox, with what every part of batchd needs to know of a kind
// without a branch of its own (messages, validation of a stored batch,
// whether ingest applies the file's lines itself). A new kind adds its
// line here and its constant above; a part that must act on a kind asks
// this table, never `if kind == …`.
//
// The order is the order of work: payments first (the money), then
// onboarding's kinds, then the kinds ingest applies line by line.

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
}

var kinds = [...]KindInfo{
	{Kind: KindPayments, Word: "a payment file"},
	{Kind: KindSources, Word: "a funding-source file", Funding: true},
	{Kind: KindVerifications, Word: "a verification file", Funding: true},
	{Kind: KindApprovals, Word: "an approvals file", Applied: true},
	{Kind: KindCancels, Word: "a cancel file", Applied: true},
	{Kind: KindLinks, Word: "a payment-link file", Applied: true},
	{Kind: KindEdits, Word: "an edit file", Applied: true},
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
