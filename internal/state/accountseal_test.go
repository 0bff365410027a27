package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	boltkv "github.com/batchd/batchd/internal/state/bolt"
	"github.com/batchd/batchd/internal/state/kv"
	bolt "go.etcd.io/bbolt"
)

// distinct is the i-th of the test's account numbers: twelve digits no
// other field of a row holds.
func distinct(i int) string { return fmt.Sprintf("8%011d", 73_000_000+i*7919) }

// loadDistinct commits a payment batch of n rows and a funding-source
// batch of m rows, every one with its own account number.
func loadDistinct(t *testing.T, d *DB, n, m int) (accounts []string) {
	t.Helper()
	l, err := d.BeginBatch(payment.FileMeta{Name: "pay.csv", SHA256: "sha-pay", Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		accounts = append(accounts, distinct(i))
		if err := l.Add(i+2, pay(distinct(i), int64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Commit(n, 0); err != nil {
		t.Fatal(err)
	}
	var reqs []funding.Request
	for i := range m {
		r := srcReq(i)
		r.Account = distinct(n + i)
		accounts = append(accounts, r.Account)
		reqs = append(reqs, r)
	}
	loadSources(t, d, "src.csv", payment.KindSources, reqs...)
	return accounts
}

// found are the accounts whose digits appear in the file at path.
func found(t *testing.T, path string, accounts []string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var in []string
	for _, a := range accounts {
		if bytes.Contains(b, []byte(a)) {
			in = append(in, a)
		}
	}
	return in
}

func TestAccountNumbersSealedAtRest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := open(t, dir)
	if d.AccountKeysMade() != filepath.Join(dir, acctseal.FileName) {
		t.Fatalf("AccountKeysMade = %q", d.AccountKeysMade())
	}
	accounts := loadDistinct(t, d, 300, 20)
	// The domain reads the numbers in the clear.
	r, err := d.Row(payment.RowKey{Batch: 1, Line: 2})
	if err != nil || r.Payment.BankAccount != accounts[0] {
		t.Fatalf("row reads account %q, %v", r.Payment.BankAccount, err)
	}
	var srcAccts []string
	if err := d.OpenSourceRows(func(r *funding.Row) (bool, error) {
		srcAccts = append(srcAccts, r.Request.Account)
		return true, nil
	}); err != nil || len(srcAccts) != 20 || srcAccts[0] != accounts[300] {
		t.Fatalf("funding rows read %v, %v", srcAccts, err)
	}
	// Half the rows are sent: in flight, then submitted, which keeps only
	// the last four digits.
	for i := range 150 {
		k := payment.RowKey{Batch: 1, Line: uint32(i + 2)}
		if _, err := d.Send(k); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if _, err := d.Created(k, payment.CheckResult{CheckID: fmt.Sprintf("chk-%d", i), Status: payment.StatusInProcess}); err != nil {
				t.Fatal(err)
			}
		}
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	if _, err := d.Backup(backup); err != nil {
		t.Fatal(err)
	}
	d.Close()
	for _, path := range []string{filepath.Join(dir, FileName), backup} {
		if in := found(t, path, accounts); len(in) > 0 {
			t.Fatalf("%s holds %d account numbers in the clear, e.g. %s", path, len(in), in[0])
		}
	}
	if _, err := Compact(dir, 0); err != nil {
		t.Fatal(err)
	}
	if in := found(t, filepath.Join(dir, FileName), accounts); len(in) > 0 {
		t.Fatalf("the compacted ledger holds %d account numbers in the clear", len(in))
	}
	rep, err := CheckFile(filepath.Join(dir, FileName))
	if err != nil || !rep.OK() || rep.InClear.Rows != 0 {
		t.Fatalf("check: %+v %v", rep, err)
	}
}

// TestUpgradeSealsAccountsInTheClear writes rows as builds before sealing
// did, then opens the ledger: the numbers found in the file before are
// gone after, from its free pages too.
func TestUpgradeSealsAccountsInTheClear(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := open(t, dir)
	accounts := loadDistinct(t, d, 200, 20)
	d.Close()
	path := filepath.Join(dir, FileName)
	unsealAll(t, path, d.ring())
	if in := found(t, path, accounts); len(in) != len(accounts) {
		t.Fatalf("the old way's ledger holds %d of %d numbers in the clear", len(in), len(accounts))
	}
	rep, err := CheckFile(path)
	if err != nil || !rep.OK() || rep.InClear.Rows != len(accounts) || rep.InClear.First[0] != "batch 1 line 2" {
		t.Fatalf("check of the old way's ledger: in clear %+v, %v", rep.InClear, err)
	}
	d = open(t, dir)
	r, err := d.Row(payment.RowKey{Batch: 1, Line: 3})
	if err != nil || r.Payment.BankAccount != accounts[1] {
		t.Fatalf("row after the upgrade reads %q, %v", r.Payment.BankAccount, err)
	}
	d.Close()
	if in := found(t, path, accounts); len(in) > 0 {
		t.Fatalf("after the upgrade the ledger file holds %d numbers in the clear, e.g. %s", len(in), in[0])
	}
}

// unsealAll rewrites every row of the closed ledger at path with its
// account number in the clear, as builds before sealing wrote it.
func unsealAll(t *testing.T, path string, keys *acctseal.Ring) {
	t.Helper()
	bd, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bd.Close()
	err = bd.Update(func(btx *bolt.Tx) error {
		tx := boltkv.Tx(btx)
		if err := unsealRows(tx, paymentRows, keys); err != nil {
			return err
		}
		return unsealRows(tx, sourceRows, keys)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func unsealRows[R any](tx kv.Tx, t *rowType[R], keys *acctseal.Ring) error {
	var rows []*R
	err := tx.Bucket(t.rows).ForEach(func(k, v []byte) error {
		r, err := t.decode(keys, keyFrom(k), v)
		rows = append(rows, r)
		return err
	})
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := t.put(acctseal.InClear(), tx, r); err != nil {
			return err
		}
	}
	return nil
}

func TestLostKeyNamesTheRows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := open(t, dir)
	loadDistinct(t, d, 5, 2)
	d.Close()
	os.Remove(filepath.Join(dir, acctseal.FileName)) // lost: Open makes a new ring
	d = open(t, dir)
	_, err := d.Row(payment.RowKey{Batch: 1, Line: 2})
	if !errors.Is(err, acctseal.ErrDamaged) && !errors.Is(err, acctseal.ErrKeyMissing) {
		t.Fatalf("a row sealed under a lost key: %v", err)
	}
	if want := "batch 1 line 2"; !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Fatalf("error %q does not name %s", err, want)
	}
}

func TestMarkKeyLostRejectsUnsentRows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := open(t, dir)
	loadDistinct(t, d, 3, 1)
	d.Close()
	os.Remove(filepath.Join(dir, acctseal.FileName))
	d = open(t, dir)
	names, err := d.MarkKeyLost()
	if err != nil || len(names) != 4 || names[0] != "batch 1 line 2" || names[3] != "funding batch 2 line 2" {
		t.Fatalf("MarkKeyLost = %v, %v", names, err)
	}
	r, err := d.Row(payment.RowKey{Batch: 1, Line: 2})
	if err != nil || r.State != payment.Rejected || r.Payment.BankAccount != "" || r.History[len(r.History)-1].Note != KeyLostNote {
		t.Fatalf("row after MarkKeyLost: %+v, %v", r, err)
	}
	if again, err := d.MarkKeyLost(); err != nil || len(again) != 0 {
		t.Fatalf("second MarkKeyLost = %v, %v", again, err)
	}
	wantInvariants(t, d)
}
