package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/testsshd"
)

// stallHealth is the part of /healthz this test reads.
type stallHealth struct {
	Status string `json:"status"`
	Jobs   []struct {
		Name        string `json:"name"`
		LastOutcome string `json:"last_outcome"`
		LastSummary string `json:"last_summary"`
		LastError   string `json:"last_error"`
	} `json:"jobs"`
}

// ingest returns the ingest job's last outcome and summary.
func (h stallHealth) ingest() (outcome, summary string) {
	for _, j := range h.Jobs {
		if j.Name == "ingest" {
			return j.LastOutcome, j.LastSummary
		}
	}
	return "", ""
}

// Issue 17's acceptance test for ingestion that never stalls: `batchd run`
// with an inbox holding an empty file (and a link to a secret beside it)
// fails the empty file to failed/ with its note, leaves the link unread,
// keeps ingesting files dropped later, and /healthz stays healthy (200)
// throughout.
func TestDaemonIngestsPastAnEmptyFileStall(t *testing.T) {
	const key = "sk_test_stall_0123456789abcdef01"
	const secret = "SECRET-do-not-quote"
	sshd := testsshd.Start(t)
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		if err := os.MkdirAll(filepath.Join(sshd.Root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	inbox := filepath.Join(sshd.Root, "inbox")
	drop := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(inbox, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	drop("empty.csv", "")
	drop("first.csv", paymentFile(2))
	secretFile := filepath.Join(t.TempDir(), "secret.csv")
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secretFile, filepath.Join(inbox, "link.csv")); err != nil {
		t.Fatal(err)
	}

	url := startSandbox(t, "--key", key)
	dir := t.TempDir()
	admin := freePort(t)
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
shutdown_timeout: 10s
log: {format: json}
api: {base_url: %s, mode: test, rate: 50, burst: 5, concurrency: 2, timeout: 5s}
sftp:
  address: %s
  user: %s
  identity_file: %s
  known_hosts: %s
  inbox: %s/inbox
  archive: %s/archive
  failed: %s/failed
  outbox: %s/outbox
ingest: {stable_for: 500ms, max_wait: 1s}
schedule: {timezone: UTC, ingest: "@every 1s", submit: "@every 1h", reconcile: "@every 1h"}
admin: {listen: %s}
`, filepath.Join(dir, "state"), url, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
		sshd.Root, sshd.Root, sshd.Root, sshd.Root, admin))

	d := startDaemon(t, cfg, key)
	base := "http://" + admin
	healthy := func() bool {
		t.Helper()
		var h stallHealth
		code, err := getJSON(base+"/healthz", &h)
		if err != nil {
			return false // not listening yet
		}
		if code != 200 {
			t.Fatalf("/healthz answered %d: %+v", code, h)
		}
		return true
	}
	archived := func(name string) bool {
		m, _ := filepath.Glob(filepath.Join(sshd.Root, "archive", "*", name))
		return len(m) == 1
	}
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(sshd.Root, rel))
		return err == nil
	}

	eventually(t, "the empty file failed and the first file archived", 30*time.Second, func() bool {
		return healthy() && exists("failed/empty.csv") && exists("failed/empty.csv.error.txt") && archived("first.csv")
	})
	note, err := os.ReadFile(filepath.Join(sshd.Root, "failed", "empty.csv.error.txt"))
	if err != nil || !strings.Contains(string(note), "the file is empty") || !strings.Contains(string(note), "export it again") {
		t.Fatalf("failed/empty.csv.error.txt: %q %v", note, err)
	}

	// A file dropped later is ingested too: the runs keep coming.
	drop("second.csv", paymentFile(3))
	eventually(t, "the file dropped later archived", 30*time.Second, func() bool {
		return healthy() && archived("second.csv")
	})
	var h stallHealth
	eventually(t, "an ingest run recorded ok", 10*time.Second, func() bool {
		code, err := getJSON(base+"/healthz", &h)
		outcome, _ := h.ingest()
		return err == nil && code == 200 && outcome == "ok"
	})

	// The link was left where it was, unread, and reported by name.
	if fi, err := os.Lstat(filepath.Join(inbox, "link.csv")); err != nil || fi.Mode().IsRegular() {
		t.Fatalf("link.csv not left in the inbox: %v", err)
	}
	logs := d.logs.String()
	if !strings.Contains(logs, "not a regular file") || !strings.Contains(logs, "link.csv") {
		t.Fatalf("the link was not reported in the log:\n%s", lastLines(logs, 20))
	}
	if strings.Contains(logs, secret) {
		t.Fatal("a log line quotes the linked secret")
	}
	for _, sub := range []string{"failed", "outbox", "archive"} {
		filepath.WalkDir(filepath.Join(sshd.Root, sub), func(p string, de os.DirEntry, err error) error {
			if err == nil && de.Type().IsRegular() {
				if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) {
					t.Errorf("%s quotes the linked secret", p)
				}
			}
			return nil
		})
	}
	assertNoSecrets(t, logs, key, sshd.IdentityFile)
}

// `batchd ingest` on an inbox holding an empty file, a file that keeps
// growing, a link and a valid file ends (within max_wait and a look; the
// test's deadline catches a hang), exits 0, and prints one line for each:
// empty (to failed/), waiting (still arriving), ignored (the link), and
// accepted.
func TestIngestCommandEndsWithEmptyAndGrowingFiles(t *testing.T) {
	const key = "sk_test_stallcmd_0123456789abcd"
	sshd := testsshd.Start(t)
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		if err := os.MkdirAll(sshd.Path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(sshd.Path("inbox", "empty.csv"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sshd.Path("inbox", "pay.csv"), []byte(paymentFile(2)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sshd.Path("archive"), sshd.Path("inbox", "link.csv")); err != nil {
		t.Fatal(err)
	}
	growing := sshd.Path("inbox", "growing.csv")
	if err := os.WriteFile(growing, []byte("number,amount,memo,name,email,bank_routing,bank_account\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() { // appends until the test ends
		defer close(stopped)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if f, err := os.OpenFile(growing, os.O_APPEND|os.O_WRONLY, 0); err == nil {
					f.WriteString("1,1.00,x,Ann,ann@example.com,999900001,1111000016\n")
					f.Close()
				}
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-stopped })

	url := startSandbox(t, "--key", key)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
log: {format: json}
api: {base_url: %s, mode: test}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s,
       inbox: %s, archive: %s, failed: %s, outbox: %s}
ingest: {stable_for: 500ms, max_wait: 1s}
`, filepath.Join(dir, "state"), url, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
		sshd.Path("inbox"), sshd.Path("archive"), sshd.Path("failed"), sshd.Path("outbox")))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "ingest", "--config", cfg)
	cmd.Env = append(os.Environ(), "BATCHD_API_KEY="+key)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("batchd ingest: %v (a hang ends at the test's deadline)\n%s\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	t.Logf("batchd ingest:\n%s", out)
	for file, outcome := range map[string]string{"empty.csv": "empty", "growing.csv": "waiting", "link.csv": "ignored", "pay.csv": "accepted"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(file) + `\s.*\s` + outcome + `\s`).MatchString(out) {
			t.Errorf("no %s line for %s in:\n%s", outcome, file, out)
		}
	}
	for _, want := range []string{"still arriving", "symbolic link", "the file is empty"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
