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
// read, with its own writes: a locked transaction sends them first, an
// optimistic one lays them over the page it read (and records the page
// as read, for its commit to check), and a key the cursor deleted is
// never returned again.
type cursor struct {
	b    *bucket
	page []pair
	i    int    // index of the current key in page; len(page) at the end
	more bool   // keys may follow the page
	last []byte // the last key the database gave for the page
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
	return c.load(c.last, false)
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

// load reads the page of keys at or after from (inclusive) or after it;
// a page that the transaction's own deletes empty is followed by the next.
func (c *cursor) load(from []byte, inclusive bool) ([]byte, []byte) {
	for {
		c.page, c.i, c.more = nil, 0, false
		if !c.read(from, inclusive) {
			return nil, nil
		}
		if len(c.page) > 0 || !c.more {
			return c.current()
		}
		from, inclusive = c.last, false
	}
}

// read loads one page from the database, as the transaction sees it; it
// reports false when the transaction has failed.
func (c *cursor) read(from []byte, inclusive bool) bool {
	t := c.b.t
	if t.flush() != nil {
		return false
	}
	if from == nil {
		from = []byte{}
	}
	q := "SELECT k, v FROM kv_keys WHERE bucket = $1 AND k > $2 ORDER BY k LIMIT $3"
	if inclusive {
		q = "SELECT k, v FROM kv_keys WHERE bucket = $1 AND k >= $2 ORDER BY k LIMIT $3"
	}
	page, err := queryRows(t, q, []any{c.b.name, from, pageSize}, func(r pgx.CollectableRow) (pair, error) {
		var p pair
		err := r.Scan(&p.k, &p.v)
		p.v = nonNil(p.v)
		return p, err
	})
	if err != nil {
		t.fail("walk bucket", c.b.name, err)
		return false
	}
	c.more = len(page) == pageSize
	if len(page) > 0 {
		c.last = page[len(page)-1].k
	}
	if t.mode != optimistic {
		c.page = page
		return true
	}
	t.reads.pages = append(t.reads.pages, pageRead{bucket: c.b.name, from: clone(from), inclusive: inclusive,
		limit: pageSize, keys: pageKeys(page), vals: pageVals(page)})
	c.page = overlay(page, t.pending.inRange(c.b.name, from, inclusive, c.last, c.more))
	return true
}

func pageKeys(page []pair) [][]byte {
	out := make([][]byte, len(page))
	for i, p := range page {
		out[i] = p.k
	}
	return out
}

func pageVals(page []pair) [][]byte {
	out := make([][]byte, len(page))
	for i, p := range page {
		out[i] = p.v
	}
	return out
}
