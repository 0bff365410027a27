package kvtest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/batchd/batchd/internal/state/kv"
)

// testRelease: the memory hint never changes what is read, in the
// transaction that gives it or in others reading and writing meanwhile,
// and is harmless in a write transaction.
func testRelease(t *testing.T, s kv.Store) {
	const n = 2000
	val := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 200+i%300) }
	var pairs [][]byte
	for i := range n {
		pairs = append(pairs, fmt.Appendf(nil, "k%05d", i), val(i))
	}
	putAll(t, s, pairs...)
	readAll := func(tx kv.Tx) error {
		c := tx.Bucket(bkt).Cursor()
		i := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if i < n && !bytes.Equal(v, val(i)) {
				return fmt.Errorf("key %s reads %d bytes, want %d", k, len(v), len(val(i)))
			}
			if i%500 == 499 {
				tx.Release()
			}
			i++
		}
		if i < n {
			return fmt.Errorf("walk saw %d keys, want at least %d", i, n)
		}
		return nil
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				if err := s.View(readAll); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // a writer grows the store meanwhile (bbolt may remap)
		defer wg.Done()
		for j := range 20 {
			err := s.Update(func(tx kv.Tx) error {
				tx.Release() // does nothing in a write transaction
				for i := range 50 {
					if err := tx.Bucket(bkt).Put(fmt.Appendf(nil, "z%02d%03d", j, i), bytes.Repeat([]byte{1}, 4096)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	must(t, s.View(readAll))
}
