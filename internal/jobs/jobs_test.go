package jobs

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/testsshd"
)

const key = "sk_test_jobs_full_cycle_0123456789"

// cycle is a real OpenSSH sshd, a sandbox over loopback HTTP, and an Env
// configured for both, as an administrator would configure them.
type cycle struct {
	t    *testing.T
	sshd *testsshd.Server
	sb   string // sandbox URL
	env  *Env
	api  *echeck.Client
}

func newCycle(t *testing.T) *cycle {
	sshd := testsshd.Start(t)
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		os.MkdirAll(filepath.Join(sshd.Root, d), 0o755)
	}
	srv := httptest.NewServer(sandbox.New(sandbox.Options{Keys: []sandbox.Key{{Value: key, FundConfirmation: true}}}))
	t.Cleanup(srv.Close)
	c := config.Default()
	c.StateDir = filepath.Join(t.TempDir(), "state")
	c.API.BaseURL, c.API.Mode, c.API.Rate = srv.URL, config.ModeTest, 200
	c.SFTP.Address, c.SFTP.User, c.SFTP.IdentityFile, c.SFTP.KnownHosts = sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts
	c.SFTP.Inbox, c.SFTP.Archive = sshd.Path("inbox"), sshd.Path("archive")
	c.SFTP.Failed, c.SFTP.Outbox = sshd.Path("failed"), sshd.Path("outbox")
	c.Ingest.StableFor = config.Duration(100 * time.Millisecond)
	c.SetAPIKey(key)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	env, err := Open(c, nil, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	api, _ := echeck.New(echeck.Options{BaseURL: srv.URL, Key: key})
	return &cycle{t: t, sshd: sshd, sb: srv.URL, env: env, api: api}
}

// post calls a sandbox dashboard endpoint.
func (c *cycle) post(path string, body any) {
	c.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.sb+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		c.t.Fatalf("POST %s: %v %v", path, resp, err)
	}
	resp.Body.Close()
}

// outboxCSV reads a CSV report from the sshd's outbox, by name prefix.
func (c *cycle) outboxCSV(prefix string) [][]string {
	c.t.Helper()
	matches, _ := filepath.Glob(filepath.Join(c.sshd.Path("outbox"), prefix+"*.csv"))
	if len(matches) != 1 {
		c.t.Fatalf("outbox has %v for %s", matches, prefix)
	}
	b, _ := os.ReadFile(matches[0])
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(b), report.BOM))).ReadAll()
	if err != nil {
		c.t.Fatal(err)
	}
	return recs
}

func col(header []string, name string) int {
	for i, h := range header {
		if h == name {
			return i
		}
	}
	panic("no column " + name)
}

// TestFullCycleOverRealSSHD is issue 5's integration test: submit a batch,
// deposit some checks at the service, void one, advance the clock, create
// a check outside batchd, reconcile, and check every line and total of the
// three reports that arrive in the real sshd's outbox.
func TestFullCycleOverRealSSHD(t *testing.T) {
	c := newCycle(t)
	var file strings.Builder
	file.WriteString("number,amount,memo,name,email,bank_routing,bank_account\n")
	amounts := []money.Cents{1001, 2002, 3003, 4004, 5005, 6006}
	accounts := []int{16, 16, 8, 20, 22, 5} // the last one's risk is Fail
	for i, a := range amounts {
		fmt.Fprintf(&file, "%d,%s,inv %d,Payee %d,p@example.com,999900001,11110000%02d\n", 700+i, a, i, i, accounts[i])
	}
	os.WriteFile(filepath.Join(c.sshd.Path("inbox"), "week.csv"), []byte(file.String()), 0o644)
	ctx := context.Background()
	if out, err := c.env.Ingest(ctx); err != nil || len(out) != 1 || out[0].Outcome != "accepted" {
		t.Fatalf("ingest: %+v %v", out, err)
	}
	if sum, _, err := c.env.Submit(ctx); err != nil || sum.Created != 6 {
		t.Fatalf("submit: %+v %v", sum, err)
	}
	rows := map[money.Cents]*payment.Row{}
	bs, _ := c.env.DB.Batches()
	c.env.DB.Rows(bs[0].ID, func(r *payment.Row) (bool, error) { rows[r.Payment.Amount] = r; return true, nil })

	c.post("/_sandbox/deposit", map[string]any{"check_ids": []string{rows[1001].CheckID, rows[2002].CheckID}})
	if err := c.api.DeleteCheck(ctx, rows[3003].CheckID); err != nil {
		t.Fatal(err)
	}
	outside, err := c.api.CreateCheck(ctx, echeck.CheckRequest{Amount: 999, Memo: "by hand", Name: "Someone",
		Email: "s@example.com", BankRouting: "999900001", BankAccount: "1111000016", Label: "manual"})
	if err != nil {
		t.Fatal(err)
	}
	c.post("/_sandbox/clock", map[string]any{"advance_days": 3})

	sum, err := c.env.Reconcile(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Unknown != 1 || sum.Missing != 0 || sum.Mismatched != 0 || !sum.Consistent {
		t.Fatalf("summary %+v", sum)
	}

	// Status report: one line per check batchd created, with the status
	// the service shows.
	want := map[money.Cents]string{1001: "deposited", 2002: "deposited", 3003: "void", 4004: "printed", 5005: "printed", 6006: "failed"}
	st := c.outboxCSV("status-")
	amt, status := col(st[0], "amount"), col(st[0], "status")
	if len(st) != 7 {
		t.Fatalf("status report has %d lines, want header + 6", len(st))
	}
	var total money.Cents
	for _, rec := range st[1:] {
		a, _ := money.Parse(rec[amt])
		if want[a] != rec[status] {
			t.Fatalf("status of %s: %q, want %q", a, rec[status], want[a])
		}
		total += a
	}

	// Settlement: exact totals per status and in all, equal to the status sums.
	se := c.outboxCSV("settlement-")
	got := map[string]string{}
	for _, rec := range se[1:] {
		switch rec[0] {
		case "status_total":
			got[rec[col(se[0], "status")]] = rec[col(se[0], "count")] + "/" + rec[col(se[0], "amount")]
		case "grand_total", "deposited_by_date":
			got[rec[0]] = rec[col(se[0], "count")] + "/" + rec[col(se[0], "amount")]
		}
	}
	for k, v := range map[string]string{"deposited": "2/30.03", "void": "1/30.03", "printed": "2/90.09",
		"failed": "1/60.06", "deposited_by_date": "2/30.03", "grand_total": "6/" + total.String()} {
		if got[k] != v {
			t.Fatalf("settlement %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}

	// Exceptions: the check made by hand, with an action for a person.
	ex := c.outboxCSV("exceptions-")
	if len(ex) != 2 || ex[1][col(ex[0], "kind")] != "unknown" || ex[1][col(ex[0], "check_id")] != outside.CheckID ||
		ex[1][col(ex[0], "action")] == "" {
		t.Fatalf("exceptions %q", ex)
	}

	// The history of a deposited row shows each status batchd saw.
	r, _ := c.env.DB.Row(rows[1001].Key)
	var path []string
	for _, s := range r.History {
		if s.CheckStatus != "" {
			path = append(path, s.CheckStatus.String())
		}
	}
	if strings.Join(path, " → ") != "in_process → deposited" {
		t.Fatalf("history %v", path)
	}
}
