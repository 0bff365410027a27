package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/sftpd"
)

// TestResultsDeliveryDialsOnlyWhenDue: with the SFTP server down, a
// submit's results delivery with no report due succeeds (it never
// connects); with two due, it fails on SFTP but leaves both reports
// written locally and their batches unstamped, and the next run, the
// server back, delivers them.
func TestResultsDeliveryDialsOnlyWhenDue(t *testing.T) {
	down, err := sftpd.Start(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	down.Close()
	c := config.Default()
	c.StateDir = filepath.Join(t.TempDir(), "state")
	c.API.BaseURL, c.API.Mode = "http://127.0.0.1:1", config.ModeTest
	c.SetAPIKey("sk_test_outbox_0123456789abcdef")
	useServer(c, down)
	env := openEnv(t, ledgertest.Bbolt, c, clocktest.New(clocktest.Monday).Now)
	ctx := context.Background()

	if names, err := env.DeliverResults(ctx); err != nil || len(names) != 0 {
		t.Fatalf("nothing due, SFTP down: delivered %q, err %v; want nothing and no error", names, err)
	}

	files := []string{"payroll.csv", "second.csv"}
	for _, f := range files {
		sentBatch(t, env.DB, f)
	}
	names, err := env.DeliverResults(ctx)
	if !errors.Is(err, payment.ErrRemote) || len(names) != 0 {
		t.Fatalf("reports due, SFTP down: delivered %q, err %v; want an SFTP error", names, err)
	}
	for i, f := range files {
		local := filepath.Join(env.ReportsDir(), "results", fmt.Sprintf("batch-%06d-%s.results.csv", i+1, f))
		if _, err := os.Stat(local); err != nil {
			t.Fatalf("the undelivered report of %s is not written locally: %v", f, err)
		}
		if b, err := env.DB.Batch(uint64(i + 1)); err != nil || !b.ResultsReported.IsZero() {
			t.Fatalf("batch %d stamped as delivered (%v, %v)", i+1, b.ResultsReported, err)
		}
	}

	up, err := sftpd.Start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	useServer(c, up)
	if names, err := env.DeliverResults(ctx); err != nil || len(names) != 2 {
		t.Fatalf("next run, SFTP back: delivered %q, err %v", names, err)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(up.Root, "outbox", f+".results.csv")); err != nil {
			t.Fatalf("not in the outbox: %v", err)
		}
	}
}

// useServer points c's SFTP section at s, its outbox at s's "outbox".
func useServer(c *config.Config, s *sftpd.Server) {
	c.SFTP.Address, c.SFTP.User, c.SFTP.IdentityFile, c.SFTP.KnownHosts = s.Addr, s.User, s.IdentityFile, s.KnownHostsFile
	c.SFTP.Outbox = filepath.Join(s.Root, "outbox")
	os.MkdirAll(c.SFTP.Outbox, 0o755)
}

// sentBatch commits a one-row batch named name whose row has its check,
// so that its results report is due.
func sentBatch(t *testing.T, db payment.Ledger, name string) uint64 {
	t.Helper()
	l, err := db.BeginBatch(payment.FileMeta{Name: name, SHA256: "sha-" + name})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Add(2, payment.Payment{Amount: 100, Memo: "m", Name: "n", Email: "a@b.c",
		BankRouting: "999900001", BankAccount: "1111000016"}); err != nil {
		t.Fatal(err)
	}
	b, err := l.Commit(2, 0)
	if err != nil {
		t.Fatal(err)
	}
	k := payment.RowKey{Batch: b.ID, Line: 2}
	if _, err := db.Send(k); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Created(k, payment.CheckResult{CheckID: "chk-" + name, Status: payment.StatusInProcess}); err != nil {
		t.Fatal(err)
	}
	return b.ID
}
