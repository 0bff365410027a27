package durable

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// A directory syncs; a missing one is an error naming it.
func TestSyncDir(t *testing.T) {
	dir := t.TempDir()
	if err := SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "gone")
	if err := SyncDir(missing); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("a missing directory: %v", err)
	}
}
