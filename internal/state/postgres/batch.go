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
type batcher struct {
	s     *Store
	delay time.Duration
	size  int
	mu    sync.Mutex
	cur   *batch // collecting calls; nil when none is
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
	b.mu.Lock()
	bt.timer.Stop()
	if b.cur == bt {
		b.cur = nil
	}
	calls := bt.calls
	b.mu.Unlock()
	for len(calls) > 0 {
		failed := -1
		err := b.s.run(readWrite, b.s.fencing.Load(), func(t *tx) error {
			for i, c := range calls {
				err := safeCall(c.fn, t)
				if err == nil {
					// Each call's writes reach the database before the
					// next call runs, so a refusal is this call's.
					err = t.flush()
				}
				if err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
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
