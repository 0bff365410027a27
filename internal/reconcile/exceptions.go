package reconcile

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

// The kinds of exception, in the order the exceptions report lists them.
const (
	KindMissing    = "missing"    // batchd recorded a check the service does not have
	KindUnknown    = "unknown"    // the service has a check batchd did not create
	KindMismatch   = "mismatch"   // the check differs from its row
	KindInDoubt    = "in_doubt"   // a row whose create answer was lost is still unresolved
	KindStuck      = "stuck"      // a check not final after the configured business days
	KindIncomplete = "incomplete" // the walk could not prove it saw the whole list
)

var kindOrder = []string{KindMissing, KindLostBatch, KindUnknown, KindMismatch, KindInDoubt, KindStuck, KindIncomplete, KindHeld, KindAccountChange, KindReturned, KindVoided}

// What a person should do about each kind, in plain words.
const (
	actionMissing       = "The service has no check with this id although batchd recorded it: do not resend the payment; send the check id to the service's support and ask what happened to it."
	actionUnreadable    = "The check could not be fetched to confirm it: run reconcile again; if this stays, send the check id to the service's support."
	actionUnknown       = "Check was created outside batchd: confirm with the payer who created it, and void it at the service if nobody did."
	actionDuplicate     = "This check carries the label and number of a payment batchd already made, so it may be a duplicate payment: compare both checks at the service and void the one that should not exist."
	actionMismatch      = "The check at the service differs from the payment file: compare the two, and if the service's copy is wrong, void it there and pay the row again."
	actionDoubtMismatch = "Do not resend this row: a check with its label and number exists with another amount. Compare it with the payment file and settle it with the service's support."
	actionInDoubt       = "batchd cannot tell whether this payment was created: do not resend it by hand. batchd looks it up again on its next submit run; if it stays here, search the service for its label and number."
	actionStuck         = "The check has not settled in the usual time: ask the service's support about it, and do not resend it while it is open."
	actionIncomplete    = "The check list kept changing while it was read: run reconcile again later. Checks created outside batchd may be missing from this report."
)

// exception is one line of the exceptions report.
type exception struct {
	kind    string
	checkID string
	key     payment.RowKey
	hasRow  bool
	file    string
	label   string
	number  string
	amount  money.Cents
	status  payment.Status
	detail  string
	action  string
}

func rowException(kind string, rec *record, file string) *exception {
	return &exception{kind: kind, checkID: rec.checkID, key: rec.key, hasRow: true, file: file,
		label: rec.label, number: rec.number, amount: rec.amount, status: rec.status}
}

func checkException(kind string, c *payment.Check) *exception {
	return &exception{kind: kind, checkID: c.ID, label: c.Label, number: c.Number, amount: c.Amount, status: c.Status}
}

// recheckUnknown matches again the listed checks that no row owned: submit
// may have recorded one of them while the walk ran.
func (m *matcher) recheckUnknown() error {
	m.mu.Lock()
	var cs []*payment.Check
	for _, c := range m.unknown {
		cs = append(cs, c)
	}
	m.mu.Unlock()
	for _, c := range cs {
		owners, err := m.db.CheckOwners([]string{c.ID})
		if err != nil {
			return fmt.Errorf("look up check %s: %w", c.ID, err)
		}
		k, owned := owners[c.ID]
		if !owned {
			continue
		}
		rec, err := m.current(k)
		if err != nil {
			return err
		}
		if err := m.matched(rec, c); err != nil {
			return err
		}
	}
	return nil
}

// finish turns what the run learnt into the exception list: checks of a
// lost batch (recorded in the ledger: lost.go), unknown checks, rows
// still in doubt, account changes and an incomplete walk,
// added to the missing, mismatched and stuck ones found along the way.
// open names the batches with rows not final (passResult).
func (m *matcher) finish(ctx context.Context, steps []Step, open map[uint64]bool, walk walkResult) ([]*exception, error) {
	lost, err := m.lostChecks()
	if err != nil {
		return nil, err
	}
	reps, stepExcs, err := m.runSteps(ctx, steps)
	if err != nil {
		return nil, err
	}
	m.steps = reps
	m.mu.Lock()
	defer m.mu.Unlock()
	byIdentity := m.twins // made by confirm's pass over the ledger
	for _, c := range m.unknown {
		if e, ok := lost[c.ID]; ok {
			m.excs[KindLostBatch+":"+c.ID] = e
			continue
		}
		e := checkException(KindUnknown, c)
		e.detail, e.action = "created "+serviceStamp(c.Created)+" by the service's clock; no row of batchd owns it", actionUnknown
		if ev, ok := m.heard[c.ID]; ok {
			e.detail = heardDetail(ev) // no label, number or amount to compare
		} else if rec, ok := byIdentity[c.Identity().Key()]; ok {
			e.detail = fmt.Sprintf("carries the label and number of %s (%s), whose check is %s", rec.key, m.files[rec.key.Batch], rec.checkID)
			e.action = actionDuplicate
		} else if k, ok := m.inFlight[c.Identity().Key()]; ok {
			e.detail = fmt.Sprintf("carries the label and number of %s, which was being submitted when the run began; run reconcile again", k)
		}
		m.excs[KindUnknown+":"+c.ID] = e
	}
	for _, ds := range m.doubts {
		for _, d := range ds {
			if m.resolved[d.Key] {
				continue
			}
			row, err := m.db.Row(d.Key)
			if err != nil {
				return nil, fmt.Errorf("reread row in doubt %s: %w", d.Key, err)
			}
			if row.State != payment.InDoubt {
				continue // submit settled it meanwhile
			}
			e := &exception{kind: KindInDoubt, key: d.Key, hasRow: true, file: m.files[d.Key.Batch],
				label: d.Label, number: d.Number, amount: d.Payment.Amount, action: actionInDoubt,
				detail: "no listed check carries its label, number and amount"}
			if row.Error != "" {
				e.detail += "; the create failed with: " + row.Error
			}
			m.excs[KindInDoubt+":"+d.Key.String()] = e
		}
	}
	if err := m.accountChanges(open); err != nil {
		return nil, err
	}
	if !walk.consistent {
		m.excs[KindIncomplete] = &exception{kind: KindIncomplete, action: actionIncomplete,
			detail: fmt.Sprintf("%d distinct checks seen, the list reported %d, after %d passes", walk.distinct, walk.total, walk.passes)}
	}
	out := make([]*exception, 0, len(m.excs)+len(stepExcs))
	for _, e := range m.excs {
		out = append(out, e)
	}
	out = append(out, stepExcs...)
	slices.SortFunc(out, compareExceptions)
	return out, nil
}

// kindRank places an exception kind in the report: reconcile's own in
// kindOrder, then a Step's, by name.
func kindRank(kind string) int {
	if i := slices.Index(kindOrder, kind); i >= 0 {
		return i
	}
	return len(kindOrder)
}

// serviceStamp writes a check's creation time as the service does, in
// UTC, or says it is unknown.
func serviceStamp(t time.Time) string {
	if t.IsZero() {
		return "at an unknown time"
	}
	return t.UTC().Format(time.DateTime)
}

func compareExceptions(a, b *exception) int {
	return cmp.Or(
		cmp.Compare(kindRank(a.kind), kindRank(b.kind)),
		cmp.Compare(a.kind, b.kind),
		cmp.Compare(a.key.Batch, b.key.Batch),
		cmp.Compare(a.key.Line, b.key.Line),
		cmp.Compare(a.checkID, b.checkID),
	)
}
