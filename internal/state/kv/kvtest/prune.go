package kvtest

import (
	"testing"

	"github.com/batchd/batchd/internal/state/kv"
)

// testDeclarePrune: a write transaction that declares itself a prune may
// remove keys of the owner buckets (checks, src_ids) on every store, and
// a read-only one cannot declare it. (That a store guarding ownership
// refuses the removal without the declaration is that store's own test.)
func testDeclarePrune(t *testing.T, s kv.Store) {
	owners := [][]byte{[]byte("checks"), []byte("src_ids")}
	must(t, s.Update(func(tx kv.Tx) error {
		for _, name := range owners {
			b, err := tx.CreateBucketIfNotExists(name)
			must(t, err)
			must(t, b.Put([]byte("id1"), []byte("row1")))
		}
		return nil
	}))
	must(t, s.Update(func(tx kv.Tx) error {
		must(t, tx.DeclarePrune())
		for _, name := range owners {
			must(t, tx.Bucket(name).Delete([]byte("id1")))
		}
		return nil
	}))
	must(t, s.View(func(tx kv.Tx) error {
		for _, name := range owners {
			if v := tx.Bucket(name).Get([]byte("id1")); v != nil {
				t.Errorf("%s: key deleted by a prune still there: %q", name, v)
			}
		}
		if tx.DeclarePrune() == nil {
			t.Error("DeclarePrune in a read-only transaction succeeded")
		}
		return nil
	}))
}
