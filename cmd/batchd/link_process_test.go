package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/paymentlink"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/testsshd"
)

// A payment-link file of 20 rows over the real sshd, applied by `batchd
// ingest` processes SIGKILLed while they create links, against a sandbox
// that loses a third of its answers (link creates included), exact and
// --quirks (whose link list refuses the search, so lost answers are found
// by walking the list), on both ledger backends: exactly 20 links at the
// service, one per line, and a results report with each line's link.
// Then the sandbox's pay-through-link control pays 5, and `batchd
// reconcile` reports 5 paid and 15 open in the links report, and no
// stranger.
func TestPaymentLinkFile(t *testing.T) {
	t.Parallel() // mostly waiting (the sandbox's latency, leases): beside the other waiting tests
	onEveryLedger(t, linkFile)
}

func linkFile(t *testing.T, seed uint64, ledger chaosLedger, quirks bool) {
	const key, rows, paid = "sk_test_links_0123456789abcdef", 20, 5
	rng := rand.New(rand.NewPCG(seed, 2))
	url := faultySandbox(t, key, seed, quirks)
	sshd := testsshd.Start(t)
	run := processRunner(t, ledger, url, key, sshd)
	file := "invoice,amount,memo,payer_name,payer_email,thank_you_url\n"
	for i := range rows {
		file += fmt.Sprintf("INV-%03d,%d.00,Invoice %d,Customer %d,c%d@example.com,https://shop.example/thanks\n", i, 20+i, i, i, i)
	}
	dropFile(t, sshd, "invoices.csv", file)
	sha := fmt.Sprintf("%x", sha256.Sum256([]byte(file)))
	kills, midFile := applyWithKills(t, rng, ledger, run, "invoices.csv", rows, func(db *state.DB) (int, error) {
		lines, err := paymentlink.Lines(db, sha)
		return len(lines), err
	})
	t.Logf("%d SIGKILLs, %d of them while links were being created", kills, midFile)
	if midFile == 0 {
		t.Fatalf("no SIGKILL landed while the links were being created (%d kills): the test proves too little", kills)
	}

	// Exactly one link per line at the service.
	c := client(t, url, key)
	byRef := map[string][]echeck.PaymentLink{}
	for page := 1; ; page++ {
		pg, err := listLinks(c, page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range pg.Links {
			for i := range rows {
				line := paymentlink.Line{Ref: paymentlink.Ref(sha, i+2), Request: paymentlink.Request{Amount: l.Amount}}
				if ref := line.Ref; paymentlink.IsLinkOf(paymentlink.Link{Memo: l.Memo, Amount: l.Amount}, line) {
					byRef[ref] = append(byRef[ref], l)
				}
			}
		}
		if len(pg.Links) == 0 || page >= pg.LastPage {
			break
		}
	}
	var tokens []string
	for i := range rows {
		ls := byRef[paymentlink.Ref(sha, i+2)]
		if len(ls) != 1 || ls[0].Amount.String() != fmt.Sprintf("%d.00", 20+i) {
			t.Fatalf("line %d has %d links at the service, want 1", i+2, len(ls))
		}
		tokens = append(tokens, ls[0].CheckoutToken)
	}
	recs := readReport(t, filepath.Join(sshd.Root, "outbox", "invoices.csv.results.csv"))
	if len(recs) != rows+1 {
		t.Fatalf("results report: %q", recs)
	}
	for i, rec := range recs[1:] {
		if rec[1] != fmt.Sprintf("INV-%03d", i) || rec[4] != tokens[i] || rec[6] != "created" || !strings.HasPrefix(rec[5], "http") {
			t.Errorf("results line %d: %q, want INV-%03d created with token %s", i+2, rec, i, tokens[i])
		}
	}

	// Payers pay 5 links; reconcile finds them against their lines.
	for _, tok := range tokens[:paid] {
		sandboxPost(t, url, key, "/_sandbox/paymentlink/pay", map[string]any{"checkout_token": tok})
	}
	var out []byte
	var err error
	for range 10 { // the sandbox's faults may fail a run: it is run again
		if out, err = run("reconcile").CombinedOutput(); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("reconcile: %v\n%s", err, lastLines(string(out), 20))
	}
	if !strings.Contains(string(out), "payment links: 15 open, 5 paid") || !strings.Contains(string(out), "unknown 0") {
		t.Fatalf("reconcile output:\n%s", out)
	}
	matches, _ := filepath.Glob(filepath.Join(sshd.Root, "outbox", "links-*.csv"))
	if len(matches) != 1 {
		t.Fatalf("links reports %v", matches)
	}
	links := readReport(t, matches[0])
	for i, rec := range links[1:] {
		want := map[bool]string{true: "paid", false: "open"}[i < paid]
		if rec[6] != want || rec[0] != "invoices.csv" || rec[1] != strconv.Itoa(i+2) {
			t.Errorf("links report line %d: %q, want %s", i+2, rec, want)
		}
	}
}

// listLinks reads one page of the link list, asking again while the
// sandbox fails or drops (its faults are on): a read changes nothing.
func listLinks(c *echeck.Client, page int) (*echeck.PaymentLinkPage, error) {
	var err error
	for range 20 {
		var pg *echeck.PaymentLinkPage
		if pg, err = c.ListPaymentLinks(context.Background(), echeck.ListParams{Limit: 100, Page: page}); err == nil {
			return pg, nil
		}
	}
	return nil, err
}
