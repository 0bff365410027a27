package postgres

import "sync"

// valueCache holds the values of keys this process last read or
// committed, so that an optimistic write transaction (Batch, see tx.go)
// reads them without a round trip: a row's transitions read back what
// the one before wrote, and every transition reads the ledger's write
// count and its batch's counts. A cached value is only a guess: every
// value a transaction took from the cache is in its read set, which the
// commit checks against the database under the write lock, so a stale
// one (another instance wrote the key) costs a retry, never a decision
// made on it. Read-only transactions never read from it: they read one
// snapshot of the database. The keys they read together (GetMany) fill
// it, as a write transaction's reads do: a reconcile page's rows are
// read so, and its status commit reads them next; a value from an older
// snapshot is only a guess too, checked like any other.
type valueCache struct {
	mu      sync.Mutex
	m       map[string][]byte // wkey → value; a nil value: known absent
	missing map[string]bool   // buckets known absent
	// streak counts, per bucket, the fetches of missed keys in a row
	// that found the bucket's keys all absent (prefetch.go).
	streak map[string]int
}

// noBucket reports whether the bucket is known absent.
func (c *valueCache) noBucket(name []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.missing[string(name)]
}

// absent remembers that a bucket was read absent; made that a committed
// transaction found or made it.
func (c *valueCache) absent(name []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.missing == nil {
		c.missing = map[string]bool{}
	}
	c.missing[string(name)] = true
}

func (c *valueCache) made(name []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.missing, string(name))
}

// cacheKeys bounds the cache: about a batch's working set of rows and
// their indexes, a few megabytes. A full cache drops an eighth of its
// keys, whichever the map gives first.
const cacheKeys = 1 << 14

func (c *valueCache) get(bucket, k []byte) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[wkey(bucket, k)]
	return v, ok
}

// fill remembers a value read from the database, unless the key is
// already known: a commit's write-through is newer than a read that
// raced it.
func (c *valueCache) fill(bucket, k, v []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := wkey(bucket, k)
	if _, ok := c.m[key]; !ok {
		c.put(key, v)
	}
}

// commit remembers the values a committed transaction wrote.
func (c *valueCache) commit(w *writes) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, i := range w.latest {
		op := w.ops[i]
		if op.del {
			c.put(key, nil)
		} else {
			c.put(key, op.v)
		}
	}
}

func (c *valueCache) put(key string, v []byte) {
	if c.m == nil {
		c.m = map[string][]byte{}
	}
	if len(c.m) >= cacheKeys {
		drop := cacheKeys / 8
		for k := range c.m {
			if drop == 0 {
				break
			}
			delete(c.m, k)
			drop--
		}
	}
	c.m[key] = v
}

// clear forgets every value: after a conflict, or a commit whose outcome
// is unknown.
func (c *valueCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
	clear(c.missing)
	clear(c.streak)
}

// fetched counts the fetch of missed keys (buckets[i]'s key read as
// vals[i]) in each bucket's streak: one more when the bucket's keys were
// all absent, none left when one was present.
func (c *valueCache) fetched(buckets, vals [][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.streak == nil {
		c.streak = map[string]int{}
	}
	present := map[string]bool{}
	for i, b := range buckets {
		present[string(b)] = present[string(b)] || vals[i] != nil
	}
	for b, p := range present {
		if p {
			delete(c.streak, b)
		} else {
			c.streak[b]++
		}
	}
}

// guessAbsent reports whether every key of ms is in a bucket whose keys
// the last guessAfter fetches found absent.
func (c *valueCache) guessAbsent(ms []missed) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range ms {
		if c.streak[string(m.bucket)] < guessAfter {
			return false
		}
	}
	return true
}
