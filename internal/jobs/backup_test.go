package jobs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/reconcile"
	"github.com/batchd/batchd/internal/state"
)

// TestScheduledBackup: each run writes a checked snapshot into
// backup.dir, keeps the newest backup.keep there (and nothing else is
// touched), and uploads it to sftp.backups through the outbox.
func TestScheduledBackup(t *testing.T) {
	cy := newCycle(t)
	env := cy.env
	os.MkdirAll(filepath.Join(cy.sshd.Root, "backups"), 0o755)
	env.Cfg.Backup.Keep, env.Cfg.Backup.Upload = 2, true
	env.Cfg.SFTP.Backups = cy.sshd.Path("backups")
	loadPending(t, env.DB, 5)
	dir := env.Cfg.BackupDir()
	os.MkdirAll(dir, 0o700)
	other := filepath.Join(dir, "notes.txt") // not a snapshot: never removed
	os.WriteFile(other, []byte("x"), 0o600)

	start := time.Date(2026, 11, 22, 5, 30, 0, 0, time.UTC)
	rec := fakeRecorder{}
	var names []string
	for i := range 4 {
		at := start.Add(time.Duration(i) * 24 * time.Hour)
		env.now = func() time.Time { return at }
		sum, err := Scheduled{Env: env, Errors: rec}.Backup(context.Background())
		if err != nil {
			t.Fatalf("backup %d: %v", i, err)
		}
		names = append(names, state.BackupName(at))
		if !strings.Contains(sum, names[i]) || !strings.Contains(sum, "5 rows, checked OK") || !strings.Contains(sum, "uploaded to") {
			t.Fatalf("summary %q", sum)
		}
	}
	local, _ := filepath.Glob(filepath.Join(dir, "*"))
	for i := range local {
		local[i] = filepath.Base(local[i])
	}
	if want := []string{names[2], names[3], "notes.txt"}; !slices.Equal(local, want) {
		t.Fatalf("backup.dir holds %v, want %v", local, want)
	}
	for _, n := range names { // batchd never deletes anything on the server
		rep, err := state.CheckFile(filepath.Join(cy.sshd.Root, "backups", n))
		if err != nil || !rep.OK() || rep.SnapshotAt.IsZero() || rep.Rows != 5 {
			t.Fatalf("uploaded %s: %+v %v", n, rep, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, names[3])); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("local snapshot: %v %v", fi, err)
	}
}

func loadPending(t *testing.T, db payment.Ledger, n int) {
	t.Helper()
	l, err := db.BeginBatch(payment.FileMeta{Name: "p.csv", SHA256: "sha-p"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := l.Add(i+2, payment.Payment{Amount: money.Cents(100 + i), Memo: "m", Name: "n", Email: "a@b.c",
			BankRouting: "999900001", BankAccount: "1111000016"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Commit(n, 0); err != nil {
		t.Fatal(err)
	}
}

// TestCoversRestore: the restored mark is cleared only by a reconcile
// whose window runs from the snapshot's date to the restore's.
func TestCoversRestore(t *testing.T) {
	m := &state.RestoreMark{SnapshotAt: time.Date(2026, 11, 20, 5, 30, 0, 0, time.UTC), RestoredAt: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	d := func(s string) reconcile.Date { v, _ := reconcile.ParseDate(s); return v }
	for _, c := range []struct {
		from, to string
		want     bool
	}{
		{"2026-11-19", "2026-11-22", true},
		{"2026-11-20", "2026-11-23", true},
		{"2026-11-21", "2026-11-22", false},
		{"2026-11-19", "2026-11-21", false},
	} {
		if got := coversRestore(reconcile.Window{From: d(c.from), To: d(c.to)}, m); got != c.want {
			t.Errorf("%s..%s: %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

// noSnapshots is a ledger whose backend takes no file snapshots, as a
// PostgreSQL ledger: its Backup says so.
type noSnapshots struct{ state.Ledger }

func (noSnapshots) Backup(string) (*state.Backup, error) { return nil, state.ErrNoFileSnapshot }

// TestBackupUnsupportedIsAnError: on a ledger that takes no file
// snapshots the scheduled backup fails, saying how such a ledger is
// backed up, and files the failure under the ledger; it never reports a
// backup it did not take.
func TestBackupUnsupportedIsAnError(t *testing.T) {
	cy := newCycle(t)
	env := cy.env
	env.DB = noSnapshots{env.DB}
	rec := fakeRecorder{}
	line, err := Scheduled{Env: env, Errors: rec}.Backup(context.Background())
	if !errors.Is(err, state.ErrUnsupported) || !strings.Contains(err.Error(), "pg_dump") || line != "" {
		t.Fatalf("backup on a ledger without snapshots: %q, %v", line, err)
	}
	if len(rec) != 1 {
		t.Fatalf("the failure was filed as %v, want one source", rec)
	}
}
