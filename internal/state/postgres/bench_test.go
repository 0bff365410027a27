package postgres

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state/kv"
)

// The benchmarks run on pgtest's server (fsync off): they measure round
// trips and locking, not disks.

func benchStore(b *testing.B) *Store {
	s, err := Open(context.Background(), pgtest.NewDatabase(b), Options{Projection: NoTables})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.Update(func(tx kv.Tx) error {
		_, err := tx.CreateBucketIfNotExists([]byte("rows"))
		return err
	}); err != nil {
		b.Fatal(err)
	}
	return s
}

// transition is a row transition's shape: read a row, write it back.
func transition(n int64) func(kv.Tx) error {
	return func(tx kv.Tx) error {
		b := tx.Bucket([]byte("rows"))
		k := []byte(fmt.Sprintf("row%08d", n%1000))
		_ = b.Get(k)
		return b.Put(k, make([]byte, 200))
	}
}

func BenchmarkUpdateTransition(b *testing.B) {
	s := benchStore(b)
	var n int64
	for b.Loop() {
		n++
		if err := s.Update(transition(n)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBatchTransitionParallel(b *testing.B) {
	s := benchStore(b)
	var n atomic.Int64
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.Batch(transition(n.Add(1))); err != nil {
				b.Error(err)
			}
		}
	})
}

func BenchmarkUpdateTransitionParallel(b *testing.B) {
	s := benchStore(b)
	var n atomic.Int64
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.Update(transition(n.Add(1))); err != nil {
				b.Error(err)
			}
		}
	})
}
