package kvtest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/batchd/batchd/internal/state/kv"
)

// testGetMany: GetMany answers each key as Get does, in the keys' order
// (a key asked twice answered twice), in a read transaction and in a
// write one, where the transaction's own puts and deletes show.
func testGetMany(t *testing.T, s kv.Store) {
	putAll(t, s, []byte("a"), []byte("1"), []byte("b"), []byte{}, []byte("c"), []byte("3"))
	keys := [][]byte{[]byte("c"), []byte("x"), []byte("a"), []byte("b"), []byte("c")}
	// read answers GetMany's and Get's view of the keys. A Batch's fn
	// may run more than once, so what it read is looked at only after.
	read := func(b kv.Bucket) (many, one string) {
		var m, o []string
		for i, v := range b.GetMany(keys) {
			m, o = append(m, show(v)), append(o, show(b.Get(keys[i])))
		}
		return fmt.Sprint(m), fmt.Sprint(o)
	}
	check := func(what, many, one, want string) {
		t.Helper()
		if many != want || one != want {
			t.Errorf("%s: GetMany %s, Get %s, want %s", what, many, one, want)
		}
	}
	var many, one string
	must(t, s.View(func(tx kv.Tx) error {
		many, one = read(tx.Bucket(bkt))
		if got := tx.Bucket(bkt).GetMany(nil); len(got) != 0 {
			return fmt.Errorf("GetMany of no keys: %q", got)
		}
		return nil
	}))
	check("view", many, one, "[3 absent 1 empty 3]")
	for name, write := range map[string]func(func(kv.Tx) error) error{"update": s.Update, "batch": s.Batch} {
		var beforeMany, beforeOne string
		err := write(func(tx kv.Tx) error {
			b := tx.Bucket(bkt)
			beforeMany, beforeOne = read(b)
			if err := b.Put([]byte("x"), []byte("new")); err != nil {
				return err
			}
			if err := b.Delete([]byte("a")); err != nil {
				return err
			}
			many, one = read(b)
			return errUndo
		})
		if !errors.Is(err, errUndo) {
			t.Fatalf("%s: %v, want the fn's error", name, err)
		}
		check(name+" before its writes", beforeMany, beforeOne, "[3 absent 1 empty 3]")
		check(name+" after its writes", many, one, "[3 new absent empty 3]")
	}
}

// errUndo rolls a transaction back.
var errUndo = errors.New("undo")

func show(v []byte) string {
	switch {
	case v == nil:
		return "absent"
	case len(v) == 0:
		return "empty"
	}
	return string(bytes.Clone(v))
}
