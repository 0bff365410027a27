package ingest

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
)

// LinkFunc makes one payment link exactly once (jobs.CreateLink, passed
// in because ingest cannot import jobs): it returns the line's record as
// settled (created, refused or in doubt); err is a failure that left the
// line undone, which stops the file.
type LinkFunc func(ctx context.Context, l payment.Link) (payment.Link, error)

// LinkResultsTable is the layout of <payment-link file>.results.csv.
var LinkResultsTable = report.Table{Sheet: "payment links", Columns: report.Columns(
	"line:int", "invoice", "payer_name", "amount:money", "checkout_token", "link",
	"status", "note",
)}

type linkResult struct {
	line   int
	amount money.Cents
	payment.Link
}

func (r linkResult) cells() []any {
	return []any{r.line, r.Invoice, r.PayerName, r.amount, r.Token, r.URL, string(r.Outcome), r.Note}
}

func (r linkResult) applied() bool { return r.Outcome == payment.LinkCreated }

// links is the payment-link kind as ingest applies it.
var links = appliedKind{
	table: LinkResultsTable, reports: "payment-links", did: "payment links created",
	apply: func(j *Job, ctx context.Context, meta payment.FileMeta, line int, rec []string, col map[string]int) (lineResult, error) {
		l, why := readLink(meta, line, rec, col)
		r := linkResult{line: line, amount: l.Request.Amount, Link: l}
		switch {
		case why != "":
			r.Outcome, r.Note = payment.LinkRefused, why
		case j.opts.Link == nil:
			r.Outcome, r.Note = payment.LinkRefused, "this batchd does not create payment links"
		default:
			done, err := j.opts.Link(ctx, l)
			if err != nil {
				return r, err
			}
			r.Link = done
		}
		return r, nil
	},
	check: func(line int, rec []string, col map[string]int) string {
		_, why := readLink(payment.FileMeta{SHA256: "validate"}, line, rec, col)
		return why
	},
}

// readLink reads one line of a payment-link file into the record its
// intent will be, and says what is wrong with it, or "".
func readLink(meta payment.FileMeta, line int, rec []string, col map[string]int) (payment.Link, string) {
	cell := func(name string) string { return cellOf(rec, col, name) }
	ref := payment.LinkRef(meta.SHA256, line)
	l := payment.Link{Key: payment.LineKey{File: meta.SHA256, Line: line}, Ref: ref,
		Invoice: cell("invoice"), PayerEmail: cell("payer_email"), PayerName: cell("payer_name")}
	r := &l.Request
	r.Memo = payment.LinkMemo(cell("memo"), ref)
	r.ThankYouURL, r.ErrorURL = cell("thank_you_url"), cell("error_url")
	r.RecurringCycle, r.RecurringStartDate = cell("recurring_cycle"), cell("recurring_start_date")
	if s := cell("amount"); s != "" {
		a, err := money.Parse(s)
		if err != nil || a <= 0 {
			return l, fmt.Sprintf("amount %q is not an amount of money above zero (like 125.00)", s)
		}
		r.Amount = a
	}
	if s := cell("recurring_installments"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return l, fmt.Sprintf("recurring_installments %q is not a count (0 means until cancelled)", s)
		}
		r.RecurringInstallments = &n
	}
	for name, flag := range map[string]*bool{"recurring": &r.Recurring, "fund_confirmation": &r.FundConfirmation,
		"basic_verification": &r.BasicVerification, "is_bankauth": &r.IsBankAuth,
		"signature_required": &r.SignatureRequired, "submit_for_approval": &r.SubmitForApproval} {
		v, ok := csvfile.ParseBool(cell(name))
		if !ok {
			return l, fmt.Sprintf("%s %q must be true or false (or 1/0, yes/no)", name, cell(name))
		}
		*flag = v
	}
	for _, u := range []string{"thank_you_url", "error_url"} {
		if v := cell(u); v != "" && !strings.HasPrefix(v, "https://") && !strings.HasPrefix(v, "http://") {
			return l, fmt.Sprintf("%s %q is not a web address (https://…)", u, v)
		}
	}
	return l, ""
}
