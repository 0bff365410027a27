package statetest

import (
	"crypto/rand"
	"testing"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// Tokens: a payee's account token is kept under its key, the latest
// replacing the earlier, survives a restart, is sealed with the account
// numbers' key ring (moved to a new key by SealAccounts), and one no key
// opens any more reads as none, so that the account is tokenized again.
var tokenCases = []testCase{
	{"KeptByKey", testTokensKept},
	{"SealedWithTheRing", testTokensSealed},
}

func testTokensKept(t *testing.T, be Backend) {
	f := open(t, be)
	if tok, err := f.AccountToken("p1/a1"); err != nil || tok != nil {
		t.Fatalf("a key never recorded: %+v %v", tok, err)
	}
	first := payment.AccountToken{Key: "p1/a1", Token: "tok-1", Bank: "First Bank", Last4: "6789", At: Epoch}
	if err := f.PutAccountToken(first); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []payment.AccountToken{{Token: "tok"}, {Key: "p1/a2"}} {
		if err := f.PutAccountToken(bad); err == nil {
			t.Fatalf("recorded %+v", bad)
		}
	}
	f.reopen()
	if tok, err := f.AccountToken("p1/a1"); err != nil || tok == nil || *tok != first {
		t.Fatalf("after a restart: %+v %v, want %+v", tok, err, first)
	}
	second := first
	second.Token = "tok-2"
	if err := f.PutAccountToken(second); err != nil {
		t.Fatal(err)
	}
	if tok, err := f.AccountToken("p1/a1"); err != nil || tok == nil || tok.Token != "tok-2" {
		t.Fatalf("the latest token: %+v %v", tok, err)
	}
	if tok, err := f.AccountToken("p2/a1"); err != nil || tok != nil {
		t.Fatalf("another payee's key: %+v %v", tok, err)
	}
	f.invariants()
}

func testTokensSealed(t *testing.T, be Backend) {
	one, two := keyLine(t, 1), keyLine(t, 2)
	f := open(t, be, withRing(t, one))
	tok := payment.AccountToken{Key: "p1/a1", Token: "0b7c2f5e-token", Last4: "6789", At: Epoch}
	if err := f.PutAccountToken(tok); err != nil {
		t.Fatal(err)
	}
	withRing(t, one+two)(&f.opts) // a new key for writing, the old one for reading
	f.reopen()
	// bbolt's Open has moved it already; rekey moves it on every backend.
	if rep, err := f.SealAccounts(); err != nil || rep.TokensDropped != 0 {
		t.Fatalf("SealAccounts: %+v %v", rep, err)
	}
	withRing(t, two)(&f.opts) // the old key dropped
	f.reopen()
	if got, err := f.AccountToken("p1/a1"); err != nil || got == nil || got.Token != tok.Token {
		t.Fatalf("under the new key alone: %+v %v", got, err)
	}
	withRing(t, keyLine(t, 3))(&f.opts) // a ring that lost every key
	f.reopen()
	if got, err := f.AccountToken("p1/a1"); err != nil || got != nil {
		t.Fatalf("a token no key opens: %+v %v, want none", got, err)
	}
}

// keyLine is a new random key of the ring, as its file holds it.
func keyLine(t *testing.T, id uint32) string {
	t.Helper()
	line, err := acctseal.NewKeyLine(rand.Reader, id)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// withRing has the ledger seal with the ring of lines.
func withRing(t *testing.T, lines string) func(*state.Options) {
	t.Helper()
	ring, err := acctseal.Parse([]byte(lines))
	if err != nil {
		t.Fatal(err)
	}
	return func(o *state.Options) { o.AccountKeys = ring }
}
