package paymentlink

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/reconcile"
	"github.com/batchd/batchd/internal/report"
)

// Checks paid through links, as reconcile reports them (reconcile.Step):
// a check a payer made through a link of batchd's (its link_id is the
// link's checkout token) belongs to that link's line, never to the
// strangers to void; the links report gives each line with its checks,
// and a link paid twice, or for another amount than it asked, is an
// exception. A link the window shows no payment for is asked about
// itself (the check list's link_id filter, whatever the dates), so that a
// link paid before the window is not reported open; and the link list is
// read once a run for links deactivated at the service by hand. Both cost
// requests per run: one per link not yet paid, and a walk of the list.

const (
	KindPaidTwice   = "link_paid_twice"   // a link of batchd's paid by more than one check
	KindOtherAmount = "link_other_amount" // a link paid with another amount than it asked
)

const (
	actionPaidTwice   = "The payer paid this link more than once: confirm with the payer, and refund or void the extra check at the service."
	actionOtherAmount = "The payer paid another amount than the link asked: confirm with the payer, and settle the difference."
)

// Link line statuses in the links report, in the order the counts are
// worded.
const (
	StatusOpen     = "open"      // created, not paid yet
	StatusClosed   = "cancelled" // deactivated by a cancel file before it was paid
	StatusInactive = "inactive"  // deactivated at the service, not by batchd, before it was paid
	StatusPaid     = "paid"      // paid by a check
	StatusNotMade  = "refused"   // the service refused the link
	StatusNotKnown = "sent"      // its create may have left; ingest settles it on its next run
)

var statuses = []string{StatusOpen, StatusPaid, StatusClosed, StatusInactive, StatusNotMade, StatusNotKnown}

// LinksTable is the layout of links-YYYY-MM-DD.csv (and .xlsx).
var LinksTable = report.Table{Sheet: "payment links", Columns: report.Columns(
	"file", "line:int", "invoice", "payer_name", "amount:money", "checkout_token",
	"status", "paid:money", "checks:int", "check_ids", "check_status",
)}

var _ reconcile.Step = (*Kind)(nil)

// paidLine is one link line with the checks paid through it.
type paidLine struct {
	Line
	file     string
	checks   []*payment.Check
	closed   bool // a cancel file deactivated it
	inactive bool // the link list shows it deactivated
}

func (l *paidLine) status() string {
	switch {
	case len(l.checks) > 0:
		return StatusPaid
	case l.closed:
		return StatusClosed
	case l.inactive:
		return StatusInactive
	case l.Outcome == Created:
		return StatusOpen
	case l.Outcome == Refused:
		return StatusNotMade
	}
	return StatusNotKnown
}

// Reconcile takes out of the unknown checks those paid through a link of batchd's,
// and reports every link line with its checks.
func (k *Kind) Reconcile(ctx context.Context, run reconcile.StepRun) (*reconcile.StepReport, error) {
	lines, err := k.paidLines()
	if err != nil || len(lines) == 0 {
		return nil, err
	}
	byToken := map[string]int{}
	for i, l := range lines {
		if l.Token != "" {
			byToken[l.Token] = i
		}
	}
	for id, c := range run.Unknown {
		if i, ok := byToken[c.LinkID]; ok && c.LinkID != "" {
			lines[i].checks = append(lines[i].checks, c)
			delete(run.Unknown, id)
		}
	}
	if err := k.askTheService(ctx, lines); err != nil {
		return nil, err
	}
	rep := &reconcile.StepReport{Name: "links", Table: LinksTable, Counts: map[string]int{}}
	for i := range lines {
		l := &lines[i]
		slices.SortFunc(l.checks, func(a, b *payment.Check) int {
			return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
		})
		rep.Exceptions = append(rep.Exceptions, l.exceptions()...)
		rep.Rows = append(rep.Rows, l.row())
		rep.Counts[l.status()]++
	}
	rep.Words = words(rep.Counts)
	return rep, nil
}

