package kvtest

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/batchd/batchd/internal/state/kv"
)

func testOnCommit(t *testing.T, s kv.Store) {
	var ran, sawCommit bool
	must(t, s.Update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bkt)
		must(t, err)
		must(t, b.Put([]byte("k"), []byte("v")))
		tx.OnCommit(func() {
			ran = true
			// The commit is visible to a new transaction when fn runs.
			sawCommit = get(t, s, []byte("k")) != nil
		})
		if ran {
			t.Error("OnCommit ran before the commit")
		}
		return nil
	}))
	if !ran || !sawCommit {
		t.Errorf("OnCommit ran=%v saw the commit=%v, want both", ran, sawCommit)
	}
	ran = false
	_ = s.Update(func(tx kv.Tx) error {
		tx.OnCommit(func() { ran = true })
		return errors.New("roll back")
	})
	if ran {
		t.Error("OnCommit ran after a rollback")
	}
}

func testSeek(t *testing.T, s kv.Store) {
	putAll(t, s, []byte("b"), []byte("1"), []byte("d"), []byte("2"), []byte("f"), []byte("3"))
	must(t, s.View(func(tx kv.Tx) error {
		c := tx.Bucket(bkt).Cursor()
		for _, tc := range []struct{ seek, want string }{{"", "b"}, {"a", "b"}, {"b", "b"}, {"c", "d"}, {"f", "f"}, {"g", ""}} {
			if k, _ := c.Seek([]byte(tc.seek)); string(k) != tc.want {
				t.Errorf("Seek(%q) = %q, want %q", tc.seek, k, tc.want)
			}
		}
		k, v := c.Seek([]byte("c"))
		if string(k) != "d" || string(v) != "2" {
			t.Errorf("Seek(c) = %q=%q", k, v)
		}
		if k, _ := c.Next(); string(k) != "f" {
			t.Errorf("Next after d = %q, want f", k)
		}
		if k, _ := c.Next(); k != nil {
			t.Errorf("Next at the end = %q, want nil", k)
		}
		if k, _ := c.Next(); k != nil {
			t.Errorf("Next past the end = %q, want nil", k)
		}
		if k, _ := c.First(); string(k) != "b" {
			t.Errorf("First after the end = %q, want b", k)
		}
		return nil
	}))
	// An empty bucket.
	must(t, s.Update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("empty"))
		must(t, err)
		if k, _ := b.Cursor().First(); k != nil {
			t.Errorf("First of an empty bucket = %q", k)
		}
		if k, _ := b.Cursor().Seek([]byte("a")); k != nil {
			t.Errorf("Seek in an empty bucket = %q", k)
		}
		return nil
	}))
}

// testCursorDelete deletes every other key mid-walk, over more keys than a
// page, and checks the walk still visits every key once.
func testCursorDelete(t *testing.T, s kv.Store) {
	const n = 700
	var pairs [][]byte
	for i := 0; i < n; i++ {
		pairs = append(pairs, []byte(fmt.Sprintf("%04d", i)), []byte{byte(i)})
	}
	putAll(t, s, pairs...)
	must(t, s.Update(func(tx kv.Tx) error {
		c := tx.Bucket(bkt).Cursor()
		i := 0
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if want := fmt.Sprintf("%04d", i); string(k) != want {
				t.Fatalf("walk visited %s, want %s", k, want)
			}
			if i%2 == 0 {
				must(t, c.Delete())
			}
			i++
		}
		if i != n {
			t.Errorf("walk visited %d keys, want %d", i, n)
		}
		return nil
	}))
	got := keys(t, s)
	if len(got) != n/2 || string(got[0]) != "0001" || string(got[len(got)-1]) != fmt.Sprintf("%04d", n-1) {
		t.Errorf("after deleting the even keys: %d keys, %s..%s", len(got), got[0], got[len(got)-1])
	}
	// Delete everything through one walk.
	must(t, s.Update(func(tx kv.Tx) error {
		c := tx.Bucket(bkt).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			must(t, c.Delete())
		}
		return nil
	}))
	if got := keys(t, s); len(got) != 0 {
		t.Errorf("%d keys left after deleting all", len(got))
	}
}

