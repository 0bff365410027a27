package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state/kv"
)

// openBatching opens a Store whose batches start only when n calls wait,
// so which calls share a commit does not depend on timing.
func openBatching(t *testing.T, n int) *Store {
	t.Helper()
	s, err := Open(context.Background(), pgtest.NewDatabase(t), Options{BatchDelay: time.Hour, BatchSize: n, Projection: NoTables})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	must(t, s.Update(func(tx kv.Tx) error {
		_, err := tx.CreateBucketIfNotExists([]byte("b"))
		return err
	}))
	return s
}

// runBatch runs n Batch calls at once; fn(i) is call i's function.
func runBatch(s *Store, n int, fn func(i int, tx kv.Tx) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Batch(func(tx kv.Tx) error { return fn(i, tx) })
		}()
	}
	wg.Wait()
	return errs
}

func TestBatchSharesOneCommit(t *testing.T) {
	const n = 8
	s := openBatching(t, n)
	var mu sync.Mutex
	ids := map[int]int{}
	commits := 0
	errs := runBatch(s, n, func(i int, tx kv.Tx) error {
		mu.Lock()
		ids[tx.ID()]++
		mu.Unlock()
		tx.OnCommit(func() { mu.Lock(); commits++; mu.Unlock() })
		return tx.Bucket([]byte("b")).Put([]byte(fmt.Sprint(i)), []byte("v"))
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if len(ids) != 1 || commits != n {
		t.Errorf("transaction IDs %v, %d commit callbacks; want one shared ID and %d callbacks", ids, commits, n)
	}
}

func TestBatchFailureStaysWithItsCaller(t *testing.T) {
	const n = 6
	s := openBatching(t, n)
	boom := errors.New("boom")
	var mu sync.Mutex
	runs := map[int]int{}
	errs := runBatch(s, n, func(i int, tx kv.Tx) error {
		mu.Lock()
		runs[i]++
		mu.Unlock()
		if err := tx.Bucket([]byte("b")).Put([]byte(fmt.Sprint(i)), []byte("v")); err != nil {
			return err
		}
		if i == 3 {
			return boom
		}
		return nil
	})
	for i, err := range errs {
		if i == 3 && !errors.Is(err, boom) {
			t.Errorf("failing call got %v, want its own error", err)
		}
		if i != 3 && err != nil {
			t.Errorf("call %d got %v, want success", i, err)
		}
	}
	must(t, s.View(func(tx kv.Tx) error {
		for i := 0; i < n; i++ {
			if got := tx.Bucket([]byte("b")).Get([]byte(fmt.Sprint(i))); (got != nil) != (i != 3) {
				t.Errorf("key %d present=%v", i, got != nil)
			}
		}
		return nil
	}))
	if runs[3] < 2 {
		t.Errorf("the failing call ran %d times, want again alone", runs[3])
	}
}

func TestBatchIsFenced(t *testing.T) {
	s := openBatching(t, 3)
	s.Fencing(true)
	for i, err := range runBatch(s, 3, func(i int, tx kv.Tx) error {
		return tx.Bucket([]byte("b")).Put([]byte(fmt.Sprint(i)), []byte("v"))
	}) {
		if !errors.Is(err, kv.ErrFenced) {
			t.Errorf("call %d without the lease: %v, want ErrFenced", i, err)
		}
	}
}

// TestBatchDatabaseErrorStaysWithItsCaller: a call the database refuses
// (a check moved to another row) fails alone; the others commit.
func TestBatchDatabaseErrorStaysWithItsCaller(t *testing.T) {
	const n = 4
	s := openBatching(t, n)
	must(t, s.Update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("checks"))
		if err != nil {
			return err
		}
		return b.Put([]byte("chk"), []byte("row1"))
	}))
	errs := runBatch(s, n, func(i int, tx kv.Tx) error {
		if i == 1 {
			return tx.Bucket([]byte("checks")).Put([]byte("chk"), []byte("row2"))
		}
		return tx.Bucket([]byte("b")).Put([]byte(fmt.Sprint(i)), []byte("v"))
	})
	for i, err := range errs {
		if (err != nil) != (i == 1) {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if sqlState(errs[1]) != "23505" {
		t.Errorf("refused call got %v, want unique_violation", errs[1])
	}
}
