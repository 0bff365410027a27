package reconcile

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/batchd/batchd/internal/money"
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
// lines of the status report, so the two always agree.
type settlement struct {
	batches     map[uint64]string // batch -> file
	batchStatus map[uint64]map[string]*tally
	batch       map[uint64]*tally
	status      map[string]*tally
	deposited   map[string]*tally // deposit date -> deposited checks
	grand       tally
}

func settle(lines []statusLine) (*settlement, error) {
	s := &settlement{batches: map[uint64]string{}, batchStatus: map[uint64]map[string]*tally{},
		batch: map[uint64]*tally{}, status: map[string]*tally{}, deposited: map[string]*tally{}}
	get := func(m map[string]*tally, k string) *tally {
		if m[k] == nil {
			m[k] = &tally{}
		}
		return m[k]
	}
	for _, l := range lines {
		st := l.status
		s.batches[l.batch] = l.file
		if s.batchStatus[l.batch] == nil {
			s.batchStatus[l.batch] = map[string]*tally{}
			s.batch[l.batch] = &tally{}
		}
		ts := []*tally{get(s.batchStatus[l.batch], st), s.batch[l.batch], get(s.status, st), &s.grand}
		if st == "deposited" {
			ts = append(ts, get(s.deposited, l.depositedOn))
		}
		for _, t := range ts {
			if err := t.add(l.amount); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// Settlement report sections, the first column of every line.
const (
	SectionBatchStatus = "batch_status" // one batch, one status
	SectionBatchTotal  = "batch_total"  // one batch, every status
	SectionStatusTotal = "status_total" // one status, every batch
	SectionDeposited   = "deposited_by_date"
	SectionGrandTotal  = "grand_total"
)

var settlementHeader = []string{"section", "batch", "file", "status", "deposit_date", "count", "amount"}

// write lays the settlement out in sections a spreadsheet can filter on
// the first column: each batch's statuses followed by its total, then the
// totals per status, the deposits per day batchd first saw them deposited,
// and the grand total.
func (s *settlement) write(w *report.Writer) error {
	if err := w.Write(settlementHeader...); err != nil {
		return err
	}
	line := func(section, batch, file, status, date string, t *tally) error {
		return w.Write(section, batch, file, status, date, strconv.Itoa(t.count), t.amount.String())
	}
	for _, b := range slices.Sorted(maps.Keys(s.batchStatus)) {
		id, file := strconv.FormatUint(b, 10), s.batches[b]
		for _, st := range slices.SortedFunc(maps.Keys(s.batchStatus[b]), compareStatus) {
			if err := line(SectionBatchStatus, id, file, st, "", s.batchStatus[b][st]); err != nil {
				return err
			}
		}
		if err := line(SectionBatchTotal, id, file, "", "", s.batch[b]); err != nil {
			return err
		}
	}
	for _, st := range slices.SortedFunc(maps.Keys(s.status), compareStatus) {
		if err := line(SectionStatusTotal, "", "", st, "", s.status[st]); err != nil {
			return err
		}
	}
	for _, d := range slices.Sorted(maps.Keys(s.deposited)) {
		if err := line(SectionDeposited, "", "", "deposited", d, s.deposited[d]); err != nil {
			return err
		}
	}
	return line(SectionGrandTotal, "", "", "", "", &s.grand)
}

func writeSettlementFile(path string, s *settlement) error {
	return report.WriteFile(path, s.write)
}
