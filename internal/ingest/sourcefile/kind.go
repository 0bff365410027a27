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
	if k, ok := appliedKindOf(header); ok {
		return k
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

// appliedKindOf finds the applied kind (payment.KindInfo.Header) whose
// rule header matches; the rules are exclusive, so the first is the only.
func appliedKindOf(header []string) (payment.BatchKind, bool) {
	seen := make(map[string]bool, len(header))
	for _, cell := range header {
		seen[key(cell)] = true
	}
	has := func(col string) bool { return seen[key(col)] }
	for _, k := range payment.Kinds() {
		if k.Applied && k.Header.Matches(has) {
			return k.Kind, true
		}
	}
	return "", false
}
