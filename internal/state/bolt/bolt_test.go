package bolt_test

import (
	"path/filepath"
	"testing"

	boltkv "github.com/batchd/batchd/internal/state/bolt"
	"github.com/batchd/batchd/internal/state/kv"
	"github.com/batchd/batchd/internal/state/kv/kvtest"
	bbolt "go.etcd.io/bbolt"
)

// TestContract runs the storage contract's suite on the bbolt adapter,
// the same suite internal/state/postgres runs on its store.
func TestContract(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) kv.Store {
		db, err := bbolt.Open(filepath.Join(t.TempDir(), "kv.db"), 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		return boltkv.New(db) // Run closes it
	})
}
