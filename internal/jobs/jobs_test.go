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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/calendar"
	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/testsshd"
)

const key = "sk_test_jobs_full_cycle_0123456789"

// cycle is a real OpenSSH sshd, a sandbox over loopback HTTP, and an Env
// configured for both, as an administrator would configure them. The
// sandbox and the Env read one clock (clk, through now), so moving clk
// moves both, and no outcome depends on the day the test runs.
type cycle struct {
	t    *testing.T
	sshd *testsshd.Server
	area string // the folder under the sshd's root holding inbox, archive, failed, outbox
	sb   string // sandbox URL
	env  *Env
	api  *echeck.Client
	clk  *clocktest.Clock
}

// running returns a clock that reads clk plus the real time elapsed since
// it was made (by the monotonic clock, never the date): time passes, so
// ingest's stable_for waits end, while the date is clk's. clk standing at
// 10:00 leaves fourteen hours before a test's date could change.
func running(clk *clocktest.Clock) func() time.Time {
	made := time.Now()
	return func() time.Time { return clk.Now().Add(time.Since(made)) }
}

// newCycle starts its own sshd and runs on a clock frozen at
// clocktest.Monday, with ingest waiting for .done markers (see newCycleAt).
func newCycle(t *testing.T) *cycle {
	return newCycleAt(t, testsshd.Start(t), "", clocktest.Monday)
}

// newRunningCycle starts its own sshd and runs on a clock that stands at
// clocktest.Monday and then ticks (running), so that ingest waits for
// files to be stable for ingest.stable_for, as in production, for a test
// that cannot drop markers.
func newRunningCycle(t *testing.T) *cycle {
	clk := clocktest.New(clocktest.Monday)
	return startCycle(t, testsshd.Start(t), "", clk, running(clk), false)
}

// newCycleAt runs on sshd (shared between subtests), in its own folder
// area, on a clock frozen at `at` that moves only when the test moves it.
// On a frozen clock a file never becomes stable (stable_for never passes),
// so ingest waits for <name>.done markers (ingest.done_marker): drop writes
// them.
func newCycleAt(t *testing.T, sshd *testsshd.Server, area string, at time.Time) *cycle {
	clk := clocktest.New(at)
	return startCycle(t, sshd, area, clk, clk.Now, true)
}

func startCycle(t *testing.T, sshd *testsshd.Server, area string, clk *clocktest.Clock, now func() time.Time, doneMarker bool) *cycle {
	cy := &cycle{t: t, sshd: sshd, area: area, clk: clk}
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		os.MkdirAll(cy.path(d), 0o755)
	}
	srv := httptest.NewServer(sandbox.New(sandbox.Options{Keys: []sandbox.Key{{Value: key, FundConfirmation: true}}, Now: now}))
	t.Cleanup(srv.Close)
	c := config.Default()
	c.StateDir = filepath.Join(t.TempDir(), "state")
	c.API.BaseURL, c.API.Mode, c.API.Rate = srv.URL, config.ModeTest, 200
	c.SFTP.Address, c.SFTP.User, c.SFTP.IdentityFile, c.SFTP.KnownHosts = sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts
	c.SFTP.Inbox, c.SFTP.Archive = cy.path("inbox"), cy.path("archive")
	c.SFTP.Failed, c.SFTP.Outbox = cy.path("failed"), cy.path("outbox")
	c.Ingest.StableFor = config.Duration(100 * time.Millisecond)
	c.Ingest.DoneMarker = doneMarker
	c.SetAPIKey(key)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	env := openEnv(t, ledgertest.Bbolt, c, now) // both backends would double the cycles' time
	cy.env = env
	cy.sb = srv.URL
	cy.api, _ = echeck.New(apiwire.Options{BaseURL: srv.URL, Key: key})
	return cy
}

// path is a file or folder in the cycle's SFTP area.
func (c *cycle) path(elem ...string) string {
	return c.sshd.Path(append([]string{c.area}, elem...)...)
}

