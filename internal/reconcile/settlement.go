package reconcile

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
)

// statusOrder is the lifecycle order of check statuses in the settlement
// report; any other status follows, alphabetically.
var statusOrder = []string{"in_process", "in_review", "printed", "deposited", "failed", "void", "deleted"}

func compareStatus(a, b string) int {
	ia, ib := slices.Index(statusOrder, a), slices.Index(statusOrder, b)
	if ia < 0 {
		ia = len(statusOrder)
	}
	if ib < 0 {
		ib = len(statusOrder)
	}
	return cmp.Or(cmp.Compare(ia, ib), cmp.Compare(a, b))
}

// tally is a count and an exact sum.
type tally struct {
	count  int
	amount money.Cents
}

func (t *tally) add(a money.Cents) error {
	s, err := t.amount.Add(a)
	if err != nil {
		return fmt.Errorf("sum of amounts: %w", err)
	}
	t.count++
	t.amount = s
	return nil
}

// settlement is the status report summed up. It is computed from the very
// lines of the status report, so the two always agree. Amounts are summed
// by status and by outcome (record.outcome), never across outcomes: no
// line adds money that was not paid to money that was, nor money owed to
// money stopped on purpose (a void status line is split in two when
// some of its checks were cancelled on request).
type settlement struct {
	batches      map[uint64]string // batch -> file
	batchStatus  map[uint64]map[statusKey]*tally
	batchOutcome map[uint64]map[payment.Outcome]*tally
	status       map[statusKey]*tally
	deposited    map[Date]*tally // deposit date -> deposited checks
	outcome      map[payment.Outcome]*tally
}

// get returns m's tally of k, adding an empty one.
func get[K comparable](m map[K]*tally, k K) *tally {
	if m[k] == nil {
		m[k] = &tally{}
	}
	return m[k]
}

// statusKey is a status line's key: the status and what it says of the
// money, which for void is not paid or cancelled (record.outcome).
type statusKey struct {
	status  string
	outcome payment.Outcome
}

func compareStatusKey(a, b statusKey) int {
	return cmp.Or(compareStatus(a.status, b.status), cmp.Compare(slices.Index(payment.Outcomes, a.outcome), slices.Index(payment.Outcomes, b.outcome)))
}

func newSettlement() *settlement {
	return &settlement{batches: map[uint64]string{}, batchStatus: map[uint64]map[statusKey]*tally{},
		batchOutcome: map[uint64]map[payment.Outcome]*tally{}, status: map[statusKey]*tally{},
		deposited: map[Date]*tally{}, outcome: map[payment.Outcome]*tally{}}
}

// add counts one line of the status report, as it is written: the
// settlement keeps a tally per batch, status, outcome and deposit day,
// never the lines.
func (s *settlement) add(l statusLine) error {
	st := statusKey{l.status, l.outcome}
	s.batches[l.batch] = l.file
	if s.batchStatus[l.batch] == nil {
		s.batchStatus[l.batch] = map[statusKey]*tally{}
		s.batchOutcome[l.batch] = map[payment.Outcome]*tally{}
	}
	ts := []*tally{get(s.batchStatus[l.batch], st), get(s.batchOutcome[l.batch], l.outcome), get(s.status, st), get(s.outcome, l.outcome)}
	if st.status == "deposited" {
		ts = append(ts, get(s.deposited, l.depositedOn))
	}
	for _, t := range ts {
		if err := t.add(l.amount); err != nil {
			return err
		}
	}
	return nil
}

// Settlement report sections, the first column of every line.
const (
	SectionBatchStatus  = "batch_status"  // one batch, one status
	SectionBatchOutcome = "batch_outcome" // one batch, one outcome: paid, on its way, not paid or cancelled
	SectionStatusTotal  = "status_total"  // one status, every batch
	SectionDeposited    = "deposited_by_date"
	SectionOutcomeTotal = "outcome_total" // one outcome, every batch
)

// SettlementTable is the layout of settlement-YYYY-MM-DD.csv (and .xlsx).
// count and amount are numbers, each computed in exact cents: no formula.
// outcome says what every line's money is: paid (deposited), on_its_way
// (not final yet), not_paid (failed, void, deleted) or cancelled (voided
// on a cancel file's request: no one is owed).
var SettlementTable = report.Table{Sheet: "settlement", Columns: report.Columns(
	"section", "batch:int", "file", "status", "outcome", "deposit_date:date",
	"count:int", "amount:money",
)}

// write lays the settlement out in sections a spreadsheet can filter on
// the first column: each batch's statuses followed by its money paid, on
// its way and not paid, then the totals per status, the deposits per day
// batchd first saw them deposited, and the money paid, on its way and not
// paid over every batch. Each batch and the whole report show those three
// outcomes, at 0 when none, so that "paid 0" is said rather than left out;
// cancelled (on a cancel file's request) only where there is some.
func (s *settlement) write(r *report.Rows) error {
	line := func(section string, batch any, file, status string, o payment.Outcome, date Date, t *tally) error {
		if t == nil {
			t = &tally{}
		}
		return r.Add(section, batch, file, status, string(o), date.cell(), t.count, t.amount)
	}
	for _, b := range slices.Sorted(maps.Keys(s.batchStatus)) {
		file := s.batches[b]
		for _, st := range slices.SortedFunc(maps.Keys(s.batchStatus[b]), compareStatusKey) {
			if err := line(SectionBatchStatus, b, file, st.status, st.outcome, Date{}, s.batchStatus[b][st]); err != nil {
				return err
			}
		}
		for _, o := range payment.Outcomes {
			if o == payment.OutcomeCancelled && s.batchOutcome[b][o] == nil {
				continue // rare, and only said when some were
			}
			if err := line(SectionBatchOutcome, b, file, "", o, Date{}, s.batchOutcome[b][o]); err != nil {
				return err
			}
		}
	}
	for _, st := range slices.SortedFunc(maps.Keys(s.status), compareStatusKey) {
		if err := line(SectionStatusTotal, nil, "", st.status, st.outcome, Date{}, s.status[st]); err != nil {
			return err
		}
	}
	for _, d := range slices.SortedFunc(maps.Keys(s.deposited), Date.Compare) {
		if err := line(SectionDeposited, nil, "", "deposited", payment.OutcomePaid, d, s.deposited[d]); err != nil {
			return err
		}
	}
	for _, o := range payment.Outcomes {
		if o == payment.OutcomeCancelled && s.outcome[o] == nil {
			continue
		}
		if err := line(SectionOutcomeTotal, nil, "", "", o, Date{}, s.outcome[o]); err != nil {
			return err
		}
	}
	return nil
}

func writeSettlementFile(path string, formats []report.Format, s *settlement) ([]string, error) {
	return SettlementTable.Write(path, formats, s.write)
}
