package bolt_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	boltkv "github.com/batchd/batchd/internal/state/bolt"
	"github.com/batchd/batchd/internal/state/kv"
	bbolt "go.etcd.io/bbolt"
)

// TestReleaseDropsMappedPages: after a read transaction has read the
// whole file, Release leaves almost none of the file's mapping resident
// (/proc/self/smaps), and the next read sees the same data.
func TestReleaseDropsMappedPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kv.db")
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := boltkv.New(db)
	defer s.Close()
	const n, size = 4000, 2000 // about 8 MB
	err = s.Update(func(tx kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("b"))
		if err != nil {
			return err
		}
		for i := range n {
			if err := b.Put(fmt.Appendf(nil, "k%05d", i), bytes.Repeat([]byte{byte(i)}, size)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var before, after int64
	err = s.View(func(tx kv.Tx) error {
		sum := 0
		if err := tx.Bucket([]byte("b")).ForEach(func(_, v []byte) error { sum += int(v[0]); return nil }); err != nil {
			return err
		}
		before = mappedRSS(t, path)
		tx.Release()
		after = mappedRSS(t, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if before < n*size/2/1024 || after > before/10 {
		t.Errorf("resident kB of the file's mapping: %d after reading it all, %d after Release", before, after)
	}
	err = s.View(func(tx kv.Tx) error {
		for i := range n {
			if v := tx.Bucket([]byte("b")).Get(fmt.Appendf(nil, "k%05d", i)); !bytes.Equal(v, bytes.Repeat([]byte{byte(i)}, size)) {
				return fmt.Errorf("key %d reads %d bytes after Release", i, len(v))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// mappedRSS is the resident kB of the mappings of path in this process.
func mappedRSS(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal("read the mappings of this process:", err) // Linux always has it
	}
	defer f.Close()
	var total int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = len(fields) >= 6 && fields[5] == path
			continue
		}
		if v, ok := strings.CutPrefix(line, "Rss:"); in && ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			total += kb
		}
	}
	return total
}