// drop puts a file in the inbox, and its .done marker after it when
// ingest waits for markers.
func (c *cycle) drop(name, body string) {
	c.t.Helper()
	if err := os.WriteFile(c.path("inbox", name), []byte(body), 0o644); err != nil {
		c.t.Fatal(err)
	}
	if c.env.Cfg.Ingest.DoneMarker {
		if err := os.WriteFile(c.path("inbox", name+".done"), nil, 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
}

// post calls a sandbox dashboard endpoint.
func (c *cycle) post(path string, body any) {
	c.t.Helper()
	if code := c.postCode(path, body); code != http.StatusOK {
		c.t.Fatalf("POST %s: HTTP %d", path, code)
	}
}

// postCode calls one of the sandbox's controls and returns the answer's
// status.
func (c *cycle) postCode(path string, body any) int {
	c.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.sb+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("POST %s: %v", path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// outboxCSV reads a CSV report from the sshd's outbox, by name prefix.
func (c *cycle) outboxCSV(prefix string) [][]string {
	c.t.Helper()
	matches, _ := filepath.Glob(filepath.Join(c.path("outbox"), prefix+"*.csv"))
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

// settlementTotals reads the settlement report's totals as "count/amount":
// by status, by outcome, and deposited_by_date.
func (c *cycle) settlementTotals() map[string]string {
	c.t.Helper()
	se := c.outboxCSV("settlement-")
	got := map[string]string{}
	for _, rec := range se[1:] {
		v := rec[col(se[0], "count")] + "/" + rec[col(se[0], "amount")]
		switch rec[0] {
		case "status_total":
			got[rec[col(se[0], "status")]] = v
		case "outcome_total":
			got[rec[col(se[0], "outcome")]] = v
		case "deposited_by_date":
			got[rec[0]] = v
		}
	}
	return got
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
// deposit some checks at the service, void one, let three business days
// pass, create a check outside batchd, reconcile, and check every line and
// total of the three reports that arrive in the real sshd's outbox. It runs
// on each pinned date of clocktest.Dates() (a Monday, a Friday, the days
// before Thanksgiving and Christmas, New Year's Eve at 23:59, the DST
// change), with the sandbox and batchd on one clock, over one sshd.
func TestFullCycleOverRealSSHD(t *testing.T) {
	sshd := testsshd.Start(t)
	// The calendar days after which the checks are more than two business
	// days old (the emulator's lifecycle), worked out by hand: Monday 2
	// March → Thursday; Friday 6 March → Wednesday; Wednesday 25 November
	// → Tuesday 1 December (Thanksgiving, a weekend); Thursday 24 December
	// → Wednesday 30 (Christmas, a weekend); Thursday 31 December 23:59 →
	// Wednesday 6 January 00:00, so 6 days (New Year's Day, a weekend);
	// Sunday 8 March → Wednesday 11.
	days := map[string]int{"monday": 3, "friday": 5, "before-thanksgiving": 6, "christmas-eve": 6, "new-years-eve": 6, "dst-change": 3}
	cal := calendar.FederalReserve()
	for _, d := range clocktest.Dates() {
		t.Run(d.Name, func(t *testing.T) {
			due := cal.AddBusinessDays(d.At.UTC(), 3)
			if n := days[d.Name]; d.At.AddDate(0, 0, n).Before(due) || !d.At.AddDate(0, 0, n-1).Before(due) {
				t.Fatalf("the calendar says checks of %v move on at %v, not after %d days", d.At, due, n)
			}
			fullCycle(t, newCycleAt(t, sshd, d.Name, d.At), days[d.Name])
		})
	}
}

// fullCycle is one run of TestFullCycleOverRealSSHD on c, whose checks
// move on after days calendar days.
func fullCycle(t *testing.T, c *cycle, days int) {
	var file strings.Builder
	file.WriteString("number,amount,memo,name,email,bank_routing,bank_account\n")
	amounts := []money.Cents{1001, 2002, 3003, 4004, 5005, 6006}
	accounts := []int{16, 16, 8, 20, 22, 5} // the last one's risk is Fail
	for i, a := range amounts {
		fmt.Fprintf(&file, "%d,%s,inv %d,Payee %d,p@example.com,999900001,11110000%02d\n", 700+i, a, i, i, accounts[i])
	}
	c.drop("week.csv", file.String())
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
	// A day before they are due, the checks are still in process.
	c.clk.Advance(time.Duration(days-1) * 24 * time.Hour)
	for _, a := range []money.Cents{4004, 6006} {
		if ck, err := c.api.GetCheck(ctx, rows[a].CheckID); err != nil || ck.Status != "in_process" {
			t.Fatalf("%s on %v: %+v %v, want in_process", a, c.clk.Now(), ck, err)
		}
	}
	c.clk.Advance(24 * time.Hour)

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

	// The file's receipt was written again by the reconcile: each row
	// shows its check's latest status, not the in_process of submit.
	rc := c.outboxCSV("week.csv.results")
	amtR, statusR := col(rc[0], "amount"), col(rc[0], "status")
	for _, rec := range rc[1:] {
		a, _ := money.Parse(rec[amtR])
		if want[a] != rec[statusR] {
			t.Fatalf("receipt status of %s: %q, want %q", a, rec[statusR], want[a])
		}
	}
	if len(rc) != 7 || !slices.Equal(sum.FinalBatches, []uint64{bs[0].ID}) {
		t.Fatalf("receipt %q; batches to write again %v", rc, sum.FinalBatches)
	}

	// Settlement: exact totals per status and per outcome (paid, on its
	// way, not paid), which together equal the status sums.
	got := c.settlementTotals()
	for k, v := range map[string]string{"deposited": "2/30.03", "void": "1/30.03", "printed": "2/90.09",
		"failed": "1/60.06", "deposited_by_date": "2/30.03",
		"paid": "2/30.03", "on_its_way": "2/90.09", "not_paid": "2/90.09"} {
		if total != 21021 { // the three outcomes: 30.03 + 90.09 + 90.09
			t.Fatalf("status report sums to %s", total)
		}
		if got[k] != v {
			t.Fatalf("settlement %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}

	// Exceptions: the check made by hand, then the returned check and the
	// one voided at the service, each with an action for a person.
	ex := c.outboxCSV("exceptions-")
	kind, amount, action := col(ex[0], "kind"), col(ex[0], "amount"), col(ex[0], "action")
	if len(ex) != 4 || ex[1][kind] != "unknown" || ex[1][col(ex[0], "check_id")] != outside.CheckID ||
		ex[2][kind] != "returned" || ex[2][amount] != "60.06" || ex[3][kind] != "voided" || ex[3][amount] != "30.03" {
		t.Fatalf("exceptions %q", ex)
	}
	for _, e := range ex[1:] {
		if e[action] == "" {
			t.Fatalf("exception without an action: %q", e)
		}
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
