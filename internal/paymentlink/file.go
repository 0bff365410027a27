package paymentlink

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
)

// A payment-link file's lines, as ingest applies them (ingest.LineKind):
// each line is read into its intent and created exactly once (create);
// the file's results report gives each line's link.

// ResultsTable is the layout of <payment-link file>.results.csv.
var ResultsTable = report.Table{Sheet: "payment links", Columns: report.Columns(
	"line:int", "invoice", "payer_name", "amount:money", "checkout_token", "link", "status", "note",
)}

var _ ingest.LineKind = (*Kind)(nil)

// Report is the kind's results report.
func (k *Kind) Report() ingest.LineReport {
	return ingest.LineReport{Table: ResultsTable, Dir: "payment-links", Did: "payment links created"}
}

// Apply reads line l of the file meta and creates its link exactly once.
func (k *Kind) Apply(ctx context.Context, meta payment.FileMeta, l ingest.Line) (ingest.LineResult, error) {
	rec, why := readLine(meta, l)
	r := lineResult{Line: rec}
	switch {
	case why != "":
		r.Outcome, r.Note = Refused, why
	case k.svc == nil:
		r.Outcome, r.Note = Refused, "this batchd does not create payment links"
	default:
		if why, err := k.unfindable(rec); err != nil || why != "" {
			r.Outcome, r.Note = Refused, why
			return r, err
		}
		done, err := k.create(ctx, rec)
		r.Line = done
		if err != nil {
			return r, err
		}
		if rec.NoRef {
			k.memos.add(done)
		}
	}
	return r, nil
}

// Check says what is wrong with a line's form, or "".
func (k *Kind) Check(l ingest.Line) string {
	_, why := readLine(payment.FileMeta{SHA256: "validate"}, l)
	return why
}

// unfindable says why a line without batchd's reference could not be
// told from a link batchd made before, or "": its memo and amount must be
// no other line's, of this file or any other, since they are what finds
// it after a lost answer.
func (k *Kind) unfindable(rec Line) (string, error) {
	if !rec.NoRef {
		return "", nil
	}
	o, err := k.memos.clash(rec, func() ([]Line, error) { return Lines(k.db, "") })
	if err != nil || o == nil {
		return "", err
	}
	where := fmt.Sprintf("line %d of this file", o.Key.Line)
	if o.Key.File != rec.Key.File {
		where = "a link of an earlier file"
	}
	return fmt.Sprintf("memo %q and amount %s are those of %s: with memo_reference off they are how batchd finds a link again, so each link needs its own (add the invoice number to the memo, or leave memo_reference on)",
		rec.Request.Memo, rec.Request.Amount, where), nil
}

// lineResult is one row of the results report.
type lineResult struct{ Line }

func (r lineResult) Cells() []any {
	return []any{r.Key.Line, r.Invoice, r.PayerName, r.Request.Amount, r.Token, r.URL, string(r.Outcome), r.Note}
}

func (r lineResult) Applied() bool { return r.Outcome == Created }

// flags are the true/false columns of a link file, and where each goes.
var flags = []struct {
	name string
	to   func(*Request) *bool
}{
	{"recurring", func(r *Request) *bool { return &r.Recurring }},
	{"fund_confirmation", func(r *Request) *bool { return &r.FundConfirmation }},
	{"basic_verification", func(r *Request) *bool { return &r.BasicVerification }},
	{"is_bankauth", func(r *Request) *bool { return &r.IsBankAuth }},
	{"signature_required", func(r *Request) *bool { return &r.SignatureRequired }},
	{"submit_for_approval", func(r *Request) *bool { return &r.SubmitForApproval }},
}

// readLine reads one line of a payment-link file into the record its
// intent will be, and says what is wrong with it, or "".
func readLine(meta payment.FileMeta, l ingest.Line) (Line, string) {
	cell := l.Cell
	ref := Ref(meta.SHA256, l.Number)
	rec := Line{Key: payment.LineKey{File: meta.SHA256, Line: l.Number}, Ref: ref,
		Invoice: cell("invoice"), PayerEmail: cell("payer_email"), PayerName: cell("payer_name")}
	r := &rec.Request
	withRef, ok := csvfile.ParseBool(cell("memo_reference"))
	switch {
	case !ok:
		return rec, fmt.Sprintf("memo_reference %q must be true or false (or 1/0, yes/no)", cell("memo_reference"))
	case cell("memo_reference") != "" && !withRef:
		rec.NoRef = true
		r.Memo = string([]rune(cell("memo"))[:min(len([]rune(cell("memo"))), MemoMax)])
		if r.Memo == "" {
			return rec, "memo is empty: with memo_reference off, the memo and the amount are how batchd finds the link again; give each link a memo of its own, such as its invoice number"
		}
	default:
		r.Memo = Memo(cell("memo"), ref)
	}
	r.ThankYouURL, r.ErrorURL = cell("thank_you_url"), cell("error_url")
	r.RecurringCycle, r.RecurringStartDate = cell("recurring_cycle"), cell("recurring_start_date")
	if s := cell("amount"); s != "" {
		a, err := money.Parse(s)
		if err != nil || a <= 0 {
			return rec, fmt.Sprintf("amount %q is not an amount of money above zero (like 125.00)", s)
		}
		r.Amount = a
	}
	if s := cell("recurring_installments"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return rec, fmt.Sprintf("recurring_installments %q is not a count (0 means until cancelled)", s)
		}
		r.RecurringInstallments = &n
	}
	for _, f := range flags {
		v, ok := csvfile.ParseBool(cell(f.name))
		if !ok {
			return rec, fmt.Sprintf("%s %q must be true or false (or 1/0, yes/no)", f.name, cell(f.name))
		}
		*f.to(r) = v
	}
	for _, u := range []string{"thank_you_url", "error_url"} {
		if v := cell(u); v != "" && !strings.HasPrefix(v, "https://") && !strings.HasPrefix(v, "http://") {
			return rec, fmt.Sprintf("%s %q is not a web address (https://…)", u, v)
		}
	}
	return rec, ""
}
