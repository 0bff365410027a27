// Package kvtest is the conformance test of kv.Store: every backend of the
// ledger (internal/state/bolt, internal/state/postgres) runs Run, so the
// rules above kv can rely on one behaviour whatever holds the bytes.
package kvtest

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/batchd/batchd/internal/state/kv"
)

// Run runs the whole contract against stores from open, which must return
// a fresh, empty store for each call (closed by Run).
func Run(t *testing.T, open func(t *testing.T) kv.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s kv.Store)
	}{
		{"KeysSortBytewise", testOrder},
		{"WalkCrossesPages", testManyKeys},
		{"EmptyValueIsNotAbsent", testEmptyValues},
		{"TxSeesOwnWrites", testOwnWrites},
		{"RollbackOnError", testRollback},
		{"OnCommitOnlyAfterCommit", testOnCommit},
		{"CursorSeek", testSeek},
		{"CursorDeleteDuringWalk", testCursorDelete},
		{"ForEachMayQuery", testForEachQueries},
		{"Sequences", testSequences},
		{"Buckets", testBuckets},
		{"ReadOnlyView", testReadOnly},
		{"KeyN", testKeyN},
		{"WritesSerialised", testSerialised},
		{"Batch", testBatch},
		{"UpdateUnfenced", testUnfenced},
		{"ReleaseKeepsReads", testRelease},
		{"DeclarePrune", testDeclarePrune},
		{"GetMany", testGetMany},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			defer func() {
				if err := s.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
			}()
			tc.fn(t, s)
		})
	}
}

var bkt = []byte("b")

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// putAll writes the pairs into bucket bkt (creating it) in one Update.
func putAll(t *testing.T, s kv.Store, pairs ...[]byte) {
	t.Helper()
	must(t, s.Update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bkt)
		if err != nil {
			return err
		}
		for i := 0; i+1 < len(pairs); i += 2 {
			if err := b.Put(pairs[i], pairs[i+1]); err != nil {
				return err
			}
		}
		return nil
	}))
}

// keys lists bucket bkt's keys by a cursor walk and by ForEach, and fails
// the test when the two differ.
func keys(t *testing.T, s kv.Store) [][]byte {
	t.Helper()
	var byCursor, byForEach [][]byte
	must(t, s.View(func(tx kv.Tx) error {
		b := tx.Bucket(bkt)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			byCursor = append(byCursor, bytes.Clone(k))
		}
		return b.ForEach(func(k, _ []byte) error {
			byForEach = append(byForEach, bytes.Clone(k))
			return nil
		})
	}))
	if fmt.Sprint(byCursor) != fmt.Sprint(byForEach) {
		t.Fatalf("cursor walk %x differs from ForEach %x", byCursor, byForEach)
	}
	return byCursor
}

func get(t *testing.T, s kv.Store, key []byte) []byte {
	t.Helper()
	var v []byte
	must(t, s.View(func(tx kv.Tx) error {
		if b := tx.Bucket(bkt); b != nil {
			if got := b.Get(key); got != nil {
				v = append([]byte{}, got...)
			}
		}
		return nil
	}))
	return v
}

func testOrder(t *testing.T, s kv.Store) {
	want := [][]byte{{0x00}, {0x00, 0x00}, {0x00, 0x01}, {0x01}, []byte("A"), []byte("a"), []byte("ab"),
		{0x7f}, {0x80}, {0xc3, 0xa9}, {0xfe, 0xff}, {0xff}, {0xff, 0x00}, {0xff, 0xff}}
	shuffled := append([][]byte(nil), want...)
	sort.Slice(shuffled, func(i, j int) bool { return bytes.Compare(shuffled[i], shuffled[j]) > 0 })
	var pairs [][]byte
	for _, k := range shuffled {
		pairs = append(pairs, k, k)
	}
	putAll(t, s, pairs...)
	if got := keys(t, s); fmt.Sprintf("%x", got) != fmt.Sprintf("%x", want) {
		t.Errorf("walk order\n got %x\nwant %x", got, want)
	}
	for _, k := range want {
		if v := get(t, s, k); !bytes.Equal(v, k) {
			t.Errorf("Get(%x) = %x", k, v)
		}
	}
}

// testManyKeys walks more keys than a paged store reads at once.
func testManyKeys(t *testing.T, s kv.Store) {
	const n = 1000
	var pairs [][]byte
	for i := n - 1; i >= 0; i-- {
		pairs = append(pairs, []byte(fmt.Sprintf("k%05d", i)), []byte(fmt.Sprint(i)))
	}
	putAll(t, s, pairs...)
	got := keys(t, s)
	if len(got) != n {
		t.Fatalf("walked %d keys, want %d", len(got), n)
	}
	for i, k := range got {
		if want := fmt.Sprintf("k%05d", i); string(k) != want {
			t.Fatalf("key %d = %s, want %s", i, k, want)
		}
	}
}

func testEmptyValues(t *testing.T, s kv.Store) {
	putAll(t, s, []byte("empty"), []byte{})
	must(t, s.View(func(tx kv.Tx) error {
		b := tx.Bucket(bkt)
		if v := b.Get([]byte("empty")); v == nil || len(v) != 0 {
			t.Errorf("Get(empty) = %#v, want a non-nil empty slice", v)
		}
		if v := b.Get([]byte("absent")); v != nil {
			t.Errorf("Get(absent) = %#v, want nil", v)
		}
		if k, v := b.Cursor().First(); string(k) != "empty" || v == nil || len(v) != 0 {
			t.Errorf("cursor First = %q, %#v, want empty, a non-nil empty slice", k, v)
		}
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				t.Errorf("ForEach gave %q a nil value, want a non-nil empty slice", k)
			}
			return nil
		})
	}))
}

func testOwnWrites(t *testing.T, s kv.Store) {
	putAll(t, s, []byte("old"), []byte("1"))
	must(t, s.Update(func(tx kv.Tx) error {
		b := tx.Bucket(bkt)
		must(t, b.Put([]byte("new"), []byte("2")))
		must(t, b.Put([]byte("old"), []byte("3")))
		if v := b.Get([]byte("new")); string(v) != "2" {
			t.Errorf("own put reads %q, want 2", v)
		}
		if v := b.Get([]byte("old")); string(v) != "3" {
			t.Errorf("own overwrite reads %q, want 3", v)
		}
		must(t, b.Delete([]byte("old")))
		if v := b.Get([]byte("old")); v != nil {
			t.Errorf("own delete reads %q, want absent", v)
		}
		if k, _ := b.Cursor().First(); string(k) != "new" {
			t.Errorf("cursor after own writes starts at %q, want new", k)
		}
		return nil
	}))
	if v := get(t, s, []byte("new")); string(v) != "2" {
		t.Errorf("committed new = %q", v)
	}
}

func testRollback(t *testing.T, s kv.Store) {
	putAll(t, s, []byte("k"), []byte("before"))
	boom := errors.New("boom")
	err := s.Update(func(tx kv.Tx) error {
		must(t, tx.Bucket(bkt).Put([]byte("k"), []byte("after")))
		_, err := tx.CreateBucketIfNotExists([]byte("other"))
		must(t, err)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update returned %v, want fn's error", err)
	}
	if v := get(t, s, []byte("k")); string(v) != "before" {
		t.Errorf("after rollback k = %q, want before", v)
	}
	must(t, s.View(func(tx kv.Tx) error {
		if tx.Bucket([]byte("other")) != nil {
			t.Error("bucket created in a rolled-back tx exists")
		}
		return nil
	}))
}
