package sourcefile

import (
	"errors"
	"io"
	"strings"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
)

// column is a column of a funding-source or verification file.
type column int

// The columns, in the order of a row's findings.
const (
	colUserID column = iota
	colFirstName
	colLastName
	colEmail
	colPhone
	colRouting
	colAccount
	colAccountType
	colNickname
	colMethod
	colToken
	colSourceID
	colAmount1
	colAmount2
	numColumns
)

// columnInfo describes a column.
type columnInfo struct {
	name  string            // canonical: the API's field name in snake_case, as findings name it
	kind  payment.BatchKind // the kind of file it belongs to
	alias string            // another name accepted for it
}

var columns = [numColumns]columnInfo{
	colUserID:      {name: "user_id", kind: payment.KindSources},
	colFirstName:   {name: "first_name", kind: payment.KindSources},
	colLastName:    {name: "last_name", kind: payment.KindSources},
	colEmail:       {name: "email", kind: payment.KindSources},
	colPhone:       {name: "phone", kind: payment.KindSources},
	colRouting:     {name: "routing_number", kind: payment.KindSources},
	colAccount:     {name: "account_number", kind: payment.KindSources},
	colAccountType: {name: "account_type", kind: payment.KindSources},
	colNickname:    {name: "nickname", kind: payment.KindSources},
	colMethod:      {name: "method", kind: payment.KindSources},
	colToken:       {name: "processor_token", kind: payment.KindSources},
	colSourceID:    {name: "funding_source_id", kind: payment.KindVerifications, alias: "source_id"},
	colAmount1:     {name: "amount1", kind: payment.KindVerifications},
	colAmount2:     {name: "amount2", kind: payment.KindVerifications},
}

func (c column) String() string { return columns[c].name }

// byKey finds a column by its key (see key).
var byKey = func() map[string]column {
	m := make(map[string]column, 2*numColumns)
	for c, info := range columns {
		m[key(info.name)] = column(c)
		if info.alias != "" {
			m[key(info.alias)] = column(c)
		}
	}
	return m
}()

// key is a header cell as it is compared: trimmed, lower case, without
// underscores, so that first_name, firstName and FIRST_NAME are one name.
func key(cell string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(cell)), "_", "")
}

// lookup finds the column a header cell names, of any kind.
func lookup(cell string) (column, bool) {
	c, ok := byKey[key(cell)]
	return c, ok
}

// shared are the payment file's columns that a funding-source file has
// too; they tell neither kind.
func shared(c column) bool { return c == colEmail || c == colPhone }

// KindOf tells what a file holds from its header row. Each cell counts
// for the kind whose column it names: a payment's field (payment.Fields)
// for payments, the columns of a funding-source or a verification file
// for theirs; email and phone, which payment and funding-source files
// share, count for neither. The kind with the most cells wins, and
// payments wins a tie, so that a header that names no column of the new
// kinds, or is none of the three, is judged as a payment file's (whose
// parser explains what is wrong with it).
func KindOf(header []string) payment.BatchKind {
	if approvals(header) {
		return payment.KindApprovals
	}
	if cancels(header) {
		return payment.KindCancels
	}
	if links(header) {
		return payment.KindLinks
	}
	if edits(header) {
		return payment.KindEdits
	}
	var pay, src, ver int
	for _, cell := range header {
		name := strings.ToLower(strings.TrimSpace(cell))
		if c, ok := lookup(cell); ok {
			switch {
			case shared(c):
			case columns[c].kind == payment.KindSources:
				src++
			default:
				ver++
			}
			continue
		}
		if payment.FieldIndex(name) >= 0 {
			pay++
		}
	}
	switch {
	case src == 0 && ver == 0, pay >= max(src, ver):
		return payment.KindPayments
	case ver > src:
		return payment.KindVerifications
	}
	return payment.KindSources
}

// Detect reads the header row of r, as opts read it, and tells the kind of
// the file (KindOf). Cells named in opts.IgnoreColumns do not count. A
// header that opts' delimiter does not split into columns of a funding-
// source or verification file but another delimiter does is that kind's
// (Parse then explains the delimiter). A file whose header cannot be read
// at all is a payment file, for csvfile.Parse to explain; the error is
// only for a bad option or a failure to read r.
func Detect(r io.Reader, opts csvfile.Options) (payment.BatchKind, error) {
	rs, err := csvfile.NewRecords(r, opts)
	var fe *csvfile.FileError
	if errors.As(err, &fe) {
		return payment.KindPayments, nil
	}
	if err != nil {
		return payment.KindPayments, err
	}
	raw, _, err := rs.Header()
	if errors.As(err, &fe) {
		return payment.KindPayments, nil
	}
	if err != nil {
		return payment.KindPayments, err
	}
	ignore := ignoreSet(opts.IgnoreColumns)
	cells := func(sep string) []string {
		var out []string
		for _, cell := range raw {
			parts := []string{cell}
			if sep != "" {
				parts = strings.Split(cell, sep)
			}
			for _, p := range parts {
				if !ignore[strings.ToLower(strings.TrimSpace(p))] {
					out = append(out, p)
				}
			}
		}
		return out
	}
	if k := KindOf(cells("")); k != payment.KindPayments {
		return k, nil
	}
	for _, sep := range []string{",", ";", "\t"} {
		if sep == rs.Separator() {
			continue
		}
		if k := KindOf(cells(sep)); k != payment.KindPayments {
			return k, nil
		}
	}
	return payment.KindPayments, nil
}

