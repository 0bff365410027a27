package onboard

import (
	"context"
	"fmt"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
)

// A lane row's place in one pass of sendPending.
const (
	waiting  = iota // pending, not started in this pass (or sent back)
	running         // a worker has it
	finished        // settled, in doubt, given up on, or left for a stop
)

// names are what a row shares with other rows: base, the names the
// customers map cannot change; email, the email key of a row whose
// customer may come from the map; byUserID, whether a customer is named
// by a user_id the file gave (the row's, or for a verification the
// source's creating row's), whose email batchd does not know.
type names struct {
	base     []string
	email    string
	byUserID bool
}

// laneRow is one pending row of a pass and the names under which it
// shares a customer or a source with other rows (see doc.go).
type laneRow struct {
	row *funding.Row
	names
	state int
}

// lanes plans one pass: the pending rows in batch and line order, and
// the names held by rows unsettled outside it (in doubt, in flight). It is
// used by sendPending's goroutine alone.
type lanes struct {
	r     *Runner
	rows  []*laneRow
	first int // rows before it are finished: a finished row stays so
	doubt map[string]bool
}

// planLanes lists the pending rows not given up on, and the names of the
// rows that are unsettled. Rows first, sends after: a row is never written
// while the scan that found it is still reading the ledger.
func (r *Runner) planLanes() (*lanes, error) {
	p := &lanes{r: r, doubt: map[string]bool{}}
	var unsettled []*funding.Row
	err := r.led.OpenSourceRows(func(row *funding.Row) (bool, error) {
		switch {
		case row.State != payment.Pending:
			unsettled = append(unsettled, row)
		case !r.run.Skipped(row.Key):
			p.rows = append(p.rows, &laneRow{row: row})
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk pending funding-source rows: %w", err)
	}
	for _, row := range unsettled {
		if err := p.markDoubt(row); err != nil {
			return nil, err
		}
	}
	for _, lr := range p.rows {
		if lr.names, err = r.baseKeys(lr.row); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// baseKeys are the names of a row that do not depend on the customers
// map: its customer by user_id, its email, its bank account, and a
// verification's source
// and the customer that source was created for (when a row of the ledger
// created it), so that a verification and the rows of its customer take
// turns.
func (r *Runner) baseKeys(row *funding.Row) (names, error) {
	var n names
	if u := userOf(row); u != "" {
		n.base = append(n.base, "user:"+u)
	}
	n.byUserID = row.Request.UserID != ""
	if e := funding.EmailKey(row.Request.Customer.Email); e != "" {
		n.base = append(n.base, "email:"+e)
	}
	if userOf(row) == "" {
		n.email = funding.EmailKey(row.Request.Customer.Email)
	}
	if row.Request.Account != "" {
		// One bank account links to one customer: of two rows naming it,
		// the earlier in the file gets it and the later is refused.
		n.base = append(n.base, "account:"+row.Request.Routing+"/"+row.Request.Account)
	}
	if row.Request.Method != funding.Verify || row.Request.SourceID == "" {
		return n, nil
	}
	id := row.Request.SourceID
	n.base = append(n.base, "source:"+id)
	owners, err := r.led.SourceOwners([]string{id})
	if err != nil {
		return names{}, fmt.Errorf("look up the row that created funding source %s: %w", id, err)
	}
	if k, ok := owners[id]; ok && k != row.Key {
		owner, err := r.led.SourceRow(k)
		if err != nil {
			return names{}, fmt.Errorf("read %s, the owner of funding source %s: %w", k, id, err)
		}
		if u := userOf(owner); u != "" {
			n.base = append(n.base, "user:"+u)
			n.byUserID = n.byUserID || owner.Request.UserID != ""
		}
	}
	return n, nil
}

// keys are a row's names now, and whether its customer is still unknown:
// a row named by email alone whose email no row has yet bound to a
// customer. Such a row may turn out to be the customer of any row that
// names a user_id (a customer of another email it cannot be: email is a
// customer's identity, as the customers map has it).
func (p *lanes) keys(lr *laneRow) ([]string, bool) {
	if userOf(lr.row) != "" {
		return lr.base, false
	}
	if id, ok := p.r.run.customer(lr.email); ok {
		return append(lr.base[:len(lr.base):len(lr.base)], "user:"+id), false
	}
	return lr.base, lr.row.Request.Method != funding.Verify
}

// markDoubt holds the names of an unsettled row for the rest of the pass.
func (p *lanes) markDoubt(row *funding.Row) error {
	n, err := p.r.baseKeys(row)
	if err != nil {
		return err
	}
	keys, _ := p.keys(&laneRow{row: row, names: n})
	for _, k := range keys {
		p.doubt[k] = true
	}
	return nil
}

// next picks the rows that may start now, at most room of them, and marks
// them running. Rows are taken in batch and line order; a row is held
// back while a name of it is held by a row in doubt, a running row, or an
// earlier row still waiting (so that rows of one customer or source go in
// line order), and a row whose customer is named by a user_id is also
// held back while an earlier row whose customer is still unknown has not
// learned it: that row may be of the same customer.
func (p *lanes) next(room int) []*laneRow {
	held := map[string]bool{}
	unknownBefore := false
	var out []*laneRow
	for p.first < len(p.rows) && p.rows[p.first].state == finished {
		p.first++
	}
	for _, lr := range p.rows[p.first:] {
		if lr.state == finished {
			continue
		}
		keys, unknown := p.keys(lr)
		if lr.state == waiting {
			if room == 0 {
				break
			}
			if p.inDoubt(keys) {
				// It cannot start, nor learn its customer, before the
				// lookup: later rows are not held for it (as when rows
				// went one at a time).
				unknown = false
			} else if !p.held(keys, held) && !(unknownBefore && lr.byUserID) {
				lr.state = running
				out = append(out, lr)
				room--
			}
		}
		for _, k := range keys {
			held[k] = true
		}
		unknownBefore = unknownBefore || unknown
	}
	return out
}

// inDoubt reports whether a name of keys is held by a row in doubt, for
// the rest of the pass.
func (p *lanes) inDoubt(keys []string) bool {
	for _, k := range keys {
		if p.doubt[k] {
			return true
		}
	}
	return false
}

// held reports whether a name of keys is held by a running row or an
// earlier waiting one.
func (p *lanes) held(keys []string, held map[string]bool) bool {
	for _, k := range keys {
		if held[k] {
			return true
		}
	}
	return false
}

// settle takes back a row its worker finished with: in doubt (or left in
// flight), it holds its names for the rest of the pass; pending again and
// not given up on, it waits for its turn again (a customer found by email
// sends its row back, to go in that customer's lane).
func (p *lanes) settle(ctx context.Context, lr *laneRow) error {
	lr.state = finished
	now, err := p.r.led.SourceRow(lr.row.Key)
	if err != nil {
		return p.r.run.LedgerFailed(fmt.Errorf("read %s: %w", lr.row.Key, err))
	}
	switch {
	case now.State == payment.InDoubt || now.State == payment.InFlight:
		return p.markDoubt(now)
	case now.State == payment.Pending && !p.r.run.Skipped(now.Key) && !p.r.run.Stopping(ctx):
		lr.row, lr.state = now, waiting
		lr.names, err = p.r.baseKeys(now)
		return err
	}
	return nil
}

// sendPending sends the pending rows and returns how many it started.
// Rows of different customers go out together, each under a slot of the
// in-flight limit; rows of one customer or source go one at a time, in
// batch and line order, and wait while another is in doubt (doc.go). It
// returns when no row can start and none is running.
func (r *Runner) sendPending(ctx context.Context) (int, error) {
	p, err := r.planLanes()
	if err != nil {
		return 0, err
	}
	done := make(chan *laneRow)
	running, sent := 0, 0
	for {
		if !r.run.Stopping(ctx) {
			for _, lr := range p.next(r.run.Workers() - running) {
				running++
				sent++
				go func() {
					r.sendRow(ctx, lr.row.Key)
					done <- lr
				}()
			}
		}
		if running == 0 {
			break
		}
		lr := <-done
		running--
		if err := p.settle(ctx, lr); err != nil {
			r.run.Halt(err)
		}
	}
	if err := r.run.HaltedBy(); err != nil {
		return sent, err
	}
	return sent, ctx.Err()
}
