package sourcefile

import (
	"fmt"
	"strings"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
)

// Markers in header.index for raw columns that map to no column.
const (
	colIgnored column = -1 // named in Options.IgnoreColumns
	colUnnamed column = -2 // empty header cell; its values must be empty too
)

// header is the checked header row of a file.
type header struct {
	kind    payment.BatchKind
	index   []column         // raw column -> column, colIgnored or colUnnamed
	present [numColumns]bool // whether the file has the column
}

// has reports whether the file has every one of cols.
func (h *header) has(cols ...column) bool {
	for _, c := range cols {
		if !h.present[c] {
			return false
		}
	}
	return true
}

// names are the canonical names of kind's columns, for suggestions.
func names(kind payment.BatchKind) []string {
	var out []string
	for _, info := range columns {
		if info.kind == kind {
			out = append(out, info.name)
		}
	}
	return out
}

// mapHeader maps the cells of the header record raw, read at line, to
// kind's columns. A cell naming none of them is an unknown column unless
// opts ignores it; a column of the file's own kind is never ignored.
func mapHeader(kind payment.BatchKind, raw []string, line int, ignore map[string]bool) (*header, error) {
	h := &header{kind: kind, index: make([]column, len(raw))}
	seen := map[column]int{} // column -> 1-based raw column
	for i, cell := range raw {
		c, ok := lookup(cell)
		switch {
		case ok && columns[c].kind == kind:
			if prev, dup := seen[c]; dup {
				return nil, &csvfile.FileError{Line: line, Column: c.String(),
					Reason: fmt.Sprintf("column appears twice (columns %d and %d)", prev, i+1)}
			}
			seen[c] = i + 1
			h.index[i] = c
			h.present[c] = true
		case strings.TrimSpace(cell) == "":
			h.index[i] = colUnnamed
		case ignore[strings.ToLower(strings.TrimSpace(cell))]:
			h.index[i] = colIgnored
		default:
			return nil, csvfile.UnknownColumn(line, i+1, cell, names(kind))
		}
	}
	if err := h.checkRequired(line); err != nil {
		return nil, err
	}
	return h, nil
}

// checkRequired rejects a header that no row could satisfy.
func (h *header) checkRequired(line int) error {
	var missing []string
	switch h.kind {
	case payment.KindVerifications:
		for _, c := range []column{colSourceID, colAmount1, colAmount2} {
			if !h.present[c] {
				missing = append(missing, c.String())
			}
		}
	default:
		if !h.present[colUserID] && !h.has(colFirstName, colLastName, colEmail) {
			missing = append(missing, "user_id, or first_name, last_name and email")
		}
		if !h.has(colRouting, colAccount) && !h.present[colToken] {
			missing = append(missing, "routing_number and account_number, or processor_token")
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &csvfile.FileError{Line: line, Reason: fmt.Sprintf("header row of a %s file lacks required column %s",
		kindWord(h.kind), strings.Join(missing, "; "))}
}

// column names cell i of a record of n cells for csvfile.Records, masking
// the account columns and the token.
func (h *header) column(n, i int) (string, bool) {
	if n != len(h.index) || h.index[i] < 0 {
		return "", false
	}
	c := h.index[i]
	return c.String(), c == colRouting || c == colAccount || c == colToken
}

// known reports whether a trimmed, lower-case name is a column of the
// file's kind, for csvfile.Records.WrongSeparator.
func (h *header) known(name string) bool {
	c, ok := lookup(name)
	return ok && columns[c].kind == h.kind
}

// kindWord names a kind of file in messages: "funding-source",
// "verification".
func kindWord(k payment.BatchKind) string {
	if k == payment.KindVerifications {
		return "verification"
	}
	return "funding-source"
}
