package payee

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

func pay(name, email, routing, account string) *payment.Payment {
	return &payment.Payment{Name: name, Email: email, BankRouting: routing, BankAccount: account}
}

func TestPayeeName(t *testing.T) {
	a := Name(pay("  Ada   Lovelace ", "ADA@Example.com ", "", ""))
	b := Name(pay("ada lovelace", "ada@example.com", "", ""))
	if a != b {
		t.Fatalf("normalised names differ: %q vs %q", a, b)
	}
	if c := Name(pay("Ada Lovelace", "other@example.com", "", "")); c == a {
		t.Fatal("another e-mail is another payee")
	}
	a1, b1 := pay("A", "a@x.com", "", ""), pay("B", "b@y.com", "", "")
	a1.PayeeID, b1.PayeeID = " V-17 ", "v-17"
	if id1, id2 := Name(a1), Name(b1); id1 != id2 {
		t.Fatalf("a payee_id names the payee whatever the name: %q vs %q", id1, id2)
	}
}

func TestPayeeAccountHash(t *testing.T) {
	k := NewKey(bytes.Repeat([]byte{7}, keyBytes))
	a, ok := k.Account(pay("A", "", "011000015", "0001234567"))
	if !ok {
		t.Fatal("a bank account has a fingerprint")
	}
	b, _ := k.Account(pay("A", "", "011000015", "0001234567"))
	if a.Hash != b.Hash || a.Last4 != "4567" || a.Length != 10 || a.KeyID != k.ID() {
		t.Fatalf("same account: %+v vs %+v", a, b)
	}
	c, _ := k.Account(pay("A", "", "021000021", "0001234567"))
	if c.Hash == a.Hash {
		t.Fatal("a different routing number is a different account")
	}
	if strings.Contains(a.Hash, "1234567") {
		t.Fatal("the hash must not hold the number")
	}
	other := NewKey(bytes.Repeat([]byte{8}, keyBytes))
	if d, _ := other.Account(pay("A", "", "011000015", "0001234567")); d.Hash == a.Hash || d.KeyID == a.KeyID {
		t.Fatal("another key hashes otherwise and has another id")
	}
	if _, ok := k.Account(&payment.Payment{Token: "t", Store: "s"}); ok {
		t.Fatal("a token row has no account fingerprint")
	}
}

func TestLoadKeyCreates0600(t *testing.T) {
	dir := t.TempDir()
	k1, err := LoadKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Size() != keyBytes {
		t.Fatalf("key file mode %v size %d, want 0600 and %d bytes", fi.Mode().Perm(), fi.Size(), keyBytes)
	}
	k2, err := LoadKey(dir)
	if err != nil || k2.ID() != k1.ID() {
		t.Fatalf("the key is kept: %v, %s vs %s", err, k1.ID(), k2.ID())
	}
	if err := os.Chmod(filepath.Join(dir, KeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a readable key is refused with the fix, got %v", err)
	}
}

type memory map[string]payment.PayeeAccount

func (m memory) LastPaid(p string) (payment.PayeeAccount, bool, error) {
	a, ok := m[p]
	return a, ok, nil
}

func TestCheckerChanges(t *testing.T) {
	k := NewKey(bytes.Repeat([]byte{7}, keyBytes))
	known := pay("Ada", "ada@example.com", "011000015", "0001234567")
	acct, _ := k.Account(known)
	mem := memory{k.Payee(Name(known)): acct}

	c := NewChecker(k, mem, Hold)
	if m, _, _ := c.Mark(known); m.Change != nil {
		t.Fatalf("the same account is no change: %+v", m.Change)
	}
	changed := pay("ADA", "ada@example.com ", "011000015", "9990005678")
	m, ok, err := c.Mark(changed)
	if err != nil || !ok || m.Change == nil || m.Change.From != "4567" || m.Change.To != "5678" || !m.Held() {
		t.Fatalf("changed account: %v %v %+v", ok, err, m.Change)
	}

	// A new payee whose file gives two accounts: the second row is a change.
	c = NewChecker(k, memory{}, "")
	first := pay("Bob", "bob@example.com", "011000015", "55501111")
	if m, _, _ := c.Mark(first); m.Change != nil {
		t.Fatal("a new payee's first row is no change")
	}
	m, _, _ = c.Mark(pay("Bob", "bob@example.com", "011000015", "55502222"))
	if m.Change == nil || m.Change.From != "1111" || m.Change.Action != Warn || m.Held() {
		t.Fatalf("two accounts in one file: %+v", m.Change)
	}

	// Hashes of another key (a lost key file) are not compared.
	other := NewKey(bytes.Repeat([]byte{9}, keyBytes))
	c = NewChecker(other, memory{other.Payee(Name(known)): acct}, Hold)
	if m, _, _ := c.Mark(changed); m.Change != nil {
		t.Fatal("an account hashed with another key is not compared")
	}
}
