package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state/kv"
)

// TestStreakOfAbsentFetches: a bucket's streak grows with each fetch
// that found its keys all absent, and ends at one that found a key.
func TestStreakOfAbsentFetches(t *testing.T) {
	var c valueCache
	ids, rows := []byte("ids"), []byte("rows")
	miss := []missed{{bucket: ids, k: []byte("a")}}
	for i := range guessAfter {
		if c.guessAbsent(miss) {
			t.Fatalf("guessed after %d absent fetches, want %d", i, guessAfter)
		}
		c.fetched([][]byte{ids, rows}, [][]byte{nil, []byte("v")})
	}
	if !c.guessAbsent(miss) {
		t.Fatalf("no guess after %d absent fetches", guessAfter)
	}
	if c.guessAbsent(append(miss, missed{bucket: rows, k: []byte("r")})) {
		t.Error("guessed a key of a bucket whose fetch found one present")
	}
	c.fetched([][]byte{ids, ids}, [][]byte{nil, []byte("v")})
	if c.guessAbsent(miss) {
		t.Error("still guessing after a fetch found a key present")
	}
}

// TestWrongGuessIsAConflict: once a bucket's misses have been fetched
// absent often enough, a batch takes them absent unread; when another
// instance has written the key meanwhile, the commit is refused and the
// call runs again, locked, and decides on the key as it is. The claim
// the call makes on an absent key is never written over the other's.
func TestWrongGuessIsAConflict(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	s, err := Open(context.Background(), dsn, Options{BatchDelay: time.Hour, BatchSize: 1, Projection: NoTables})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	other := open(t, dsn)
	ids := []byte("ids")
	must(t, s.Update(func(tx kv.Tx) error {
		_, err := tx.CreateBucketIfNotExists(ids)
		return err
	}))
	// claim puts "mine" at key unless it is there already, and says
	// what each run saw.
	claim := func(key string) []string {
		var seen []string
		must(t, s.Batch(func(tx kv.Tx) error {
			b := tx.Bucket(ids)
			v := b.Get([]byte(key))
			seen = append(seen, string(v))
			if v != nil {
				return nil
			}
			return b.Put([]byte(key), []byte("mine"))
		}))
		return seen
	}
	for i := range guessAfter {
		claim(fmt.Sprint("new", i))
	}
	if !s.cache.guessAbsent([]missed{{bucket: ids, k: []byte("taken")}}) {
		t.Fatalf("after %d claims of absent keys the store does not guess", guessAfter)
	}
	must(t, other.Update(func(tx kv.Tx) error { return tx.Bucket(ids).Put([]byte("taken"), []byte("theirs")) }))
	seen := claim("taken")
	if len(seen) != 2 || seen[0] != "" || seen[1] != "theirs" {
		t.Errorf("runs saw %q, want absent (the guess), then theirs", seen)
	}
	if s.cache.guessAbsent([]missed{{bucket: ids, k: []byte("x")}}) {
		t.Error("still guessing after a wrong guess")
	}
	must(t, other.View(func(tx kv.Tx) error {
		if got := string(tx.Bucket(ids).Get([]byte("taken"))); got != "theirs" {
			t.Errorf("taken = %q, want theirs", got)
		}
		return nil
	}))
}
