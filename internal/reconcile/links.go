package reconcile

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
)

// Payment links: money coming in. A check a payer made through a link of
// batchd's (its link_id is the link's checkout token) belongs to that
// link's line, not to a payment row: it is never a stranger to void, and
// it is reported in the links report, whose totals are kept apart from
// the payments going out in the status and settlement reports. A link
// paid twice, or for another amount than it asked, is an exception.
//
// The checks are found among those the run listed (the window's dates):
// a link paid outside the window is reported open until a run whose
// window holds the payment.

const (
	KindLinkPaidTwice   = "link_paid_twice"   // a link of batchd's paid by more than one check
	KindLinkOtherAmount = "link_other_amount" // a link paid with another amount than it asked
)

const (
	actionLinkPaidTwice   = "The payer paid this link more than once: confirm with the payer, and refund or void the extra check at the service."
	actionLinkOtherAmount = "The payer paid another amount than the link asked: confirm with the payer, and settle the difference."
)

// Link line statuses in the links report.
const (
	LinkOpen     = "open"      // created, not paid yet
	LinkClosed   = "cancelled" // deactivated by a cancel file before it was paid
	LinkPaid     = "paid"      // paid by a check
	LinkNotMade  = "refused"   // the service refused the link
	LinkNotKnown = "sent"      // its create may have left; ingest settles it on its next run
)

// LinksTable is the layout of links-YYYY-MM-DD.csv (and .xlsx).
var LinksTable = report.Table{Sheet: "payment links", Columns: report.Columns(
	"file", "line:int", "invoice", "payer_name", "amount:money", "checkout_token",
	"status", "paid:money", "checks:int", "check_ids", "check_status",
)}

// linkLine is one link line as the links report shows it.
type linkLine struct {
	payment.Link
	file   string
	checks []*payment.Check
	closed bool // a cancel file deactivated it
}

// status is the line's status in the report.
func (l *linkLine) status() string {
	switch {
	case len(l.checks) > 0:
		return LinkPaid
	case l.closed:
		return LinkClosed
	case l.Outcome == payment.LinkCreated:
		return LinkOpen
	case l.Outcome == payment.LinkRefused:
		return LinkNotMade
	}
	return LinkNotKnown
}

// linkPayments takes out of the listed checks no row owns those paid
// through a link of batchd's, and returns every link line with its checks
// and the exceptions they raise.
func (m *matcher) linkPayments() ([]linkLine, []*exception, error) {
	links, err := m.db.Links("")
	if err != nil || len(links) == 0 {
		return nil, nil, err
	}
	cancels, err := m.db.Cancels("")
	if err != nil {
		return nil, nil, err
	}
	closed := map[string]bool{}
	for _, c := range cancels {
		closed[c.Token] = c.Token != "" && c.Outcome == payment.CancelLinkClosed
	}
	lines := make([]linkLine, len(links))
	byToken := map[string]int{}
	names := map[string]string{}
	for i, l := range links {
		lines[i].Link, lines[i].closed = l, closed[l.Token]
		if l.Token != "" {
			byToken[l.Token] = i
		}
		if _, ok := names[l.Key.File]; !ok {
			f, err := m.db.File(l.Key.File)
			if err != nil && !errors.Is(err, payment.ErrNotFound) {
				return nil, nil, err
			}
			if f != nil {
				names[l.Key.File] = f.Name
			}
		}
		lines[i].file = names[l.Key.File]
	}
	m.mu.Lock()
	for id, c := range m.unknown {
		if i, ok := byToken[c.LinkID]; ok && c.LinkID != "" {
			lines[i].checks = append(lines[i].checks, c)
			delete(m.unknown, id)
		}
	}
	m.mu.Unlock()
	var excs []*exception
	for i := range lines {
		l := &lines[i]
		slices.SortFunc(l.checks, func(a, b *payment.Check) int {
			return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
		})
		for j, c := range l.checks {
			where := fmt.Sprintf("payment link of %s line %d (invoice %q, token %s)", l.file, l.Key.Line, l.Invoice, l.Token)
			if j > 0 {
				e := checkException(KindLinkPaidTwice, c)
				e.file, e.detail, e.action = l.file, fmt.Sprintf("%s: paid again, after check %s", where, l.checks[0].ID), actionLinkPaidTwice
				excs = append(excs, e)
			}
			if want := l.Request.Amount; want != 0 && c.Amount != want {
				e := checkException(KindLinkOtherAmount, c)
				e.file, e.detail, e.action = l.file, fmt.Sprintf("%s: asked %s, paid %s", where, want, c.Amount), actionLinkOtherAmount
				excs = append(excs, e)
			}
		}
	}
	return lines, excs, nil
}

// LinkCounts are the link lines by status in the links report.
type LinkCounts map[string]int

// writeLinks writes the links report, and returns its paths and the lines
// by status.
func writeLinks(path string, formats []report.Format, lines []linkLine) ([]string, LinkCounts, error) {
	counts := LinkCounts{}
	paths, err := LinksTable.Write(path, formats, func(r *report.Rows) error {
		for i := range lines {
			l := &lines[i]
			var paid money.Cents
			var ids, statuses string
			for j, c := range l.checks {
				paid += c.Amount
				if j > 0 {
					ids, statuses = ids+" ", statuses+" "
				}
				ids, statuses = ids+c.ID, statuses+string(c.Status)
			}
			st := l.status()
			counts[st]++
			if err := r.Add(l.file, l.Key.Line, l.Invoice, l.PayerName, l.Request.Amount, l.Token, st,
				paid, len(l.checks), ids, statuses); err != nil {
				return err
			}
		}
		return nil
	})
	return paths, counts, err
}

// String words the counts in one line for the log and the command's
// output: "payment links: 15 open, 5 paid".
func (c LinkCounts) String() string {
	s := "payment links:"
	sep := " "
	for _, st := range []string{LinkOpen, LinkPaid, LinkClosed, LinkNotMade, LinkNotKnown} {
		if c[st] > 0 {
			s += fmt.Sprintf("%s%d %s", sep, c[st], st)
			sep = ", "
		}
	}
	return s
}