func testForEachQueries(t *testing.T, s kv.Store) {
	putAll(t, s, []byte("a"), []byte("x"), []byte("b"), []byte("y"))
	must(t, s.Update(func(tx kv.Tx) error {
		o, err := tx.CreateBucketIfNotExists([]byte("other"))
		must(t, err)
		must(t, o.Put([]byte("x"), []byte("1")))
		must(t, o.Put([]byte("y"), []byte("2")))
		var got []string
		err = tx.Bucket(bkt).ForEach(func(k, v []byte) error {
			got = append(got, string(k)+"="+string(o.Get(v)))
			return o.Put(append([]byte("seen-"), k...), v) // another bucket
		})
		if fmt.Sprint(got) != "[a=1 b=2]" {
			t.Errorf("ForEach with reads of another bucket: %v", got)
		}
		return err
	}))
}

func testSequences(t *testing.T, s kv.Store) {
	must(t, s.Update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bkt)
		must(t, err)
		if b.Sequence() != 0 {
			t.Errorf("new bucket's sequence = %d", b.Sequence())
		}
		for want := uint64(1); want <= 3; want++ {
			if got, err := b.NextSequence(); err != nil || got != want {
				t.Errorf("NextSequence = %d, %v; want %d", got, err, want)
			}
		}
		if b.Sequence() != 3 {
			t.Errorf("Sequence = %d, want 3", b.Sequence())
		}
		return nil
	}))
	_ = s.Update(func(tx kv.Tx) error {
		_, err := tx.Bucket(bkt).NextSequence()
		must(t, err)
		return errors.New("roll back")
	})
	must(t, s.Update(func(tx kv.Tx) error {
		b := tx.Bucket(bkt)
		if b.Sequence() != 3 {
			t.Errorf("sequence after a rolled-back raise = %d, want 3", b.Sequence())
		}
		must(t, b.SetSequence(1<<40))
		if got, _ := b.NextSequence(); got != 1<<40+1 {
			t.Errorf("NextSequence after SetSequence(2^40) = %d", got)
		}
		return nil
	}))
	must(t, s.View(func(tx kv.Tx) error {
		if got := tx.Bucket(bkt).Sequence(); got != 1<<40+1 {
			t.Errorf("committed sequence = %d", got)
		}
		return nil
	}))
}

func testBuckets(t *testing.T, s kv.Store) {
	names := []string{"b", "a", "hook_events", "checks", "z"}
	must(t, s.Update(func(tx kv.Tx) error {
		if tx.Bucket([]byte("a")) != nil {
			t.Error("absent bucket is not nil")
		}
		for _, n := range names {
			b, err := tx.CreateBucketIfNotExists([]byte(n))
			must(t, err)
			must(t, b.Put([]byte("k"), []byte(n)))
		}
		b, err := tx.CreateBucketIfNotExists([]byte("a")) // again: same bucket
		must(t, err)
		if v := b.Get([]byte("k")); string(v) != "a" {
			t.Errorf("CreateBucketIfNotExists of an existing bucket lost its key: %q", v)
		}
		if tx.Bucket([]byte("a")) == nil {
			t.Error("created bucket reads as nil")
		}
		return nil
	}))
	list := func() string {
		var got []string
		must(t, s.View(func(tx kv.Tx) error {
			return tx.ForEachBucket(func(n []byte) error {
				got = append(got, string(n))
				return nil
			})
		}))
		return fmt.Sprint(got)
	}
	if got := list(); got != "[a b checks hook_events z]" {
		t.Errorf("ForEachBucket = %s", got)
	}
	must(t, s.Update(func(tx kv.Tx) error {
		must(t, tx.Bucket([]byte("z")).SetSequence(9))
		must(t, tx.DeleteBucket([]byte("z")))
		if tx.Bucket([]byte("z")) != nil {
			t.Error("deleted bucket still there in its tx")
		}
		if tx.DeleteBucket([]byte("never")) == nil {
			t.Error("deleting an absent bucket succeeded")
		}
		return nil
	}))
	if got := list(); got != "[a b checks hook_events]" {
		t.Errorf("after delete, ForEachBucket = %s", got)
	}
	must(t, s.Update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("z"))
		must(t, err)
		if b.Get([]byte("k")) != nil || b.Sequence() != 0 || b.KeyN() != 0 {
			t.Error("a recreated bucket kept the deleted one's keys or sequence")
		}
		return nil
	}))
}

