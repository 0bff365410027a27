package ingest

import (
	"context"
	"fmt"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
)

// EditLine is one line of an edit file: correct the check it names, which
// must still be in process, with the values Change gives. The check is
// named by CheckID, or by the payment file (as it was ingested) and line
// that made it. BankRouting and BankAccount are the check's bank details
// in full: the service's edit takes the whole check, and batchd keeps
// only the last four digits of an account once its check exists. FileSHA
// and Line are the edit file's content hash and this line's number: the
// ledger's key for the line's intent.
type EditLine struct {
	FileSHA string
	Line    int

	CheckID string
	File    string
	RowLine int

	Change                   payment.EditChange
	BankRouting, BankAccount string
}

// EditResult is what became of one edit line, and what it changes.
type EditResult struct {
	CheckResult[payment.EditOutcome]
	Changed string // what the edit changes, in words: "amount 10.00 → 12.50"
	// AmountChanged flags an edit of the amount: the money changes.
	AmountChanged bool
}

// EditFunc applies one edit line with the one edit rule (jobs.Edit,
// passed in because ingest cannot import jobs). A line the rule refuses
// is a result with outcome EditRefused; err is a failure that left the
// line undone (the ledger, or the service not answering), which stops the
// file.
type EditFunc func(ctx context.Context, e EditLine) (EditResult, error)

// EditResultsTable is the layout of <edit file>.results.csv.
// amount_changed is "yes" where the edit changes the amount: the money
// paid changes, which a person checks first.
var EditResultsTable = report.Table{Sheet: "edits",
	Columns: report.Columns("line:int", "check_id", "payment_row", "changed", "amount_changed", "result", "check_status", "note", "action")}

type editResult struct {
	line int
	EditResult
}

func (r editResult) Cells() []any {
	flag := ""
	if r.AmountChanged {
		flag = "yes"
	}
	return []any{r.line, r.CheckID, r.Row, r.Changed, flag, string(r.Outcome), string(r.Status), r.Note, r.Action}
}

func (r editResult) Applied() bool { return r.Outcome == payment.EditEdited }

// Edits is the edit kind, each line applied with edit (the one edit rule,
// jobs.Edit). Nil edit: every line is refused, saying so.
func Edits(edit EditFunc) LineKind {
	return actingKind(LineReport{Table: EditResultsTable, Dir: "edits", Did: "edit lines corrected their checks"},
		readEdit, edit, "this batchd does not edit checks by edit file",
		func(e EditLine, note string) EditResult {
			var r EditResult
			r.CheckID, r.Outcome, r.Note = e.CheckID, payment.EditRefused, note
			return r
		},
		func(l Line, _ EditLine, r EditResult) LineResult { return editResult{line: l.Number, EditResult: r} })
}

// editValues are the columns of an edit file that give new values, and
// where each goes.
var editValues = []struct {
	name string
	to   func(*payment.EditChange) *string
}{
	{"number", func(c *payment.EditChange) *string { return &c.Number }},
	{"label", func(c *payment.EditChange) *string { return &c.Label }},
	{"memo", func(c *payment.EditChange) *string { return &c.Memo }},
	{"name", func(c *payment.EditChange) *string { return &c.Name }},
	{"email", func(c *payment.EditChange) *string { return &c.Email }},
}

// readEdit reads one line of an edit file and says what is wrong with its
// form, or "" (neither the ledger nor the service is asked). Each value
// is judged by the rule of the payment file's column of its name.
func readEdit(meta payment.FileMeta, l Line) (EditLine, string) {
	cell := l.Cell
	e := EditLine{FileSHA: meta.SHA256, Line: l.Number, CheckID: cell("check_id"), File: cell("file"),
		BankRouting: cell("bank_routing"), BankAccount: cell("bank_account")}
	n, named, why := readRef(&e.CheckID, &e.File, cell("line"))
	switch {
	case why != "":
		return e, why
	case !named:
		return e, "the line names no check: give check_id, or file and line"
	}
	e.RowLine = n
	if e.BankRouting == "" || e.BankAccount == "" {
		return e, "bank_routing and bank_account are empty: the service's edit takes the whole check, and batchd keeps only the last four digits of its account, so give the check's bank details in full"
	}
	if msg := csvfile.CheckAccount(e.BankAccount, "bank_account"); msg != "" {
		return e, "bank_account " + msg
	}
	given := false
	if s := cell("amount"); s != "" {
		if msg := csvfile.CheckField("amount", s); msg != "" {
			return e, "amount " + msg
		}
		e.Change.Amount, _ = money.Parse(s)
		given = true
	}
	for _, v := range editValues {
		s := cell(v.name)
		if s == "" {
			continue
		}
		if msg := csvfile.CheckField(v.name, s); msg != "" {
			return e, fmt.Sprintf("%s %s", v.name, msg)
		}
		*v.to(&e.Change), given = s, true
	}
	if !given {
		return e, "the line changes nothing: give a new amount, number, label, memo, name or email"
	}
	return e, ""
}
