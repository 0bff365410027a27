package statetest_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/state/postgres"
)

// TestDatabaseBackInTimeIsNoticed is the shared ledger's restore rule
// (state/watermark.go): a host that saw the ledger at write count N and
// then finds it below N, because the database was put back to an earlier
// copy, applies the restore rules at takeover, before any job could send a
// row the copy shows unsent. A host whose database did not go back sees
// nothing.
func TestDatabaseBackInTimeIsNoticed(t *testing.T) {
	ctx := context.Background()
	clock := clocktest.New(clocktest.Monday)
	mark := filepath.Join(t.TempDir(), "ledger-watermark")
	open := func(dsn string) *state.DB {
		t.Helper()
		d, err := postgres.OpenLedger(ctx, dsn, postgres.Options{Fencing: true}, state.Options{Now: clock.Now, Watermark: mark, Holder: "host-a:1"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		if li, err := d.Lead(ctx, time.Minute); err != nil || !li.Self {
			t.Fatalf("Lead = %+v, %v", li, err)
		}
		return d
	}
	live := pgtest.NewDatabase(t)
	d := open(live)
	if _, err := d.TakeOver(); err != nil {
		t.Fatal(err)
	}
	b := loadRows(t, d, 3)
	inst := d.Instance()

	// The operator's backup: a copy of the database as it is now.
	backup := pgtest.NewDatabase(t)
	dst, err := postgres.Open(ctx, backup, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.CopyTo(ctx, dst); err != nil {
		t.Fatal(err)
	}
	dst.Close()

	// Work after the backup: row 2 gets its check, row 3 is sent.
	clock.Advance(time.Minute)
	k2, k3 := payment.RowKey{Batch: b.ID, Line: 2}, payment.RowKey{Batch: b.ID, Line: 3}
	for _, k := range []payment.RowKey{k2, k3} {
		if _, err := d.Send(k); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Created(k2, payment.CheckResult{CheckID: "chk-2", Status: payment.StatusInProcess}); err != nil {
		t.Fatal(err)
	}
	if err := d.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	d.Close()

	// The same database again: nothing went back.
	d = open(live)
	if _, err := d.TakeOver(); err != nil {
		t.Fatal(err)
	}
	if m, err := d.Restored(); err != nil || m != nil {
		t.Fatalf("a database that did not go back is marked restored: %v, %v", m, err)
	}
	d.Resign(ctx)
	d.Close()

	// The database put back to the backup: rows 2 and 3 show unsent.
	clock.Advance(time.Minute)
	d = open(backup)
	rep, err := d.TakeOver()
	if err != nil {
		t.Fatal(err)
	}
	n := rep.InDoubt
	if rep.Rewind == nil || rep.Rewind.InDoubt != 3 {
		t.Fatalf("TakeOver = %+v; want the rewind reported with its 3 rows put in doubt", rep)
	}
	m, err := d.Restored()
	if err != nil || m == nil {
		t.Fatalf("a database put back in time was not noticed: %v, %v", m, err)
	}
	if !strings.Contains(m.From, "went back in time") || m.RowsInDoubt != 3 || n != 0 {
		t.Fatalf("restore mark %+v, %d put in doubt by recovery; want all 3 rows without a check in doubt", m, n)
	}
	if d.Instance() == inst || m.PreviousInstance != inst {
		t.Fatalf("instance %s after the restore (was %s, mark says %s): new labels could collide with lost ones", d.Instance(), inst, m.PreviousInstance)
	}
	for line := uint32(2); line <= 4; line++ {
		r, err := d.Row(payment.RowKey{Batch: b.ID, Line: line})
		if err != nil {
			t.Fatal(err)
		}
		if r.State != payment.InDoubt {
			t.Fatalf("row %d is %s after the restore, want in doubt (looked up before any send)", line, r.State)
		}
	}
}

func loadRows(t *testing.T, d *state.DB, n int) payment.Batch {
	t.Helper()
	l, err := d.BeginBatch(payment.FileMeta{Name: "pay.csv", SHA256: "sha-pay", Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		p := payment.Payment{Amount: money.Cents(int64(100 + i)), Memo: "m", Name: "n", Email: "a@b.c",
			BankRouting: "999900001", BankAccount: fmt.Sprintf("11110000%02d", i+1)}
		if err := l.Add(i+2, p); err != nil {
			t.Fatal(err)
		}
	}
	b, err := l.Commit(n, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStandbyWatermarkFollowsTheLedger: a standby, which never writes,
// raises its watermark each time it asks for the lease, so that it too
// notices, when it takes over, a database put back before what it saw.
func TestStandbyWatermarkFollowsTheLedger(t *testing.T) {
	ctx := context.Background()
	clock := clocktest.New(clocktest.Monday)
	live := pgtest.NewDatabase(t)
	openAs := func(dsn, holder, mark string) *state.DB {
		t.Helper()
		d, err := postgres.OpenLedger(ctx, dsn, postgres.Options{Fencing: true}, state.Options{Now: clock.Now, Watermark: mark, Holder: holder})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	leader := openAs(live, "host-a:1", filepath.Join(t.TempDir(), "wm"))
	if li, err := leader.Lead(ctx, time.Minute); err != nil || !li.Self {
		t.Fatalf("Lead = %+v, %v", li, err)
	}
	b := loadRows(t, leader, 2)

	backup := pgtest.NewDatabase(t)
	dst, err := postgres.Open(ctx, backup, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leader.CopyTo(ctx, dst); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	for line := uint32(2); line <= 3; line++ {
		if _, err := leader.Send(payment.RowKey{Batch: b.ID, Line: line}); err != nil {
			t.Fatal(err)
		}
	}

	standbyMark := filepath.Join(t.TempDir(), "wm")
	standby := openAs(live, "host-b:2", standbyMark)
	if li, err := standby.Lead(ctx, time.Minute); err != nil || li.Self {
		t.Fatalf("standby Lead = %+v, %v; want another's lease", li, err)
	}
	standby.Close()

	// The database is put back; the standby's host takes over on it.
	restored := openAs(backup, "host-b:2", standbyMark)
	if li, err := restored.Lead(ctx, time.Minute); err != nil || !li.Self {
		t.Fatalf("Lead on the restored database = %+v, %v", li, err)
	}
	if _, err := restored.TakeOver(); err != nil {
		t.Fatal(err)
	}
	if m, err := restored.Restored(); err != nil || m == nil || m.RowsInDoubt != 2 {
		t.Fatalf("the standby's host did not notice the database went back: %+v, %v", m, err)
	}
}
