package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// clock is a settable clock for the ledger's history steps.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

var pruneEpoch = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func openClock(t *testing.T, dir string, chunk int) (*DB, *clock) {
	t.Helper()
	c := &clock{t: pruneEpoch}
	d, err := Open(dir, Options{LoadChunk: chunk, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, c
}

// settle drives every row of a batch to an end: the first reject rows
// are refused by the API, the others submitted and then observed with
// status (a final one unless told otherwise). It stamps the results
// report as delivered when report is set. It returns the check ids.
func settle(t *testing.T, d *DB, b payment.Batch, reject int, status payment.Status, report bool) []string {
	t.Helper()
	var keys []payment.RowKey
	if err := d.Rows(b.ID, func(r *payment.Row) (bool, error) { keys = append(keys, r.Key); return true, nil }); err != nil {
		t.Fatal(err)
	}
	// Rows go through in parallel, as submit's workers send them, so that
	// they share commits.
	const workers = 16
	ids := make([]string, len(keys))
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			errs <- func() error {
				for i := w; i < len(keys); i += workers {
					k := keys[i]
					if _, err := d.Send(k); err != nil {
						return err
					}
					if i < reject {
						if _, err := d.Reject(k, "invalid routing"); err != nil {
							return err
						}
						continue
					}
					ids[i] = fmt.Sprintf("chk-%d-%d", k.Batch, k.Line)
					if _, err := d.Created(k, payment.CheckResult{CheckID: ids[i], Status: payment.StatusInProcess, Created: d.now()}); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	ids = ids[reject:]
	var obs []payment.Observation
	for _, k := range keys[reject:] {
		obs = append(obs, payment.Observation{Key: k, Status: status})
	}
	if _, err := d.ObserveStatuses(obs, d.now()); err != nil {
		t.Fatal(err)
	}
	if report {
		if err := d.ResultsReported(b.ID); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// archiveLog is an Archiver that keeps what it was given.
type archiveLog struct {
	batches []uint64
	rows    map[uint64][]*payment.Row
}

func (a *archiveLog) archive(b *payment.Batch, rows func(func(*payment.Row) error) error) error {
	if a.rows == nil {
		a.rows = map[uint64][]*payment.Row{}
	}
	var got []*payment.Row
	if err := rows(func(r *payment.Row) error { got = append(got, r); return nil }); err != nil {
		return err
	}
	a.batches = append(a.batches, b.ID)
	a.rows[b.ID] = got
	return nil
}

// TestPruneCrashSafe: a prune killed inside its transaction, after the
// archive is written, commits nothing of it, and the next prune writes
// the archive again and removes the batch. (A failing archiver is the
// suite's: statetest's Retention group.)
func TestPruneCrashSafe(t *testing.T) {
	d, clk := openClock(t, t.TempDir(), 3)
	b := load(t, d, "a.csv", 7)
	ids := settle(t, d, b, 1, payment.StatusDeposited, true)
	clk.set(pruneEpoch.Add(100 * 24 * time.Hour))
	before := clk.now()
	snapshot := dump(t, d)

	dir := t.TempDir()
	written := 0
	writeArchive := func(b *payment.Batch, rows func(func(*payment.Row) error) error) error {
		var lines []string
		if err := rows(func(r *payment.Row) error { lines = append(lines, r.CheckID); return nil }); err != nil {
			return err
		}
		written++
		return os.WriteFile(filepath.Join(dir, fmt.Sprintf("batch-%d.csv", b.ID)), []byte(strings.Join(lines, "\n")), 0o600)
	}
	crash := errors.New("killed")
	testHookPruneTx = func(uint64) error { return crash }
	_, err := d.Prune(context.Background(), before, writeArchive)
	testHookPruneTx = nil
	if !errors.Is(err, crash) {
		t.Fatalf("prune: %v, want the transaction's error", err)
	}
	if got := dump(t, d); !reflect.DeepEqual(got, snapshot) {
		t.Fatal("a rolled-back prune changed the ledger")
	}
	checkInvariants(t, d)
	// The next prune archives again and removes the batch.
	sum, err := d.Prune(context.Background(), before, writeArchive)
	if err != nil || len(sum.Pruned) != 1 || written != 2 {
		t.Fatalf("prune after the crash: %+v, %v, %d archives written", sum, err, written)
	}
	raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("batch-%d.csv", b.ID)))
	if err != nil || strings.Count(string(raw), "chk-") != len(ids) {
		t.Errorf("archive %q, %v", raw, err)
	}
	checkInvariants(t, d)
}

func TestCompact(t *testing.T) {
	dir := t.TempDir()
	d, clk := openClock(t, dir, 0)
	var batches []payment.Batch
	for i := range 4 {
		b := load(t, d, fmt.Sprintf("f%d.csv", i), 600)
		batches = append(batches, b)
	}
	for _, b := range batches[:3] {
		settle(t, d, b, 10, payment.StatusDeposited, true)
	}
	settle(t, d, batches[3], 0, payment.StatusInProcess, true) // stays
	clk.set(pruneEpoch.Add(100 * 24 * time.Hour))
	var a archiveLog
	sum, err := d.Prune(context.Background(), clk.now(), a.archive)
	if err != nil || len(sum.Pruned) != 3 {
		t.Fatalf("prune: %+v, %v", sum, err)
	}
	kept := dump(t, d)
	seq := sequences(t, d)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	// Refused while another process has the ledger.
	other, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compact(dir, 100*time.Millisecond); !errors.Is(err, ErrLocked) {
		t.Fatalf("compact of a locked ledger: %v, want ErrLocked", err)
	}
	other.Close()

	// A partial copy left by an interrupted compaction is replaced.
	if err := os.WriteFile(filepath.Join(dir, FileName+CompactSuffix), []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	stale, err := os.Open(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Close()
	res, err := Compact(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compacted %d -> %d bytes", res.Before, res.After)
	if res.After*2 > res.Before {
		t.Errorf("compaction left %d of %d bytes, want less than half", res.After, res.Before)
	}
	if st, err := os.Stat(filepath.Join(dir, FileName)); err != nil || st.Size() != res.After || st.Mode().Perm() != 0o600 {
		t.Errorf("compacted file: %v, %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName+CompactSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary copy is left: %v", err)
	}
	// The file replaced is spoiled for anyone who opened it just before.
	head := make([]byte, 64)
	if _, err := stale.ReadAt(head, 0); err != nil || strings.Trim(string(head), "\x00") != "" {
		t.Errorf("the replaced file's header still reads %x (%v)", head, err)
	}

	d2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if got := dump(t, d2); !reflect.DeepEqual(got, kept) {
		t.Error("the compacted ledger differs from the ledger before compaction")
	}
	if got := sequences(t, d2); !reflect.DeepEqual(got, seq) {
		t.Errorf("sequences %v after compaction, want %v", got, seq)
	}
	checkInvariants(t, d2)
	// And it works on: the kept batch moves on, a new file loads.
	if _, err := d2.ObserveStatus(payment.RowKey{Batch: batches[3].ID, Line: 2}, payment.StatusDeposited, time.Now()); err != nil {
		t.Fatal(err)
	}
	if next := load(t, d2, "next.csv", 3); next.ID != batches[3].ID+1 {
		t.Errorf("new batch id %d, want %d", next.ID, batches[3].ID+1)
	}
	checkInvariants(t, d2)
}

// dump is every key and value of the data buckets.
func dump(t *testing.T, d *DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := d.view(func(tx kv.Tx) error {
		for _, name := range [][]byte{bucketFiles, bucketBatches, bucketRows, bucketOpen, bucketTrack, bucketChecks, bucketNumbers} {
			if err := tx.Bucket(name).ForEach(func(k, v []byte) error {
				out[string(name)+"/"+string(k)] = string(v)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sequences(t *testing.T, d *DB) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	if err := d.view(func(tx kv.Tx) error {
		return tx.ForEachBucket(func(name []byte) error { out[string(name)] = tx.Bucket(name).Sequence(); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkInvariants checks that the indexes and counts agree with the rows:
// open holds exactly the rows without a check, with their state; track
// exactly the submitted rows whose check is not final; checks maps every
// check id to the row that has it and nothing else; every row belongs to
// a batch whose counts match its rows.
func checkInvariants(t *testing.T, d *DB) {
	t.Helper()
	var problems []string
	bad := func(f string, args ...any) { problems = append(problems, fmt.Sprintf(f, args...)) }
	err := d.view(func(tx kv.Tx) error {
		open, track, checks := tx.Bucket(bucketOpen), tx.Bucket(bucketTrack), tx.Bucket(bucketChecks)
		counts := map[uint64]map[payment.RowState]int{}
		err := tx.Bucket(bucketRows).ForEach(func(k, v []byte) error {
			r, err := paymentRows.decode(nil, keyFrom(k), v)
			if err != nil {
				return err
			}
			if counts[r.Key.Batch] == nil {
				counts[r.Key.Batch] = map[payment.RowState]int{}
			}
			counts[r.Key.Batch][r.State]++
			if got := open.Get(k); r.State.Open() != (got != nil) || (got != nil && string(got) != string(r.State)) {
				bad("%s (%s): open index %q", r.Key, r.State, got)
			}
			if tracked := track.Get(k) != nil; tracked != (r.State == payment.Submitted && !r.CheckStatus.Final()) {
				bad("%s (%s, %s): tracked %v", r.Key, r.State, r.CheckStatus, tracked)
			}
			if r.CheckID != "" {
				if owner := checks.Get([]byte(r.CheckID)); owner == nil || keyFrom(owner) != r.Key {
					bad("%s: check %s indexed to %v", r.Key, r.CheckID, owner)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, b := range []kv.Bucket{open, track} {
			if err := b.ForEach(func(k, _ []byte) error {
				if tx.Bucket(bucketRows).Get(k) == nil {
					bad("index entry %s without a row", keyFrom(k))
				}
				return nil
			}); err != nil {
				return err
			}
		}
		if err := checks.ForEach(func(id, k []byte) error {
			raw := tx.Bucket(bucketRows).Get(k)
			if raw == nil {
				bad("check %s indexed to missing row %s", id, keyFrom(k))
				return nil
			}
			r, err := paymentRows.decode(nil, keyFrom(k), raw)
			if err != nil {
				return err
			}
			if r.CheckID != string(id) {
				bad("check %s indexed to %s, which has check %q", id, r.Key, r.CheckID)
			}
			return nil
		}); err != nil {
			return err
		}
		var ids []uint64
		for id := range counts {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			b, err := getBatch(tx, id)
			if err != nil {
				bad("rows of batch %d, which does not exist", id)
				continue
			}
			if !reflect.DeepEqual(b.Counts, counts[id]) {
				bad("batch %d counts %v, rows %v", id, b.Counts, counts[id])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatalf("ledger invariants broken:\n%s", strings.Join(problems, "\n"))
	}
}
