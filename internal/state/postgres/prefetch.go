package postgres

import "errors"

// A shared transaction runs its calls one after another, and each key a
// call reads that the cache lacks would cost a round trip of its own: a
// batch of sixteen created checks would read the sixteen check ids'
// owners one at a time. So the batcher first runs the calls with such
// reads deferred (tx.deferMisses): a missing key reads as absent and is
// noted, nothing of that pass is committed, and the keys noted are then
// read together, in one round trip, into the cache; the calls run again
// from a clean start (restart) and find them there. A pass that missed
// nothing and failed nowhere is a normal run, and commits as it is.
// Batch calls may run more than once (kv.Store.Batch), so this changes
// nothing a caller sees.

// Some buckets' keys are nearly always absent when a pass misses them: a
// check id the service has just made is new to the ledger. Fetching them
// costs a round trip per batch to learn nothing. So once a bucket's keys
// have been fetched absent guessAfter times in a row (valueCache.streak),
// a pass that missed only such keys takes them as absent unread: they
// join its read set like any key it read absent, and the commit checks
// them under the write lock. A wrong guess is a conflict, which empties
// the cache, streaks included, and runs the batch again, locked.
const guessAfter = 4

// missed is a key a deferring pass read without a value.
type missed struct{ bucket, k []byte }

// fetchMissed reads the keys the deferring pass missed, in one round
// trip, into the cache (absent ones as absent). When every one is absent,
// what the pass read of them was right: they join its read set, for the
// commit to check, and it reports true. It returns the sticky error.
func (t *tx) fetchMissed() (bool, error) {
	bs, ks := make([][]byte, len(t.missed)), make([][]byte, len(t.missed))
	for i, m := range t.missed {
		bs[i], ks[i] = m.bucket, m.k
	}
	vals, err := queryRows(t, `SELECT x.k IS NOT NULL, x.v FROM unnest($1::bytea[], $2::bytea[]) WITH ORDINALITY AS q(b, k, i)
		LEFT JOIN kv_keys x ON x.bucket = q.b AND x.k = q.k ORDER BY q.i`, []any{bs, ks}, scanValue)
	if err == nil && len(vals) != len(ks) {
		err = errors.New("a value missing from the answer")
	}
	if err != nil {
		return false, t.fail("read keys", nil, err)
	}
	absent := true
	for i, v := range vals {
		t.s.cache.fill(bs[i], ks[i], v)
		absent = absent && v == nil
	}
	t.s.cache.fetched(bs, vals)
	if absent {
		for i := range ks {
			t.reads.get(bs[i], ks[i], nil)
		}
	}
	return absent, nil
}

// guessMissed takes the keys the pass missed as absent, unread, when
// their buckets' streaks say so (above); it reports whether it did.
func (t *tx) guessMissed() bool {
	if !t.s.cache.guessAbsent(t.missed) {
		return false
	}
	for _, m := range t.missed {
		t.reads.get(m.bucket, m.k, nil)
	}
	return true
}

// restart forgets what the calls did in this transaction, as if it had
// just begun, keeping its connection, its opening (and the write lock,
// if it took it) and the pages it read. It takes a new ID: the ledger's
// rules remember per transaction what its first call did.
func (t *tx) restart() {
	t.id = int(t.s.txSeq.Add(1))
	t.buckets = map[string]*bucket{}
	t.onCommit = nil
	t.pending = writes{}
	t.reads = readSet{origin: t.reads.origin} // Origin answers the same
	t.missed = nil
	t.failedCall = -1
}
