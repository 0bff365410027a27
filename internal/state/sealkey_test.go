package state

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// TestSealingKeyRecorded: opening a ledger records the ring's newest key
// as the one that seals; a ring without it is refused by UseAccountKeys
// with the key's id and the fix (never a key), and the ledger keeps its
// ring; a ring that holds it and a newer key is taken, and a leader
// records the newer key before it seals with it.
func TestSealingKeyRecorded(t *testing.T) {
	dir := t.TempDir()
	ringPath := filepath.Join(dir, "keys")
	first, _, err := acctseal.LoadOrCreate(ringPath)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(filepath.Join(dir, "state"), Options{NoSnapshots: true, AccountKeysFile: ringPath})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	accounts := loadDistinct(t, d, 3, 1)
	if id, err := d.SealingKey(); err != nil || id != first.Newest() {
		t.Fatalf("SealingKey = %d, %v; want the ring's newest %d", id, err, first.Newest())
	}

	other, err := acctseal.Ephemeral()
	if err != nil {
		t.Fatal(err)
	}
	err = d.UseAccountKeys(other, true)
	if !errors.Is(err, ErrSealingKeyMissing) || !errors.Is(err, acctseal.ErrKeyMissing) ||
		!strings.Contains(err.Error(), strconv.FormatUint(uint64(first.Newest()), 10)) || !strings.Contains(err.Error(), "copy the key ring file") {
		t.Fatalf("a ring without the sealing key: %v", err)
	}
	if r, err := d.Row(payment.RowKey{Batch: 1, Line: 2}); err != nil || r.Payment.BankAccount != accounts[0] {
		t.Fatalf("the ledger did not keep its ring: %v", err)
	}

	id, err := acctseal.AddKey(ringPath)
	if err != nil {
		t.Fatal(err)
	}
	both, err := acctseal.Load(ringPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.UseAccountKeys(both, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.SealingKey(); got != first.Newest() {
		t.Fatalf("a standby recorded key %d", got)
	}
	if err := d.UseAccountKeys(both, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.SealingKey(); got != id {
		t.Fatalf("the leader's new key %d is not recorded (%d)", id, got)
	}
	// New rows are sealed under the new key.
	l, err := d.BeginBatch(payment.FileMeta{Name: "after.csv", SHA256: "sha-after", Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Add(2, pay(distinct(99), 1)); err != nil {
		t.Fatal(err)
	}
	b, err := l.Commit(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var sealed string
	if err := d.view(func(tx kv.Tx) error {
		r, err := paymentRows.get(nil, tx, payment.RowKey{Batch: b.ID, Line: 2})
		if err == nil {
			sealed = r.Payment.BankAccount
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := acctseal.KeyID(sealed); err != nil || got != id {
		t.Fatalf("a row written after the swap is sealed under key %d (%v), want %d", got, err, id)
	}
	if err := d.UseAccountKeys(first, true); !errors.Is(err, ErrSealingKeyMissing) {
		t.Fatalf("the old ring, after the new key sealed: %v", err)
	}
}

// TestSealingKeyMovesOnWhenAKeyIsLost: when the key that sealed the rows
// is lost, resealing with a new ring (Open, batchd rekey) names the rows
// it cannot open and records the new key all the same, so that the hosts
// given the new ring may lead again and settle them.
func TestSealingKeyMovesOnWhenAKeyIsLost(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, Options{NoSnapshots: true})
	if err != nil {
		t.Fatal(err)
	}
	loadDistinct(t, d, 2, 0)
	d.Close()
	os.Remove(filepath.Join(dir, acctseal.FileName)) // lost; Open makes a new ring
	d, err = Open(dir, Options{NoSnapshots: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rep, err := d.SealAccounts()
	if err != nil || len(rep.Unreadable) != 2 {
		t.Fatalf("SealAccounts with the key lost: %+v, %v", rep, err)
	}
	if id, err := d.SealingKey(); err != nil || id != d.ring().Newest() {
		t.Fatalf("SealingKey = %d, %v; want the new ring's %d", id, err, d.ring().Newest())
	}
}
