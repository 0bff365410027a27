package bankinfo_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/bankinfo"
	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ledgertest"
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
	if *asked != 1 || bankinfo.Name(db, "021000021") != "Sandbox Bank 0210" {
		t.Fatalf("asked %d times, name %q", *asked, bankinfo.Name(db, "021000021"))
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
