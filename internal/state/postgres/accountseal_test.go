package postgres

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state"
)

// TestDumpHoldsNoAccountNumber loads rows of distinct account numbers
// into a PostgreSQL ledger given a key ring: a pg_dump of the database
// holds none of them. Without a ring (acctseal.InClear, as builds before
// sealing wrote the rows) the same dump holds them all, which shows the
// scan can fail.
func TestDumpHoldsNoAccountNumber(t *testing.T) {
	t.Parallel()
	ring, err := acctseal.Ephemeral()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		ring  *acctseal.Ring
		found int
	}{{"sealed", ring, 0}, {"in the clear", acctseal.InClear(), 50}} {
		dsn := pgtest.NewDatabase(t)
		accounts := loadAccounts(t, dsn, c.ring, 50)
		out, err := exec.Command(pgtest.Tool(t, "pg_dump"), "--data-only", "--dbname", dsn).Output()
		if err != nil {
			t.Fatalf("pg_dump: %v", err)
		}
		n := 0
		for _, a := range accounts {
			// bytea columns dump as hex: look for both forms.
			if bytes.Contains(out, []byte(a)) || bytes.Contains(out, []byte(hex.EncodeToString([]byte(a)))) {
				n++
			}
		}
		if n != c.found {
			t.Errorf("%s: the dump holds %d account numbers, want %d", c.name, n, c.found)
		}
	}
}

func loadAccounts(t *testing.T, dsn string, ring *acctseal.Ring, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := OpenLedger(ctx, dsn, Options{Fencing: true}, state.Options{AccountKeys: ring})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if li, err := d.Lead(ctx, time.Minute); err != nil || !li.Self {
		t.Fatalf("Lead = %+v, %v", li, err)
	}
	l, err := d.BeginBatch(payment.FileMeta{Name: "pay.csv", SHA256: "sha", Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	var accounts []string
	for i := range n {
		a := fmt.Sprintf("9%011d", 41_000_000+i*104_729)
		accounts = append(accounts, a)
		p := payment.Payment{Amount: 1, Memo: "m", Name: "n", Email: "a@b.c", BankRouting: "999900001", BankAccount: a}
		if err := l.Add(i+2, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Commit(n, 0); err != nil {
		t.Fatal(err)
	}
	return accounts
}
