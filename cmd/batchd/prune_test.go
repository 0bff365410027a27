package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/testsshd"
)

// pruneAccounts are the full account numbers of the pruned file: none of
// them may appear in the archive report.
var pruneAccounts = []string{"1111000016", "1111000018", "1111000020", "1111000022"}

// TestPruneProcess runs `batchd prune` as a process against a ledger
// holding a file paid 200 days ago (every row final) and a file still
// pending: its exit codes, its refusal while another process holds the
// ledger, the archive report (written locally and delivered to the SFTP
// outbox, with the right rows and no full account number), the pruned
// batch gone from `batchd status`, the compacted file, and the same
// content dropped again still refused as a duplicate.
func TestPruneProcess(t *testing.T) {
	sshd := testsshd.Start(t)
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		if err := os.MkdirAll(filepath.Join(sshd.Root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	var body strings.Builder
	body.WriteString("amount,memo,name,email,bank_routing,bank_account\n")
	for i, acct := range pruneAccounts {
		fmt.Fprintf(&body, "%d.00,Invoice %d,Payer %d,p%d@example.com,999900001,%s\n", 10+i, i, i, i, acct)
	}
	content := body.String()
	sum := sha256.Sum256([]byte(content))
	paidAt := prunePaidAt
	checkIDs := loadPaidFile(t, stateDir, "payroll.csv", hex.EncodeToString(sum[:]), paidAt, true)

	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
api: {base_url: "http://127.0.0.1:1", mode: test}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s,
       inbox: %s/inbox, archive: %s/archive, failed: %s/failed, outbox: %s/outbox}
ingest: {done_marker: true, stable_for: 0s}
reconcile: {lookback_days: 60}
`, stateDir, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts, sshd.Root, sshd.Root, sshd.Root, sshd.Root))
	before := pruneBefore

	// A bad command line.
	for _, args := range [][]string{{}, {"--before", "2026-13-01"}, {"--before", "yesterday"}} {
		if code, _, errOut := pruneRun(t, append([]string{"prune", "--config", cfg}, args...)...); code != exitUsage {
			t.Errorf("prune %v: exit %d, want %d\n%s", args, code, exitUsage, errOut)
		}
	}

	// Refused while another process holds the ledger; nothing changes.
	hold, err := state.Open(stateDir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := pruneRun(t, "prune", "--config", cfg, "--before", before)
	hold.Close()
	t.Logf("batchd prune while the ledger is held: exit %d\n%s%s", code, out, errOut)
	if code != exitFailure || !strings.Contains(errOut, "locked by another batchd process") || !strings.Contains(errOut, "stop batchd first") {
		t.Fatalf("prune of a held ledger: exit %d\n%s%s", code, out, errOut)
	}
	if files := batchFiles(t, cfg); !reflect.DeepEqual(files, []string{"payroll.csv", "pending.csv"}) {
		t.Fatalf("batches after a refused prune: %v", files)
	}
	sizeBefore := pruneFileSize(t, filepath.Join(stateDir, state.FileName))

	// The prune.
	code, out, errOut = pruneRun(t, "prune", "--config", cfg, "--before", before)
	if code != exitOK {
		t.Fatalf("prune: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("batchd prune:\n%s%s", out, errOut)
	for _, want := range []string{"pruned batch 1 (payroll.csv): 4 rows", "pruned 1 batch (4 rows)", "kept 1 (1 not final)", "compacted"} {
		if !strings.Contains(out, want) {
			t.Errorf("prune output lacks %q:\n%s", want, out)
		}
	}
	if files := batchFiles(t, cfg); !reflect.DeepEqual(files, []string{"pending.csv"}) {
		t.Errorf("batches after prune: %v, want only pending.csv", files)
	}
	if after := pruneFileSize(t, filepath.Join(stateDir, state.FileName)); after > sizeBefore {
		t.Errorf("the ledger grew from %d to %d bytes", sizeBefore, after)
	}

	// The archive report, locally and in the outbox.
	local := filepath.Join(stateDir, "reports", "archive", "batch-000001-payroll.csv.archive.csv")
	raw, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, local) {
		t.Errorf("prune output does not name the archive %s:\n%s", local, out)
	}
	remote, err := os.ReadFile(filepath.Join(sshd.Root, "outbox", "payroll.csv.batch-1.archive.csv"))
	if err != nil || !bytes.Equal(remote, raw) {
		t.Errorf("the outbox copy differs from the local archive (%v)", err)
	}
	for _, acct := range pruneAccounts {
		if bytes.Contains(raw, []byte(acct)) {
			t.Errorf("the archive holds the full account number %s", acct)
		}
	}
	recs, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(raw, []byte(report.BOM)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || !reflect.DeepEqual(recs[0], jobs.ArchiveColumns) {
		t.Fatalf("archive: %d records, header %v", len(recs), recs[0])
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	for i, r := range recs[1:] {
		wantStatus, wantCheck := "deposited", checkIDs[i]
		if i == 0 {
			wantStatus = "rejected"
		}
		if r[col["file"]] != "payroll.csv" || r[col["line"]] != fmt.Sprint(i+2) || r[col["status"]] != wantStatus ||
			r[col["check_id"]] != wantCheck || r[col["account"]] != "****"+pruneAccounts[i][6:] ||
			r[col["amount"]] != fmt.Sprintf("%d.00", 10+i) || r[col["last_change"]] == "" ||
			r[col["name"]] != report.Safe(payerName(i)) || !strings.HasPrefix(r[col["label"]], "batchd-") {
			t.Errorf("archive row %d: %q", i+1, r)
		}
	}

	// The same content dropped again is still a duplicate.
	for name, b := range map[string]string{"payroll-again.csv": content, "payroll-again.csv.done": ""} {
		if err := os.WriteFile(filepath.Join(sshd.Root, "inbox", name), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut = pruneRun(t, "ingest", "--config", cfg)
	if code != exitOK || !strings.Contains(out, "duplicate") {
		t.Fatalf("ingest of the pruned file's content: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(sshd.Root, "failed", "payroll-again.csv")); err != nil {
		t.Errorf("the duplicate was not moved to failed/: %v", err)
	}

	// Nothing more to prune.
	code, out, errOut = pruneRun(t, "prune", "--config", cfg, "--before", before, "--no-compact")
	if code != exitOK || !strings.Contains(out, "pruned 0 batches") || strings.Contains(out, "compacted") {
		t.Fatalf("second prune: exit %d\n%s%s", code, out, errOut)
	}
}

// TestDaemonPrunes: with retention.keep_days set, `batchd run` has a job
// "prune" half an hour after reconcile, which archives and removes a
// finished batch older than both keep_days and reconcile.lookback_days
// while the daemon holds the ledger.
// prunePaidAt and pruneBefore are pinned dates, not the test's today: a
// batch paid and last changed on a Monday in 2025, and a --before date
// three months later. The prune processes judge them against their own
// clock, as in production; any day since late 2025 is far enough past
// both, beyond reconcile's 60-day lookback and retention's 30 days.
var (
	prunePaidAt = time.Date(2025, 6, 2, 10, 0, 0, 0, time.UTC)
	pruneBefore = "2025-09-01"
)

func TestDaemonPrunes(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	loadPaidFile(t, stateDir, "old.csv", "sha-old", prunePaidAt, false)
	admin := freePort(t)
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
log: {format: json}
api: {base_url: "http://127.0.0.1:1", mode: test}
schedule: {timezone: UTC, reconcile: "0 6 * * *"}
retention: {keep_days: 30}
admin: {listen: %s}
`, stateDir, admin))
	d := startDaemon(t, cfg, "sk_test_prune_0123456789abcdef")
	base := "http://" + admin
	type job struct {
		Name        string `json:"name"`
		Schedule    string `json:"schedule"`
		LastOutcome string `json:"last_outcome"`
		LastSummary string `json:"last_summary"`
	}
	prune := func() (j job) {
		var health struct {
			Jobs []job `json:"jobs"`
		}
		getJSON(base+"/healthz", &health)
		for _, j := range health.Jobs {
			if j.Name == "prune" {
				return j
			}
		}
		return job{}
	}
	eventually(t, "the prune job", 20*time.Second, func() bool { return prune().Name == "prune" })
	if j := prune(); j.Schedule != "30 6 * * *" {
		t.Errorf("prune's schedule %q, want 30 6 * * *", j.Schedule)
	}
	resp, err := http.Post(base+"/v1/jobs/prune", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/jobs/prune: %s", resp.Status)
	}
	eventually(t, "a prune run", 20*time.Second, func() bool { return prune().LastOutcome != "" })
	if j := prune(); j.LastOutcome != "ok" || !strings.Contains(j.LastSummary, "pruned 1 batch (4 rows)") {
		t.Fatalf("prune run: %+v\n%s", j, d.logs.String())
	}
	var st struct {
		Batches []any `json:"batches"`
	}
	if code, err := getJSON(base+"/v1/status", &st); code != 200 || err != nil || len(st.Batches) != 0 {
		t.Errorf("/v1/status after prune: %d %v %+v", code, err, st)
	}
	if _, err := os.Stat(filepath.Join(stateDir, "reports", "archive", "batch-000001-old.csv.archive.csv")); err != nil {
		t.Errorf("archive report: %v", err)
	}
}

