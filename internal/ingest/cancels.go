package ingest

import (
	"context"
	"fmt"
	"strconv"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
)

// CancelLine is one line of a cancel file: void the check it names, for
// Reason. The check is named by CheckID, or by the payment file (as it
// was ingested) and line that made it, or by its label and number; the
// first given is used. FileSHA and Line are the cancel file's content
// hash and this line's number: the ledger's key for the line's intent.
type CancelLine struct {
	FileSHA string
	Line    int

	CheckID       string
	File          string
	RowLine       int
	Label, Number string
	Token         string // a payment link's checkout token: the line cancels the link
	Reason        string
}

// CheckResult is what became of one line of an applied file that acts on
// a check (a cancel or an edit line), with the kind's outcome O.
type CheckResult[O ~string] struct {
	CheckID string
	Token   string // the payment link's, for a line that cancels a link
	Row     string // the payment file and line whose check it is, or ""
	Outcome O
	Status  payment.Status // the check's status as last seen
	Note    string         // why, in words
	Action  string         // what a person must do, for an outcome that needs one
}

// CancelResult is what became of one cancel line.
type CancelResult = CheckResult[payment.CancelOutcome]

// CancelFunc applies one cancel line with the one void rule (jobs.Cancel,
// passed in because ingest cannot import jobs). A line the rule refuses
// (no such row, no check yet) is a result with outcome CancelRefused; err
// is a failure that left the line undone (the ledger, or the service not
// answering), which stops the file.
type CancelFunc func(ctx context.Context, c CancelLine) (CancelResult, error)

// CancelResultsTable is the layout of <cancel file>.results.csv.
var CancelResultsTable = report.Table{Sheet: "cancels",
	Columns: report.Columns("line:int", "check_id", "payment_row", "checkout_token", "reason", "result", "check_status", "note", "action")}

type cancelResult struct {
	line   int
	reason string
	CancelResult
}

func (r cancelResult) Cells() []any {
	return []any{r.line, r.CheckID, r.Row, r.Token, r.reason, string(r.Outcome), string(r.Status), r.Note, r.Action}
}

func (r cancelResult) Applied() bool {
	return r.Outcome == payment.CancelVoided || r.Outcome == payment.CancelLinkClosed
}

// Cancels is the cancel kind, each line applied with cancel (the one void
// rule, jobs.Cancel). Nil cancel: every line is refused, saying so.
func Cancels(cancel CancelFunc) LineKind {
	return actingKind(LineReport{Table: CancelResultsTable, Dir: "cancels", Did: "cancel lines voided their checks"},
		readCancel, cancel, "this batchd does not void checks by cancel file",
		func(c CancelLine, note string) CancelResult {
			return CancelResult{CheckID: c.CheckID, Token: c.Token, Outcome: payment.CancelRefused, Note: note}
		},
		func(l Line, c CancelLine, r CancelResult) LineResult {
			return cancelResult{line: l.Number, reason: c.Reason, CancelResult: r}
		})
}

// actingKind is a kind whose lines act on a check (cancels, edits): each
// line is read; a line of bad form, or one that a batchd without the
// kind's rule meets (off says so), is refused; any other is applied with
// rule. refused words a refusal; row makes the results report's row.
func actingKind[L, R any](rep LineReport, read func(payment.FileMeta, Line) (L, string), rule func(context.Context, L) (R, error),
	off string, refused func(L, string) R, row func(Line, L, R) LineResult) LineKind {
	return lineKind{
		report: rep,
		apply: func(ctx context.Context, meta payment.FileMeta, l Line) (LineResult, error) {
			v, why := read(meta, l)
			if why == "" && rule == nil {
				why = off
			}
			if why != "" {
				return row(l, v, refused(v, why)), nil
			}
			res, err := rule(ctx, v)
			return row(l, v, res), err
		},
		check: func(l Line) string {
			_, why := read(payment.FileMeta{}, l)
			return why
		},
	}
}

// readCancel reads one line of a cancel file and says what is wrong
// with its form, or "" (neither the ledger nor the service is asked).
func readCancel(meta payment.FileMeta, l Line) (CancelLine, string) {
	cell := l.Cell
	c := CancelLine{FileSHA: meta.SHA256, Line: l.Number, CheckID: cell("check_id"), File: cell("file"),
		Label: cell("label"), Number: cell("number"), Token: cell("checkout_token"), Reason: cell("reason")}
	return c, c.check(cell("line"))
}

// check reads the line's reference (rowLine is the line column's cell)
// and says what is wrong with it, or "".
func (c *CancelLine) check(rowLine string) string {
	if c.Reason == "" {
		return "reason is empty: say why the check is cancelled (it is kept in the row's history)"
	}
	if c.CheckID == "" && c.Token != "" {
		if len(c.Token) != 36 {
			return fmt.Sprintf("checkout_token %q is not a payment link's token (36 characters, as the links report gives it)", c.Token)
		}
		c.File, c.Label, c.Number = "", "", ""
		return ""
	}
	n, named, why := readRef(&c.CheckID, &c.File, rowLine)
	switch {
	case why != "":
		return why
	case named:
		c.RowLine, c.Label, c.Number = n, "", ""
	case c.Label == "" || c.Number == "":
		return "the line names no check: give check_id, or file and line, or label and number, or a payment link's checkout_token"
	}
	return ""
}

// readRef reads how a line of an applied file names a check: by its id
// (then file is cleared), or by the payment file and line that made it
// (rowLine is the line column's cell, read into n). named is false when
// the line names it neither way; why says what is wrong, or "".
func readRef(id, file *string, rowLine string) (n int, named bool, why string) {
	switch {
	case *id != "":
		if len(*id) != 36 {
			return 0, true, fmt.Sprintf("check_id %q is not a check id (36 characters, as the status report gives it)", *id)
		}
		*file = ""
		return 0, true, ""
	case *file != "" || rowLine != "":
		n, err := strconv.Atoi(rowLine)
		if *file == "" || err != nil || n <= 0 {
			return 0, true, fmt.Sprintf("file %q line %q does not name a row: give the payment file's name as it was ingested and the row's line, 2 or more", *file, rowLine)
		}
		return n, true, ""
	}
	return 0, false, ""
}
