package postgres

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/state/kv"
)

// Group commit defaults: bbolt's ledger shares commits over a 2 ms window
// too. A commit on a replicated database costs a round trip to the
// standby, so sharing it is what lets concurrent row transitions keep up.
const (
	DefaultBatchDelay = 2 * time.Millisecond
	DefaultBatchSize  = 128
)

// batcher collects Batch calls and runs them in shared transactions, as
// bbolt's DB.Batch does: calls arriving within the delay (or until size
// calls are waiting) run one after another in one write transaction,
// which commits once. When one call fails (its fn returns an error or
// meets a database error), the transaction is rolled back, the others run
// again without it, and it then runs alone through Update, so its caller
// gets its own error and no caller gets another's. A failure of the
// transaction itself (begin, lock, fence, commit) goes to every caller.
//
// The shared transactions are optimistic (commit.go) and run one at a
// time: calls arriving while one runs wait together for the next, as on
// bbolt's single writer. Two at once would read the same counters (the
// write count, a batch's counts) and the later would only conflict.
type batcher struct {
	s       *Store
	delay   time.Duration
	size    int
	running sync.Mutex // held by the batch whose transaction runs
	mu      sync.Mutex
	cur     *batch // collecting calls; nil when none is
}

type batch struct {
	b     *batcher
	timer *time.Timer
	start sync.Once
	calls []call
}

type call struct {
	fn  func(kv.Tx) error
	err chan error
}

// errRunAlone tells a caller its fn failed inside a shared transaction.
var errRunAlone = errors.New("batch call failed in a shared transaction: run it alone")

func (b *batcher) init(s *Store, o Options) {
	b.s, b.delay, b.size = s, o.BatchDelay, o.BatchSize
	if b.delay <= 0 {
		b.delay = DefaultBatchDelay
	}
	if b.size <= 0 {
		b.size = DefaultBatchSize
	}
}

func (b *batcher) do(fn func(kv.Tx) error) error {
	c := call{fn: fn, err: make(chan error, 1)}
	b.mu.Lock()
	if b.cur == nil {
		bt := &batch{b: b}
		bt.timer = time.AfterFunc(b.delay, bt.trigger)
		b.cur = bt
	}
	bt := b.cur
	bt.calls = append(bt.calls, c)
	if len(bt.calls) >= b.size {
		b.cur = nil // full: the next call starts another batch
		go bt.trigger()
	}
	b.mu.Unlock()
	if err := <-c.err; err != errRunAlone {
		return err
	}
	return b.s.Update(fn)
}

func (bt *batch) trigger() { bt.start.Do(bt.run) }

func (bt *batch) run() {
	b := bt.b
	b.running.Lock() // calls keep joining bt until it starts
	defer b.running.Unlock()
	b.mu.Lock()
	bt.timer.Stop()
	if b.cur == bt {
		b.cur = nil
	}
	calls := bt.calls
	b.mu.Unlock()
	for len(calls) > 0 {
		failed := -1
		var last *tx
		err := b.s.run(optimistic, b.s.fencing.Load(), func(t *tx) error {
			failed, last, t.calls = -1, t, len(calls)
			if t.mode == optimistic && prefetch(calls, t) {
				return t.err
			}
			for i, c := range calls {
				t.call = i
				if err := safeCall(c.fn, t); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		// A write the database refused (at the commit, or sent early by
		// a locked transaction) is its call's, whichever call ran then.
		if err != nil && last != nil && last.failedCall >= 0 {
			failed = last.failedCall
		}
		if failed < 0 {
			for _, c := range calls {
				c.err <- err
			}
			return
		}
		calls[failed].err <- errRunAlone
		calls = append(calls[:failed:failed], calls[failed+1:]...)
	}
}

// prefetch runs the calls once with reads the cache lacks deferred
// (prefetch.go). It reports true when that pass is the transaction's run
// (every call succeeded, and it missed nothing or only keys that are
// absent), or the transaction has failed; otherwise it has read the keys
// missed into the cache and restarted t, for the calls to run again.
func prefetch(calls []call, t *tx) bool {
	t.deferMisses = true
	ok := true
	for i, c := range calls {
		t.call = i
		if safeCall(c.fn, t) != nil {
			ok = false
		}
	}
	t.deferMisses = false
	if t.err != nil {
		return true
	}
	if ok && len(t.missed) == 0 {
		return true
	}
	if t.mode != optimistic {
		// A call took the write lock and may have sent writes, which a
		// restart cannot take back: run the batch again, locked.
		t.failWith(fmt.Errorf("%s: %w", t.s.Name(), errConflict))
		return true
	}
	if ok && len(t.missed) > 0 && t.guessMissed() {
		return true
	}
	if len(t.missed) > 0 {
		absent, err := t.fetchMissed()
		if err != nil || (ok && absent) {
			return true
		}
	}
	t.restart()
	return false
}

// safeCall runs fn, turning a panic into an error: the panicking call is
// then run alone, where the panic reaches its own caller.
func safeCall(fn func(kv.Tx) error, t *tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("batch function panicked: %v", p)
		}
	}()
	return fn(t)
}