func testReadOnly(t *testing.T, s kv.Store) {
	putAll(t, s, []byte("k"), []byte("v"))
	must(t, s.View(func(tx kv.Tx) error {
		if tx.Writable() {
			t.Error("View's tx is writable")
		}
		b := tx.Bucket(bkt)
		if b.Put([]byte("k"), []byte("w")) == nil {
			t.Error("Put in a View succeeded")
		}
		if _, err := tx.CreateBucketIfNotExists([]byte("new")); err == nil {
			t.Error("CreateBucketIfNotExists in a View succeeded")
		}
		if v := b.Get([]byte("k")); string(v) != "v" {
			t.Errorf("Get after refused writes = %q", v)
		}
		return nil
	}))
	must(t, s.Update(func(tx kv.Tx) error {
		if !tx.Writable() {
			t.Error("Update's tx is not writable")
		}
		return nil
	}))
}

func testKeyN(t *testing.T, s kv.Store) {
	putAll(t, s, []byte("a"), []byte{}, []byte("b"), []byte("2"), []byte("c"), []byte("3"))
	must(t, s.Update(func(tx kv.Tx) error {
		b := tx.Bucket(bkt)
		if n := b.KeyN(); n != 3 {
			t.Errorf("KeyN = %d, want 3", n)
		}
		must(t, b.Delete([]byte("a")))
		must(t, b.Delete([]byte("absent")))
		return nil
	}))
	must(t, s.View(func(tx kv.Tx) error {
		if n := tx.Bucket(bkt).KeyN(); n != 2 {
			t.Errorf("KeyN after a delete = %d, want 2", n)
		}
		return nil
	}))
}

// increment adds one to key "n" of bkt by read, decide, write.
func increment(tx kv.Tx) error {
	b, err := tx.CreateBucketIfNotExists(bkt)
	if err != nil {
		return err
	}
	n := 0
	if v := b.Get([]byte("n")); v != nil {
		if n, err = strconv.Atoi(string(v)); err != nil {
			return err
		}
	}
	return b.Put([]byte("n"), []byte(strconv.Itoa(n+1)))
}

// Stores is the same ledger opened more than once (two processes, say);
// IncrementFrom checks that write transactions through them never
// interleave: goroutines each incrementing one key per's times end at
// the sum. Backends run it on their own openers.
func IncrementFrom(t *testing.T, stores []kv.Store, per int, update func(kv.Store, func(kv.Tx) error) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(stores))
	for _, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if err := update(s, increment); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := strconv.Itoa(per * len(stores))
	if got := get(t, stores[0], []byte("n")); string(got) != want {
		t.Errorf("after %d serialised increments n = %s", per*len(stores), got)
	}
}

func testSerialised(t *testing.T, s kv.Store) {
	IncrementFrom(t, []kv.Store{s, s, s, s}, 50, kv.Store.Update)
}

func testBatch(t *testing.T, s kv.Store) {
	IncrementFrom(t, []kv.Store{s, s, s, s}, 25, kv.Store.Batch)
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Batch(func(tx kv.Tx) error {
				return tx.Bucket(bkt).Put([]byte(fmt.Sprint("k", i)), []byte{byte(i)})
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i := 0; i < 10; i++ {
		if v := get(t, s, []byte(fmt.Sprint("k", i))); !bytes.Equal(v, []byte{byte(i)}) {
			t.Errorf("batch write %d reads %x", i, v)
		}
	}
}

func testUnfenced(t *testing.T, s kv.Store) {
	IncrementFrom(t, []kv.Store{s, s}, 10, kv.Store.UpdateUnfenced)
	var first, second int
	must(t, s.Update(func(tx kv.Tx) error { first = tx.ID(); return nil }))
	must(t, s.Update(func(tx kv.Tx) error { second = tx.ID(); return nil }))
	if first == second {
		t.Errorf("two write transactions share ID %d", first)
	}
}
