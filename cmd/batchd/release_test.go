package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// loadHeld loads pay.csv into the ledger at stateDir: line 2 pending,
// line 3 held because its payee's account changed from …4567 to …5678.
func loadHeld(t *testing.T, stateDir string) {
	t.Helper()
	db, err := state.Open(stateDir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := db.BeginBatch(payment.FileMeta{Name: "pay.csv", SHA256: "pay"})
	if err != nil {
		t.Fatal(err)
	}
	for line, acct := range map[int]string{2: "0001234567", 3: "0009995678"} {
		p := payment.Payment{Amount: money.Cents(100 * line), Memo: "m", Name: "Ada Lovelace", Email: "ada@example.com",
			BankRouting: "999900001", BankAccount: acct}
		m := payment.PayeeMark{Payee: "ada", Account: payment.PayeeAccount{KeyID: "k", Hash: acct, Last4: acct[6:], Length: 10}}
		if line == 3 {
			m.Change = &payment.AccountChange{From: "4567", To: "5678", Action: "hold"}
		}
		if err := l.AddMarked(line, p, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Commit(2, 0); err != nil {
		t.Fatal(err)
	}
}

func TestReleaseHeldRow(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	loadHeld(t, stateDir)
	cfg := writeConfig(t, dir, fmt.Sprintf("state_dir: %s\napi: {base_url: http://127.0.0.1:1}\ningest: {on_account_change: hold}\n", stateDir))
	env := map[string]string{"BATCHD_API_KEY": "sk_test_x1234567890", "USER": "alice"}
	var outputs []string
	run := func(want int, args ...string) string {
		t.Helper()
		code, out, errOut := runMain(t, env, args...)
		outputs = append(outputs, out, errOut)
		if code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, want, out, errOut)
		}
		return out + errOut
	}

	out := run(exitOK, "status", "--config", cfg)
	if !strings.Contains(out, "batch 1 line 3: held: bank details changed from …4567 to …5678; release with batchd release --file pay.csv --line 3") {
		t.Fatalf("status does not show the held row:\n%s", out)
	}
	if out := run(exitFailure, "release", "--config", cfg, "--file", "pay.csv", "--line", "2"); !strings.Contains(out, "pay.csv line 2 (batch 1 line 2) is pending, not held") {
		t.Fatalf("releasing a row not held:\n%s", out)
	}
	if out := run(exitFailure, "release", "--config", cfg, "--file", "other.csv", "--line", "3"); !strings.Contains(out, "no row at other.csv line 3") {
		t.Fatalf("releasing a row that does not exist:\n%s", out)
	}
	run(exitUsage, "release", "--config", cfg, "--file", "pay.csv")

	if out := run(exitOK, "release", "--config", cfg, "--file", "pay.csv", "--line", "3"); !strings.Contains(out, "released pay.csv line 3 (batch 1 line 3, Ada Lovelace): now pending") {
		t.Fatalf("release:\n%s", out)
	}
	if out := run(exitFailure, "release", "--config", cfg, "--file", "pay.csv", "--line", "3", "--by", "bob"); !strings.Contains(out, "is pending, not held") {
		t.Fatalf("a second release:\n%s", out)
	}
	if out := run(exitOK, "status", "--config", cfg); strings.Contains(out, "held:") {
		t.Fatalf("status still shows a held row:\n%s", out)
	}

	db, err := state.Open(stateDir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.Row(payment.RowKey{Batch: 1, Line: 3})
	if err != nil || r.State != payment.Pending {
		t.Fatalf("row after release %+v %v", r, err)
	}
	if s := r.History[len(r.History)-1]; s.Via != payment.Approve || s.Note != "released by alice" {
		t.Fatalf("history %+v", s)
	}
	for _, o := range outputs {
		if strings.Contains(o, "0009995678") || strings.Contains(o, "0001234567") {
			t.Fatalf("a full account number in the output:\n%s", o)
		}
	}
}

// TestReleaseLockedWithoutAdmin: when another process holds the ledger and
// no admin server answers, batchd release says so and names the fix, and
// releases nothing.
func TestReleaseLockedWithoutAdmin(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	loadHeld(t, stateDir)
	db, err := state.Open(stateDir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	env := map[string]string{"BATCHD_API_KEY": "sk_test_x1234567890", "USER": "alice"}
	for _, c := range []struct{ admin, want string }{
		{`""`, "admin.listen is empty"},
		{freePort(t), "does not answer"},
	} {
		cfg := writeConfig(t, dir, fmt.Sprintf("state_dir: %s\napi: {base_url: http://127.0.0.1:1}\nadmin: {listen: %s}\n", stateDir, c.admin))
		code, out, errOut := runMain(t, env, "release", "--config", cfg, "--file", "pay.csv", "--line", "3")
		if code != exitFailure || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "or stop batchd, release, and start it again") {
			t.Errorf("admin.listen %s: exit %d\n%s%s", c.admin, code, out, errOut)
		}
	}
	if r, err := db.Row(payment.RowKey{Batch: 1, Line: 3}); err != nil || r.State != payment.Held {
		t.Fatalf("row after refused releases %+v %v", r, err)
	}
}
