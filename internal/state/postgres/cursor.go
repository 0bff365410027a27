package postgres

import (
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/batchd/batchd/internal/state/kv"
)

// pageSize is how many keys a cursor reads per query.
const pageSize = 256

// cursor walks a bucket a page at a time. Each page is read in full before
// a key is returned, so the caller may run other queries on the
// transaction mid-walk. A page is what the transaction saw when it was
// read: the transaction's own writes show from the next page on, and a
// key the cursor deleted is never returned again.
type cursor struct {
	b    *bucket
	page []pair
	i    int  // index of the current key in page; len(page) at the end
	more bool // keys may follow the page
}

type pair struct{ k, v []byte }

var _ kv.Cursor = (*cursor)(nil)

func (c *cursor) First() ([]byte, []byte) { return c.load(nil, true) }

func (c *cursor) Seek(seek []byte) ([]byte, []byte) { return c.load(seek, true) }

func (c *cursor) Next() ([]byte, []byte) {
	if c.i >= len(c.page) {
		return nil, nil
	}
	c.i++
	if c.i < len(c.page) {
		return c.current()
	}
	if !c.more {
		return nil, nil
	}
	return c.load(c.page[len(c.page)-1].k, false)
}

// Delete removes the key the cursor is on; Next then returns the key
// after it.
func (c *cursor) Delete() error {
	if c.i >= len(c.page) {
		return errors.New("cursor delete: not on a key")
	}
	return c.b.Delete(c.page[c.i].k)
}

func (c *cursor) current() ([]byte, []byte) {
	if c.i >= len(c.page) {
		return nil, nil
	}
	p := c.page[c.i]
	return p.k, p.v
}

// load reads the page of keys at or after from (inclusive) or after it.
func (c *cursor) load(from []byte, inclusive bool) ([]byte, []byte) {
	c.page, c.i, c.more = nil, 0, false
	t := c.b.t
	if t.flush() != nil {
		return nil, nil
	}
	if from == nil {
		from = []byte{}
	}
	q := "SELECT k, v FROM kv_keys WHERE bucket = $1 AND k > $2 ORDER BY k LIMIT $3"
	if inclusive {
		q = "SELECT k, v FROM kv_keys WHERE bucket = $1 AND k >= $2 ORDER BY k LIMIT $3"
	}
	rows, err := t.pg.Query(t.ctx, q, c.b.name, from, pageSize)
	if err != nil {
		t.fail("walk bucket", c.b.name, err)
		return nil, nil
	}
	page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pair, error) {
		var p pair
		err := r.Scan(&p.k, &p.v)
		p.v = nonNil(p.v)
		return p, err
	})
	if err != nil {
		t.fail("walk bucket", c.b.name, err)
		return nil, nil
	}
	c.page, c.more = page, len(page) == pageSize
	return c.current()
}
