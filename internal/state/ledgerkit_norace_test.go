//go:build !race

// The race detector's build also checks unsafe pointer conversions
// (-d=checkptr), and bbolt's conversions on a damaged page end the
// process there with a "fatal error: checkptr" that no code can recover.
// batchd's own binary is built without it, so this test runs without
// -race (make test runs it so, beside the -race suite).

package state

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

// TestDamagedFilesNeverPanic flips bytes all over a ledger's pages, and
// cuts it at many lengths: CheckFile and Open must answer every one with
// a fault or a refusal (or accept it, where the flip hit bytes nothing
// reads), never with a panic or a fault that ends the process.
func TestDamagedFilesNeverPanic(t *testing.T) {
	dir := t.TempDir()
	d, _ := ledgerWith(t, dir, 60)
	d.Close()
	good := filepath.Join(dir, FileName)
	fi, _ := os.Stat(good)
	ps, _ := rowsRoot(t, good)
	pages := int(fi.Size()) / ps
	var tries, faulted, refused int
	try := func(name string, damage func(p string)) {
		work := t.TempDir()
		p := filepath.Join(work, FileName)
		copyTo(t, good, p)
		damage(p)
		tries++
		if rep, err := CheckFile(p); err != nil {
			t.Errorf("%s: CheckFile: %v", name, err)
		} else if !rep.OK() {
			faulted++
		}
		db, err := Open(work, Options{NoSnapshots: true})
		if err != nil {
			refused++
		} else {
			// Accepted: every read must still end in an answer.
			db.Batches()
			db.OpenRows(func(*payment.Row) (bool, error) { return true, nil })
			db.TrackedRows(func(*payment.Row) (bool, error) { return true, nil })
			db.Close()
		}
	}
	for pg := 2; pg < pages; pg++ {
		for _, off := range []int{0, 3, 8, 10, 12, 16, 20, 24, 40, ps / 2, ps - 1} {
			at := int64(pg*ps + off)
			try(fmt.Sprintf("flip page %d +%d", pg, off), func(p string) { flip(t, p, at) })
		}
	}
	for _, cut := range []int64{1, 15, 4096, int64(ps) + 80, 2 * int64(ps), fi.Size() - int64(ps), fi.Size() - 1} {
		try(fmt.Sprintf("cut at %d", cut), func(p string) { os.Truncate(p, cut) })
	}
	t.Logf("%d damaged copies: %d failed the check, %d were refused by Open, none panicked", tries, faulted, refused)
}