// askTheService completes what the window's checks cannot tell of the
// links made and not seen paid: the checks paid through each (outside the
// window), and which the link list shows deactivated.
func (k *Kind) askTheService(ctx context.Context, lines []paidLine) error {
	if k.svc == nil {
		return nil
	}
	var unpaid []*paidLine
	for i := range lines {
		if l := &lines[i]; l.Outcome == Created && l.Token != "" && len(l.checks) == 0 {
			unpaid = append(unpaid, l)
		}
	}
	if len(unpaid) == 0 {
		return nil
	}
	inactive, err := k.inactiveLinks(ctx)
	if err != nil {
		return fmt.Errorf("read the payment-link list: %w", err)
	}
	for _, l := range unpaid {
		l.inactive = inactive[l.Token]
		var checks []payment.Check
		err := k.read(ctx, func(ctx context.Context) (err error) {
			checks, err = k.svc.PaidThrough(ctx, l.Token)
			return err
		})
		if err != nil {
			return fmt.Errorf("list the checks paid through payment link %s: %w", l.Token, err)
		}
		for i := range checks {
			l.checks = append(l.checks, &checks[i])
		}
	}
	return nil
}

// inactiveLinks walks the link list for the links it shows deactivated.
func (k *Kind) inactiveLinks(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	for page := 1; page <= walkMaxPages; page++ {
		var pg *Page
		err := k.read(ctx, func(ctx context.Context) (err error) {
			pg, err = k.svc.ListLinks(ctx, "", page)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, l := range pg.Links {
			out[l.Token] = l.Status != "" && !strings.EqualFold(l.Status, "active")
		}
		if len(pg.Links) == 0 || pg.LastPage != 0 && page >= pg.LastPage {
			return out, nil
		}
	}
	return nil, errors.New("the payment-link list did not end")
}

// paidLines are every link line, with its file's name and whether a
// cancel file closed its link.
func (k *Kind) paidLines() ([]paidLine, error) {
	recs, err := Lines(k.db, "")
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	cancels, err := payment.CancelLines.List(k.db, "")
	if err != nil {
		return nil, fmt.Errorf("read the cancel lines: %w", err)
	}
	closed := map[string]bool{}
	for _, c := range cancels {
		closed[c.Token] = c.Token != "" && c.Outcome == payment.CancelLinkClosed
	}
	names := map[string]string{}
	out := make([]paidLine, len(recs))
	for i, l := range recs {
		if _, ok := names[l.Key.File]; !ok {
			f, err := k.db.File(l.Key.File)
			if err != nil && !errors.Is(err, payment.ErrNotFound) {
				return nil, fmt.Errorf("read the payment-link file %s: %w", l.Key.File, err)
			}
			if f != nil {
				names[l.Key.File] = f.Name
			}
		}
		out[i] = paidLine{Line: l, file: names[l.Key.File], closed: closed[l.Token]}
	}
	return out, nil
}

// exceptions are the line's: each check after the first, and each check
// of another amount than the link asked.
func (l *paidLine) exceptions() []reconcile.Exception {
	var out []reconcile.Exception
	where := fmt.Sprintf("payment link of %s line %d (invoice %q, token %s)", l.file, l.Key.Line, l.Invoice, l.Token)
	for j, c := range l.checks {
		if j > 0 {
			out = append(out, reconcile.Exception{Kind: KindPaidTwice, Check: c, File: l.file,
				Detail: fmt.Sprintf("%s: paid again, after check %s", where, l.checks[0].ID), Action: actionPaidTwice})
		}
		if want := l.Request.Amount; want != 0 && c.Amount != want {
			out = append(out, reconcile.Exception{Kind: KindOtherAmount, Check: c, File: l.file,
				Detail: fmt.Sprintf("%s: asked %s, paid %s", where, want, c.Amount), Action: actionOtherAmount})
		}
	}
	return out
}

// row is the line's row of the links report.
func (l *paidLine) row() []any {
	var paid money.Cents
	var ids, sts string
	for j, c := range l.checks {
		paid += c.Amount
		if j > 0 {
			ids, sts = ids+" ", sts+" "
		}
		ids, sts = ids+c.ID, sts+string(c.Status)
	}
	return []any{l.file, l.Key.Line, l.Invoice, l.PayerName, l.Request.Amount, l.Token, l.status(),
		paid, len(l.checks), ids, sts}
}

// words words the counts in one line: "payment links: 15 open, 5 paid".
func words(counts map[string]int) string {
	s, sep := "payment links:", " "
	for _, st := range statuses {
		if counts[st] > 0 {
			s += fmt.Sprintf("%s%d %s", sep, counts[st], st)
			sep = ", "
		}
	}
	return s
}