// ignoreSet is opts.IgnoreColumns, trimmed and in lower case.
func ignoreSet(names []string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
			set[n] = true
		}
	}
	return set
}

// ApprovalColumns are the columns an approvals file's header must name
// (in any order and case, with or without underscores; other columns are
// ignored): a header naming all four is an approvals file's.
var ApprovalColumns = []string{"file", "line", "account_last4", "approved_by"}

// approvals reports whether header names every approvals column.
func approvals(header []string) bool { return hasAll(headerKeys(header), ApprovalColumns) }

// headerKeys is the set of header's cells, as key compares them.
func headerKeys(header []string) map[string]bool {
	seen := make(map[string]bool, len(header))
	for _, cell := range header {
		seen[key(cell)] = true
	}
	return seen
}

// hasAll reports whether seen (headerKeys) holds every one of cols.
func hasAll(seen map[string]bool, cols []string) bool {
	for _, c := range cols {
		if !seen[key(c)] {
			return false
		}
	}
	return true
}

// hasAllOfOne reports whether seen (headerKeys) holds every column of one
// of refs: one way of naming a check.
func hasAllOfOne(seen map[string]bool, refs [][]string) bool {
	for _, ref := range refs {
		if hasAll(seen, ref) {
			return true
		}
	}
	return false
}

// Cancel files. A cancel file's header names a reason and one way of
// naming the check: its id; the payment file and line that made it; or
// its label and number. A header with approved_by is an approvals file's
// and one with amount a payment file's (a payment file may carry label
// and number), so no header is both: the kinds ingest applies never
// compete for a file.
var (
	CancelReason = "reason"
	// CancelRefs are the ways of naming the check, in the order they are
	// read when a line gives more than one.
	CancelRefs = [][]string{{"check_id"}, {"file", "line"}, {"label", "number"}, {"checkout_token"}}
)

// CancelColumns are every column a cancel file's line is read from.
var CancelColumns = []string{"check_id", "file", "line", "label", "number", "checkout_token", "reason"}

// LinkColumns are every column a payment-link file's line is read from:
// the link's fields (spec §2.2), then batchd's own references, which are
// kept and never sent.
var LinkColumns = []string{"amount", "memo", "thank_you_url", "error_url", "recurring", "recurring_cycle",
	"recurring_start_date", "recurring_installments", "fund_confirmation", "basic_verification", "is_bankauth",
	"signature_required", "submit_for_approval", "invoice", "payer_email", "payer_name"}

// linkOnly are the columns only a payment-link file has; linkNever, the
// columns of a payee's bank account, which a link never carries.
var (
	linkOnly  = []string{"invoice", "payer_email", "payer_name", "thank_you_url", "error_url", "basic_verification", "is_bankauth", "signature_required", "submit_for_approval"}
	linkNever = []string{"bank_account", "bank_routing", "token", "name"}
)

// links reports whether header is a payment-link file's: it names a
// column only links have, and no bank account.
func links(header []string) bool {
	seen := headerKeys(header)
	return hasAny(seen, linkOnly) && !hasAny(seen, linkNever)
}

// hasAny reports whether seen (headerKeys) holds one of cols.
func hasAny(seen map[string]bool, cols []string) bool {
	for _, c := range cols {
		if seen[key(c)] {
			return true
		}
	}
	return false
}

// appliedColumns are the columns of the kinds ingest applies, by kind.
var appliedColumns = map[payment.BatchKind][]string{
	payment.KindApprovals: ApprovalColumns,
	payment.KindCancels:   CancelColumns,
	payment.KindLinks:     LinkColumns,
	payment.KindEdits:     EditColumns,
}

// cancels reports whether header is a cancel file's.
func cancels(header []string) bool {
	seen := headerKeys(header)
	if !seen[key(CancelReason)] || seen[key("approved_by")] || seen[key("amount")] {
		return false
	}
	return hasAllOfOne(seen, CancelRefs)
}

// Edit files. An edit file's header names the check by its id, or by the
// payment file and line that made it, and carries bank_account (the
// API's edit takes the whole check, and batchd keeps only the last four
// digits of a check's account). A payment file has bank_account too, and
// label and number, but never check_id, file or line (none is a field of
// payment.Fields); a header with approved_by is an approvals file's and
// one with reason a cancel file's, so no header is taken for two kinds.
var (
	EditAccount = "bank_account"
	// EditRefs are the ways of naming the check, in the order they are
	// read when a line gives more than one. Label and number are no way of
	// naming it here: in an edit file they are new values.
	EditRefs = [][]string{{"check_id"}, {"file", "line"}}
)

// EditColumns are every column an edit file's line is read from.
var EditColumns = []string{"check_id", "file", "line", "amount", "number", "label", "memo", "name", "email", "bank_routing", "bank_account"}

// edits reports whether header is an edit file's.
func edits(header []string) bool {
	seen := headerKeys(header)
	if !seen[key(EditAccount)] || seen[key("approved_by")] || seen[key(CancelReason)] {
		return false
	}
	return hasAllOfOne(seen, EditRefs)
}
