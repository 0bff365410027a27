// Package bankinfo knows the bank behind a routing number: the service's
// bank directory (GET /v1/check/bankinfo), asked once per routing number
// and its answer kept in the ledger (payment.BankLedger) for a refresh
// age. A routing number the directory says it does not know refuses its
// row at ingest, days before the check would fail; any other failure to
// ask (the service down, an answer lost, a 429) leaves the number
// unchecked and refuses nothing. Reports read the names from the ledger,
// never from the network.
package bankinfo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// Directory is the service's bank directory. A routing number it does not
// know is an error that Is payment.ErrNotFound; any other error says
// nothing of the number.
type Directory interface {
	BankName(ctx context.Context, routing string) (string, error)
}

// DefaultRefresh is how long an answer is trusted before the directory is
// asked again: banks merge and rename, slowly.
const DefaultRefresh = 30 * 24 * time.Hour

// Banks asks the directory through the ledger's cache.
type Banks struct {
	dir     Directory
	ledger  payment.BankLedger
	refresh time.Duration
	now     func() time.Time
}

// New is Banks over dir and ledger, trusting an answer for refresh
// (DefaultRefresh when 0), on the clock now.
func New(dir Directory, ledger payment.BankLedger, refresh time.Duration, now func() time.Time) *Banks {
	if refresh <= 0 {
		refresh = DefaultRefresh
	}
	return &Banks{dir: dir, ledger: ledger, refresh: refresh, now: now}
}

// Lookup returns what is known of routing: the ledger's answer while it
// is fresh, else the directory's, which the ledger then keeps. An error
// means the directory could not be asked (an older answer, if any, is
// returned with it) or the ledger failed.
func (b *Banks) Lookup(ctx context.Context, routing string) (*payment.Bank, error) {
	kept, err := b.ledger.Bank(routing)
	if err != nil {
		return nil, err
	}
	now := b.now()
	if kept != nil && now.Sub(kept.Checked) < b.refresh {
		return kept, nil
	}
	name, err := b.dir.BankName(ctx, routing)
	fresh := payment.Bank{Routing: routing, Name: name, Known: true, Checked: now.UTC()}
	switch {
	case errors.Is(err, payment.ErrNotFound):
		fresh.Name, fresh.Known = "", false
	case err != nil:
		return kept, fmt.Errorf("ask the bank directory about routing number %s: %w", routing, err)
	}
	if err := b.ledger.PutBank(fresh); err != nil {
		return nil, err
	}
	return &fresh, nil
}

// Refusal says why a row paid to routing must be refused, or "": the
// directory said it knows no bank by that number. err is a failure to
// ask, which refuses nothing: the caller warns and goes on.
func (b *Banks) Refusal(ctx context.Context, routing string) (string, error) {
	bank, err := b.Lookup(ctx, routing)
	if err != nil {
		return "", err
	}
	if !bank.Known {
		return fmt.Sprintf("the service's bank directory knows no bank with routing number %s (asked %s): "+
			"the check would fail; check the routing number with the payee and send the row again", routing, bank.Checked.Format(time.DateOnly)), nil
	}
	return "", nil
}

// Names reads the recorded names of banks for one report: each routing
// number's once, from the ledger only (never the service: a report shows
// what ingest learned). It is safe for concurrent use. The zero value is
// not usable; see NewNames.
type Names struct {
	ledger payment.BankLedger
	mu     sync.Mutex
	seen   map[string]string
}

// NewNames reads names from ledger.
func NewNames(ledger payment.BankLedger) *Names {
	return &Names{ledger: ledger, seen: map[string]string{}}
}

// Name is the recorded name of routing's bank, or "" when none is
// recorded. A ledger that cannot be read is an error naming the number,
// so that a report is not written with blank banks as if none were known.
func (n *Names) Name(routing string) (string, error) {
	if routing == "" {
		return "", nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if name, ok := n.seen[routing]; ok {
		return name, nil
	}
	b, err := n.ledger.Bank(routing)
	if err != nil {
		return "", fmt.Errorf("read the bank of routing number %s: %w", routing, err)
	}
	name := ""
	if b != nil {
		name = b.Name
	}
	n.seen[routing] = name
	return name, nil
}
