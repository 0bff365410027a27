package paymentlink

import (
	"sync"

	"github.com/batchd/batchd/internal/money"
)

// memoIndex holds the link lines a line without batchd's reference must
// not share its memo and amount with, by amount: the ledger's lines, read
// once per file rather than once per line, and the lines of the file
// created since. A file's lines are applied in order; the index is
// rebuilt when another file starts, or the same file starts again (a line
// not after the last one seen), so lines another process or a prune
// changed in between are read afresh.
type memoIndex struct {
	mu   sync.Mutex
	file string // the file the index was built for
	last int    // the last line of it seen
	by   map[money.Cents][]Line
}

// clash returns a line other than rec with rec's amount and memo, if any,
// reading the ledger through load when rec starts another file.
func (x *memoIndex) clash(rec Line, load func() ([]Line, error)) (*Line, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.by == nil || x.file != rec.Key.File || rec.Key.Line <= x.last {
		all, err := load()
		if err != nil {
			return nil, err
		}
		x.file, x.last, x.by = rec.Key.File, 0, map[money.Cents][]Line{}
		for _, l := range all {
			x.by[l.Request.Amount] = append(x.by[l.Request.Amount], l)
		}
	}
	x.last = rec.Key.Line
	for i, o := range x.by[rec.Request.Amount] {
		if o.Key != rec.Key && sameMemo(o.Request.Memo, rec.Request.Memo) {
			return &x.by[rec.Request.Amount][i], nil
		}
	}
	return nil, nil
}

// add records rec, now in the ledger, for the lines after it.
func (x *memoIndex) add(rec Line) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.by != nil && x.file == rec.Key.File {
		x.by[rec.Request.Amount] = append(x.by[rec.Request.Amount], rec)
	}
}
