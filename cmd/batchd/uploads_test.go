package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/testsshd"
)

// runBatchd runs the built binary and returns its exit code and output.
func runBatchd(t *testing.T, key string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "BATCHD_API_KEY="+key)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// Issue 11 end to end, over a real sshd and the sandbox, as processes:
// payroll.csv dropped on two days and twice on the second, each with other
// content, ingested and submitted: three results reports, one per file,
// named after where each file was archived. Each round uploads in another
// sftp.temp_upload mode, and nothing temporary is left in the outbox.
func TestSameNameOnTwoDaysKeepsEveryReceipt(t *testing.T) {
	const key = "sk_test_uploads_0123456789abcdef"
	url := startSandbox(t, "--key", key)
	sshd := testsshd.Start(t)
	dir := t.TempDir()
	config := func(tz, mode string) string {
		return writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
log: {format: json}
api: {base_url: %s, mode: test, rate: 100}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s,
       inbox: %s, archive: %s, failed: %s, outbox: %s, temp_upload: %s}
ingest: {stable_for: 100ms, on_invalid: skip_rows}
schedule: {timezone: %s}
`, filepath.Join(dir, "state"), url, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
			sshd.Path("inbox"), sshd.Path("archive"), sshd.Path("failed"), sshd.Path("outbox"), mode, tz))
	}
	rounds := []struct{ tz, mode string }{
		{"Pacific/Kiritimati", "dot"},   // UTC+14
		{"Pacific/Pago_Pago", "suffix"}, // UTC-11: never the same date
		{"Pacific/Pago_Pago", "none"},
	}
	for i, r := range rounds {
		cfg := config(r.tz, r.mode)
		// A valid row, and an invalid one for the rejects report.
		body := fmt.Sprintf("amount,memo,name,email,bank_routing,bank_account\n%d.00,pay %d,Ann,ann@example.com,999900001,1111000016\n-1,bad,Bob,bob@example.com,999900001,1111000016\n", 100+i, i)
		if err := os.WriteFile(sshd.Path("inbox", "payroll.csv"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runBatchd(t, key, "ingest", "--config", cfg)
		if code != 0 || !strings.Contains(out, "accepted-with-rejects") {
			t.Fatalf("round %d: ingest exit %d\n%s%s", i, code, out, errOut)
		}
		if code, out, errOut := runBatchd(t, key, "submit", "--config", cfg); code != 0 {
			t.Fatalf("round %d: submit exit %d\n%s%s", i, code, out, errOut)
		}
	}
	var results, rejects, other []string
	entries, _ := os.ReadDir(sshd.Path("outbox"))
	for _, e := range entries {
		switch n := e.Name(); {
		case strings.HasSuffix(n, ".results.csv"):
			results = append(results, n)
		case strings.HasSuffix(n, ".rejects.csv"):
			rejects = append(rejects, n)
		case strings.HasSuffix(n, ".done"):
			if !strings.HasPrefix(n, "payroll-2.csv.") {
				t.Errorf("marker %s outside none mode", n)
			}
		case strings.HasSuffix(n, ".xlsx"):
		default:
			other = append(other, n)
		}
	}
	want := []string{"payroll-1.csv.results.csv", "payroll-2.csv.results.csv", "payroll.csv.results.csv"}
	if !slices.Equal(results, want) || len(other) != 0 {
		t.Fatalf("outbox results %v (others %v), want %v", results, other, want)
	}
	if want := []string{"payroll-1.csv.rejects.csv", "payroll-2.csv.rejects.csv", "payroll.csv.rejects.csv"}; !slices.Equal(rejects, want) {
		t.Fatalf("outbox rejects %v, want %v", rejects, want)
	}
	for i, name := range []string{"payroll.csv", "payroll-1.csv", "payroll-2.csv"} {
		b, err := os.ReadFile(sshd.Path("outbox", name+".results.csv"))
		if err != nil || !strings.Contains(string(b), fmt.Sprintf(`"%d.00"`, 100+i)) {
			t.Fatalf("%s.results.csv is not its file's receipt: %q %v", name, b, err)
		}
	}
	if _, err := os.Stat(sshd.Path("outbox", "payroll-2.csv.results.csv.done")); err != nil {
		t.Fatalf("none mode: %v", err)
	}
}

// A file that cannot be moved (its first free name in the day's archive
// folder is longer than the file system allows, so sshd refuses the
// rename, whoever runs it) fails alone: `batchd ingest` archives the
// other file, prints a line for each, names the failed one and exits 1.
// The run is given its day (--date), so the test and the process agree
// on the archive folder whatever the hour.
func TestIngestGoesOnPastAFileThatCannotBeMoved(t *testing.T) {
	const key = "sk_test_uploads_0123456789abcdef"
	sshd := testsshd.Start(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
log: {format: json}
api: {base_url: "http://127.0.0.1:1", mode: test}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s,
       inbox: %s, archive: %s, failed: %s, outbox: %s}
ingest: {stable_for: 100ms}
`, filepath.Join(dir, "state"), sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
		sshd.Path("inbox"), sshd.Path("archive"), sshd.Path("failed"), sshd.Path("outbox")))
	long := strings.Repeat("p", 251) + ".csv"
	const date = "2026-03-02"
	day := sshd.Path("archive", date)
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(day, long), []byte("an earlier file"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{long, "ok.csv"} {
		body := fmt.Sprintf("amount,memo,name,email,bank_routing,bank_account\n%d.00,pay,Ann,ann@example.com,999900001,1111000016\n", 100+i)
		if err := os.WriteFile(sshd.Path("inbox", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runBatchd(t, key, "ingest", "--config", cfg, "--date", date)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	mustHave := func(s string, subs ...string) {
		t.Helper()
		for _, sub := range subs {
			if !strings.Contains(s, sub) {
				t.Fatalf("output lacks %q:\n%s\n%s", sub, out, errOut)
			}
		}
	}
	mustHave(out, "ok.csv", "accepted", "error", "(left there; the next run resumes it)", "1 of 2 files failed: "+long)
	mustHave(errOut, "batchd ingest: 1 of 2 files failed", long+": archive")
	if _, err := os.Stat(filepath.Join(day, "ok.csv")); err != nil {
		t.Fatalf("ok.csv not archived: %v", err)
	}
	// The log has the failure at error level.
	if !strings.Contains(errOut, `"level":"ERROR"`) || !strings.Contains(errOut, "file skipped for this run") {
		t.Fatalf("no error-level log line:\n%s", errOut)
	}
}

// `batchd ingest --date` rehearses only against the sandbox: with
// api.mode: live it refuses, naming the key, before touching anything; a
// date that is not YYYY-MM-DD is refused with the form it wants.
func TestIngestDateIsForRehearsals(t *testing.T) {
	dir := t.TempDir()
	cfg := func(mode string) string {
		return writeConfig(t, t.TempDir(), fmt.Sprintf(
			"state_dir: %s\napi: {base_url: \"http://127.0.0.1:1\", mode: %s}\n", filepath.Join(dir, mode), mode))
	}
	code, out, errOut := runBatchd(t, "sk_live_uploads_0123456789abcdef", "ingest", "--config", cfg("live"), "--date", "2026-03-02")
	if code != 1 || !strings.Contains(errOut, "--date 2026-03-02: a rehearsal date needs api.mode: test") {
		t.Fatalf("live: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runBatchd(t, "sk_test_uploads_0123456789abcdef", "ingest", "--config", cfg("test"), "--date", "2 March")
	if code != 1 || !strings.Contains(errOut, `--date: want YYYY-MM-DD, got "2 March"`) {
		t.Fatalf("bad date: exit %d\n%s%s", code, out, errOut)
	}
}
