package bankinfo_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/bankinfo"
	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/state"
)

const key = "sk_test_bankinfo_0123456789abcdef"

// directory is the sandbox's bank directory through the client, and a
// counter of the requests it answered: dropRate 1 loses every answer.
func directory(t *testing.T, dropRate float64) (*echeck.Service, *int) {
	t.Helper()
	n := 0
	sb := sandbox.New(sandbox.Options{Keys: []sandbox.Key{{Value: key}}, DropRate: dropRate, Seed: 1})
	srv := httptest.NewServer(countRequests(sb, &n))
	t.Cleanup(srv.Close)
	c, err := echeck.New(apiwire.Options{BaseURL: srv.URL, Key: key, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return echeck.NewService(c), &n
}

// A routing number is asked once and its answer kept for the refresh age;
// the directory's 404 refuses, with the number and the fix; a directory
// that cannot be asked refuses nothing and says why; the names are read
// back from the ledger.
func TestBanksAskOnceAndRefuseOnlyOnNotFound(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.New(clocktest.Monday)
	db := ledgertest.Open(t, ledgertest.Bbolt, state.Options{Now: clk.Now})
	dir, asked := directory(t, 0)
	banks := bankinfo.New(dir, db, 24*time.Hour, clk.Now)

	for range 3 {
		if why, err := banks.Refusal(ctx, "021000021"); why != "" || err != nil {
			t.Fatalf("a known bank: %q %v", why, err)
		}
	}
	if name, err := bankinfo.NewNames(db).Name("021000021"); *asked != 1 || err != nil || name != "Sandbox Bank 0210" {
		t.Fatalf("asked %d times, name %q, %v", *asked, name, err)
	}
	why, err := banks.Refusal(ctx, sandbox.UnknownRouting)
	if err != nil || !strings.Contains(why, sandbox.UnknownRouting) || !strings.Contains(why, "check the routing number with the payee") {
		t.Fatalf("an unknown bank: %q %v", why, err)
	}
	clk.Advance(25 * time.Hour)
	if _, err := banks.Refusal(ctx, "021000021"); err != nil || *asked != 3 {
		t.Fatalf("after the refresh age: asked %d times, %v", *asked, err)
	}

	lossy, _ := directory(t, 1)
	down := bankinfo.New(lossy, db, 24*time.Hour, clk.Now)
	if why, err := down.Refusal(ctx, "011000015"); why != "" || err == nil || !strings.Contains(err.Error(), "011000015") {
		t.Fatalf("a directory whose answers are lost: %q %v", why, err)
	}
	if why, err := down.Refusal(ctx, "021000021"); why != "" || err != nil {
		t.Fatalf("a fresh answer needs no directory: %q %v", why, err)
	}
}

// brokenBanks is a ledger whose bank records cannot be read.
type brokenBanks struct{ reads int }

func (b *brokenBanks) Bank(string) (*payment.Bank, error) {
	b.reads++
	return nil, errors.New("disk I/O error")
}
func (*brokenBanks) PutBank(payment.Bank) error { return nil }

// A ledger that cannot be read is an error naming the number, never a
// blank name a report would show as "no bank known"; an empty number asks
// nothing.
func TestNamesFailLoudly(t *testing.T) {
	led := &brokenBanks{}
	names := bankinfo.NewNames(led)
	if name, err := names.Name(""); name != "" || err != nil || led.reads != 0 {
		t.Fatalf("empty routing: %q %v after %d reads", name, err, led.reads)
	}
	if _, err := names.Name("021000021"); err == nil || !strings.Contains(err.Error(), "021000021") {
		t.Fatalf("unreadable ledger: %v, want an error naming the number", err)
	}
}
