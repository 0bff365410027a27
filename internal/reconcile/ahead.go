package reconcile

import (
	"context"
	"fmt"

	"github.com/batchd/batchd/internal/payment"
)

// aheadRows bounds the rows the status report's pass reads in one ledger
// call when the walk has run ahead of it (readAhead).
const aheadRows = 1000

// readAhead reads, for the status report's pass, the rows the walk looked
// at before the pass reached them whose records the matcher did not keep
// (it keeps at most freshCap). Should the walk run that far ahead (a busy
// machine, a ledger a network away), reading each such row alone would
// cost the pass a ledger transaction a row, a round trip or more each on
// PostgreSQL, and leave it further behind with every row. So it reads,
// with the row the pass needs, the next rows of the same batch that are
// in the same case, up to aheadRows, in one call (RowsByKey), and keeps
// their records until the pass reaches them.
//
// Every row it reads has been looked at by the walk (m.checked), so the
// walk's observation of it has committed: the record shows the row as the
// walk left it, or later, as the report requires (stream.go). Used by the
// pass's one goroutine only.
type readAhead struct {
	m    *matcher
	kept map[payment.RowKey]*record // read ahead, not yet reached by the pass
}

func newReadAhead(m *matcher) *readAhead {
	return &readAhead{m: m, kept: map[payment.RowKey]*record{}}
}

// record is the record of row k, which the walk looked at and the matcher
// kept no record of: read ahead already, or read now with the rows after
// it. The rows of a batch come and go together (a prune removes whole
// batches), so a row after k is missing only when k is.
func (a *readAhead) record(k payment.RowKey) (*record, error) {
	if rec := a.kept[k]; rec != nil {
		delete(a.kept, k)
		return rec, nil
	}
	keys := a.unkept(k)
	rows, err := a.m.db.RowsByKey(keys)
	if err != nil {
		return nil, fmt.Errorf("read %s and %d rows after it: %w", k, len(keys)-1, err)
	}
	for _, r := range rows[1:] {
		a.kept[r.Key] = recordOf(r)
	}
	return recordOf(rows[0]), nil
}

// unkept is k, then the rows after it in its batch, in line order, that
// the walk has looked at, the pass has not taken, and of which no record
// is kept, here or by the matcher: at most aheadRows keys.
func (a *readAhead) unkept(k payment.RowKey) []payment.RowKey {
	m := a.m
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := []payment.RowKey{k}
	m.checked.after(k, func(j payment.RowKey) bool {
		if !m.written.has(j) && m.fresh[j] == nil && a.kept[j] == nil {
			keys = append(keys, j)
		}
		return len(keys) < aheadRows
	})
	return keys
}

// passed forgets what was read ahead of row k once the pass is past it
// (a row the report then did not show).
func (a *readAhead) passed(k payment.RowKey) { delete(a.kept, k) }

// rowQueue is how many rows of the ledger the status report's pass reads
// before it needs them (eachRowQueued): a scan's chunk (1,000 rows).
const rowQueue = 1000

// eachRowQueued is eachRow read on a goroutine of its own, up to rowQueue
// rows ahead of fn, so that the ledger's next rows are read while the pass
// waits for and writes the rows before them. Read in step with the pass,
// each chunk of rows stalled it for the chunk's round trips (a dozen at
// least on PostgreSQL), during which the walk ran on: a walk that gets
// freshCap rows ahead has the pass read rows again (readAhead).
func (m *matcher) eachRowQueued(ctx context.Context, fn func(*payment.Row) (bool, error)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows, read := make(chan *payment.Row, rowQueue), make(chan error, 1)
	go func() {
		defer close(rows)
		read <- m.eachRow(ctx, func(r *payment.Row) (bool, error) {
			select {
			case rows <- r:
				return true, nil
			case <-ctx.Done():
				return false, ctx.Err()
			}
		})
	}()
	for r := range rows {
		if more, err := fn(r); err != nil || !more {
			cancel() // the reader's error is then only the cancellation
			for range rows {
			}
			<-read
			return err
		}
	}
	return <-read
}
