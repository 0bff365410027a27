package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/testsshd"
)

// outcomeRow is one payment of TestFinalOutcomesOverSFTP and what the
// test does to its check at the service.
type outcomeRow struct {
	account int         // sandbox fixture account (2, 4 and 5 fail)
	amount  money.Cents // distinct, with cents, so sums are exact
	fate    string      // failed, deposited, void (at the sandbox) or printed
}

// outcomeRows: 3 on fixture accounts that fail, 4 deposited, 1 voided at
// the sandbox by hand, 4 left to be printed.
var outcomeRows = []outcomeRow{
	{2, 123456, "failed"}, {4, 23407, "failed"}, {5, 34508, "failed"},
	{16, 45609, "deposited"}, {16, 56710, "deposited"}, {16, 67811, "deposited"}, {16, 78912, "deposited"},
	{16, 89013, "void"},
	{16, 90114, "printed"}, {16, 10215, "printed"}, {16, 11316, "printed"}, {16, 12417, "printed"},
}

// Issue 28's acceptance, over the real OpenSSH sshd with batchd and the
// sandbox as processes: a file of 12 rows is ingested and submitted; at
// the service 4 checks are deposited, 1 is voided by hand (not through
// batchd), and the sandbox clock passes the processing time, so 3 fail
// and 4 are printed. Then `batchd run` reconciles: the exceptions report
// lists the 3 returned and the 1 voided elsewhere, each with the way
// forward; the settlement's paid figure is exactly the 4 deposited
// amounts, on its way the 4 printed, not paid the 3 + 1; the file's
// receipt shows every row's final status; the counter shows failed 3.
func TestFinalOutcomesOverSFTP(t *testing.T) {
	const key = "sk_test_outcomes_0123456789abcdef"
	sshd := testsshd.Start(t)
	path := func(elem ...string) string { return sshd.Path(append([]string{"outcomes"}, elem...)...) }
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		if err := os.MkdirAll(path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	url := startSandbox(t, "--key", key)
	dir, admin := t.TempDir(), freePort(t)
	// Ingest and submit are run by hand; the daemon only reconciles.
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
shutdown_timeout: 10s
log: {format: json}
api: {base_url: %s, mode: test, rate: 100}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s,
       inbox: %s, archive: %s, failed: %s, outbox: %s}
ingest: {stable_for: 100ms}
schedule: {timezone: UTC, ingest: "@every 1h", submit: "@every 1h", reconcile: "@every 2s"}
admin: {listen: %s}
`, filepath.Join(dir, "state"), url, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
		path("inbox"), path("archive"), path("failed"), path("outbox"), admin))

	var file strings.Builder
	file.WriteString("number,amount,memo,name,email,bank_routing,bank_account\r\n")
	for i, r := range outcomeRows {
		fmt.Fprintf(&file, "%d,%s,Invoice %d,Payee %d,p%d@example.com,999900001,11110000%02d\r\n", 20001+i, r.amount, i, i, i, r.account)
	}
	if err := os.WriteFile(path("inbox", "payroll.csv"), []byte(file.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"ingest", "submit"} {
		if code, out, errOut := runBatchd(t, key, cmd, "--config", cfg); code != 0 {
			t.Fatalf("batchd %s: exit %d\n%s%s", cmd, code, out, errOut)
		}
	}
	receipt := func() []map[string]string {
		return sheetResults(t, readFile(t, path("outbox", "payroll.csv.results.csv")))
	}
	ids := map[string]outcomeRow{} // check id -> its row
	var deposit []string
	for i, row := range receipt() {
		if row["line"] != fmt.Sprint(i+2) || row["status"] != "in_process" || row["check_id"] == "" {
			t.Fatalf("receipt after submit, row %d: %v", i+1, row)
		}
		r := outcomeRows[i]
		ids[row["check_id"]] = r
		switch r.fate {
		case "deposited":
			deposit = append(deposit, row["check_id"])
		case "void": // by hand at the service, not through batchd
			if err := client(t, url, key).DeleteCheck(t.Context(), row["check_id"]); err != nil {
				t.Fatal(err)
			}
		}
	}
	sandboxPost(t, url, key, "/_sandbox/deposit", map[string]any{"check_ids": deposit})
	// Ten days pass any three business days, holidays included.
	sandboxPost(t, url, key, "/_sandbox/clock", map[string]any{"advance_days": 10})

	d := startDaemon(t, cfg, key)
	base := "http://" + admin
	eventually(t, "a reconcile run counting the returned checks", 60*time.Second, func() bool {
		return strings.Contains(getText(base+"/metrics"), `batchd_checks_final_total{status="failed"} 3`+"\n")
	})
	metrics := getText(base + "/metrics")
	d.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-d.done; err != nil {
		t.Fatalf("batchd run after SIGTERM: %v", err)
	}
	for _, want := range []string{`status="failed"} 3`, `status="deposited"} 4`, `status="void"} 1`, `status="deleted"} 0`} {
		if !strings.Contains(metrics, "batchd_checks_final_total{"+want+"\n") {
			t.Errorf("/metrics lacks batchd_checks_final_total{%s", want)
		}
	}

	// The receipt shows every row's final status.
	for i, row := range receipt() {
		if want := outcomeRows[i].fate; row["status"] != want {
			t.Errorf("receipt line %s: status %q, want %q", row["line"], row["status"], want)
		}
	}

	// The exceptions: the 3 returned and the 1 voided elsewhere, each with
	// the way forward, and nothing else.
	exceptions := sheetResults(t, readFile(t, latestReport(t, path("outbox"), "exceptions-")))
	kinds := map[string][]string{}
	for _, e := range exceptions {
		r, ok := ids[e["check_id"]]
		if !ok || !strings.Contains(e["action"], "contact the payee, confirm the bank details, and pay again with a new check number") ||
			e["amount"] != r.amount.String() {
			t.Errorf("exception %v", e)
		}
		kinds[e["kind"]+" "+r.fate] = append(kinds[e["kind"]+" "+r.fate], e["check_id"])
	}
	if len(exceptions) != 4 || len(kinds["returned failed"]) != 3 || len(kinds["voided void"]) != 1 {
		t.Errorf("exceptions by kind and fate: %v", kinds)
	}
	for _, e := range exceptions {
		if e["kind"] == "voided" && !strings.Contains(e["detail"], "voided at the service, not by batchd") {
			t.Errorf("voided elsewhere: %q", e["detail"])
		}
	}

	// The settlement: paid is exactly the deposited amounts; on its way
	// the printed; not paid the returned and the voided.
	want := map[string]string{}
	sums := map[string]money.Cents{}
	counts := map[string]int{}
	outcome := map[string]string{"deposited": "paid", "printed": "on_its_way", "failed": "not_paid", "void": "not_paid"}
	for _, r := range outcomeRows {
		sums[outcome[r.fate]] += r.amount
		counts[outcome[r.fate]]++
	}
	for o, s := range sums {
		want[o] = fmt.Sprintf("%d %s", counts[o], s)
	}
	got := map[string]string{}
	for _, l := range sheetResults(t, readFile(t, latestReport(t, path("outbox"), "settlement-"))) {
		if l["section"] == "outcome_total" {
			got[l["outcome"]] = l["count"] + " " + l["amount"]
		}
	}
	if len(got) != 3 || got["paid"] != want["paid"] || got["on_its_way"] != want["on_its_way"] || got["not_paid"] != want["not_paid"] {
		t.Errorf("settlement outcomes %v, want %v", got, want)
	}
}

// readFile returns a file's content, failing the test if it is missing.
func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// latestReport is the path of the newest CSV report of a kind in dir
// ("exceptions-"): reports are named by their run date.
func latestReport(t *testing.T, dir, kind string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), kind) && strings.HasSuffix(e.Name(), ".csv") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatalf("no %s report in %s", kind, dir)
	}
	return filepath.Join(dir, slices.Max(names))
}