// loadPaidFile writes, with the clock at paidAt, a batch of one row per
// pruneAccounts whose first row the API refused and whose others were
// deposited, with its results report delivered; and, when pending is set,
// a second batch of two rows still pending. It returns the check ids by
// row (empty for the refused row).
func loadPaidFile(t *testing.T, stateDir, name, sha string, paidAt time.Time, pending bool) []string {
	t.Helper()
	db, err := state.Open(stateDir, state.Options{Now: func() time.Time { return paidAt }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	load := func(name, sha string, accts []string) payment.Batch {
		l, err := db.BeginBatch(payment.FileMeta{Name: name, SHA256: sha, Size: 100})
		if err != nil {
			t.Fatal(err)
		}
		for i, acct := range accts {
			p := payment.Payment{Amount: money.Cents(1000 + 100*i), Memo: fmt.Sprintf("Invoice %d", i), Name: payerName(i),
				Email: fmt.Sprintf("p%d@example.com", i), BankRouting: "999900001", BankAccount: acct}
			if err := l.Add(i+2, p); err != nil {
				t.Fatal(err)
			}
		}
		b, err := l.Commit(len(accts), 0)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := load(name, sha, pruneAccounts)
	ids := make([]string, len(pruneAccounts))
	var obs []payment.Observation
	for i := range pruneAccounts {
		k := payment.RowKey{Batch: b.ID, Line: uint32(i + 2)}
		if _, err := db.Send(k); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if _, err := db.Reject(k, "account closed"); err != nil {
				t.Fatal(err)
			}
			continue
		}
		ids[i] = fmt.Sprintf("chk-%d", i)
		if _, err := db.Created(k, payment.CheckResult{CheckID: ids[i], Status: payment.StatusInProcess, Created: paidAt}); err != nil {
			t.Fatal(err)
		}
		obs = append(obs, payment.Observation{Key: k, Status: payment.StatusDeposited})
	}
	if _, err := db.ObserveStatuses(obs, paidAt); err != nil {
		t.Fatal(err)
	}
	if err := db.ResultsReported(b.ID); err != nil {
		t.Fatal(err)
	}
	if pending {
		load("pending.csv", "sha-pending", []string{"1111000008", "1111000010"})
	}
	return ids
}

// payerName is the payee of row i; one starts like a formula, which the
// archive must neutralise.
func payerName(i int) string {
	if i == 2 {
		return "=HYPERLINK(\"http://x\",\"Payer 2\")"
	}
	return fmt.Sprintf("Payer %d", i)
}

// pruneRun runs batchd as a process with a test API key.
func pruneRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "BATCHD_API_KEY=sk_test_prune_0123456789abcdef")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &exit) && exit.Exited():
		return exit.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("batchd %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	return 0, "", ""
}

// batchFiles lists the files of the ledger's batches, through `batchd
// status --json` as a process.
func batchFiles(t *testing.T, cfg string) []string {
	t.Helper()
	code, out, errOut := pruneRun(t, "status", "--config", cfg, "--json")
	if code != exitOK {
		t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	var st struct {
		Batches []struct {
			File string `json:"file"`
		} `json:"batches"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, b := range st.Batches {
		files = append(files, b.File)
	}
	return files
}

func pruneFileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
