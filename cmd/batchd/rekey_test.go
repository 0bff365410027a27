package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// TestRekeyAndKeyLost rotates the key of a ledger's account numbers, then
// loses the ring: keylost rejects the rows it can no longer send, naming
// them, and check finds no number in the clear throughout.
func TestRekeyAndKeyLost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	loadRows(t, stateDir, 3)
	cfg := writeConfigAs(t, dir, "bbolt.yaml", "state_dir: "+stateDir+"\napi: {base_url: http://127.0.0.1:1}\n")
	env := map[string]string{"BATCHD_API_KEY": migrateTestKey}
	ring := filepath.Join(stateDir, acctseal.FileName)

	out := must(t, env, "rekey", "--config", cfg)
	if !strings.Contains(out, "added key ") || !strings.Contains(out, "dropped the old keys") {
		t.Fatalf("rekey:\n%s", out)
	}
	r, err := acctseal.Load(ring)
	if err != nil || len(r.IDs()) != 1 {
		t.Fatalf("ring after rekey: %v, %v", r, err)
	}
	db, err := state.Open(stateDir, state.Options{NoSnapshots: true})
	if err != nil {
		t.Fatal(err)
	}
	row, err := db.Row(payment.RowKey{Batch: 1, Line: 2})
	db.Close()
	if err != nil || row.Payment.BankAccount == "" || acctseal.Sealed(row.Payment.BankAccount) {
		t.Fatalf("row after rekey: account readable %v, %v", row != nil && row.Payment.BankAccount != "", err)
	}
	if out := must(t, env, "check", "--config", cfg); strings.Contains(out, "in the clear") {
		t.Fatalf("check after rekey:\n%s", out)
	}
	raw, _ := os.ReadFile(filepath.Join(stateDir, state.FileName))
	if bytes.Contains(raw, []byte(row.Payment.BankAccount)) {
		t.Fatal("the ledger file holds the account number in the clear after rekey")
	}

	os.Remove(ring) // lost, and a new ring made in its place
	if _, _, err := acctseal.LoadOrCreate(ring); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runMain(t, env, "rekey", "--config", cfg)
	if code != exitFailure || !strings.Contains(errOut, "batch 1 line 2") || !strings.Contains(errOut, "batchd keylost") {
		t.Fatalf("rekey with the key lost: exit %d\n%s%s", code, errOut, must(t, env, "status", "--config", cfg))
	}
	out = must(t, env, "keylost", "--config", cfg)
	if !strings.Contains(out, "rejected batch 1 line 2: key lost") || !strings.Contains(out, "3 row(s) rejected") {
		t.Fatalf("keylost:\n%s", out)
	}
}

// TestCheckNamesAccountsInTheClear: a ledger whose rows hold account
// numbers in the clear (a ring that seals nothing, as builds before
// sealing wrote) is named row by row by batchd check, which never prints
// a number; the next open seals them.
func TestCheckNamesAccountsInTheClear(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	db, err := state.Open(stateDir, state.Options{NoSnapshots: true, AccountKeys: acctseal.InClear()})
	if err != nil {
		t.Fatal(err)
	}
	l, err := db.BeginBatch(payment.FileMeta{Name: "old.csv", SHA256: "old"})
	if err != nil {
		t.Fatal(err)
	}
	p := payment.Payment{Amount: 100, Memo: "m", Name: "n", Email: "p@example.com", BankRouting: "999900001", BankAccount: "777766665555"}
	if err := l.Add(2, p); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Commit(1, 0); err != nil {
		t.Fatal(err)
	}
	db.Close()
	cfg := writeConfigAs(t, dir, "bbolt.yaml", "state_dir: "+stateDir+"\napi: {base_url: http://127.0.0.1:1}\n")
	env := map[string]string{"BATCHD_API_KEY": migrateTestKey}
	out := must(t, env, "check", "--file", filepath.Join(stateDir, state.FileName))
	if !strings.Contains(out, "account numbers in the clear: 1 row(s): batch 1 line 2") || strings.Contains(out, "777766665555") {
		t.Fatalf("check of a ledger in the clear:\n%s", out)
	}
	must(t, env, "init", "--config", cfg)
	if out := must(t, env, "check", "--config", cfg); strings.Contains(out, "in the clear") {
		t.Fatalf("check after init sealed the ledger:\n%s", out)
	}
	raw, _ := os.ReadFile(filepath.Join(stateDir, state.FileName))
	if bytes.Contains(raw, []byte("777766665555")) {
		t.Fatal("the ledger file keeps the number after the upgrade")
	}
}
