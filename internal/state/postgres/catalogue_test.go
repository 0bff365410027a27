package postgres

import (
	"context"
	"testing"

	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state/kv"
)

// The Store reads which buckets exist once, not once per transaction; a
// bucket it knew that the database lost (a failover that lost the
// bucket's creation, here a DELETE behind its back) fails the first write
// into it, after which it is read again and made anew: nothing is written
// into a bucket that is not there. A sequence is still read per
// transaction.
func TestBucketCatalogueReadOncePerProcess(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	s, admin := open(t, dsn), conn(t, dsn)
	must(t, s.Update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("b"))
		must(t, err)
		if _, err := b.NextSequence(); err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	}))
	if _, ok := s.buckets.Load("b"); !ok {
		t.Fatal("the committed bucket is not known to the Store")
	}
	if _, err := admin.Exec(context.Background(), "UPDATE kv_buckets SET seq = 41 WHERE name = 'b'"); err != nil {
		t.Fatal(err)
	}
	must(t, s.View(func(tx kv.Tx) error {
		b := tx.Bucket([]byte("b"))
		if b == nil || string(b.Get([]byte("k"))) != "v" || b.Sequence() != 41 {
			t.Errorf("a known bucket: %v, sequence %d", b, b.Sequence())
		}
		return nil
	}))

	if _, err := admin.Exec(context.Background(), "DELETE FROM kv_buckets WHERE name = 'b'"); err != nil {
		t.Fatal(err)
	}
	err := s.Update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("b"))
		must(t, err)
		return b.Put([]byte("k2"), []byte("v2"))
	})
	if err == nil {
		t.Fatal("a write into a bucket the database lost succeeded")
	}
	must(t, s.Update(func(tx kv.Tx) error {
		if tx.Bucket([]byte("b")) != nil {
			t.Error("the lost bucket is still taken to exist")
		}
		b, err := tx.CreateBucketIfNotExists([]byte("b"))
		must(t, err)
		return b.Put([]byte("k2"), []byte("v2"))
	}))
}
