package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/testsshd"
)

// TestReleaseWhileDaemonRuns: under on_account_change: hold, a known
// payee's new account is held by the running daemon; `batchd release`
// (which finds the ledger locked) releases it through the admin server
// without stopping the daemon, and the row is sent exactly once. A wrong
// token is refused and releases nothing; no output shows a full account.
func TestReleaseWhileDaemonRuns(t *testing.T) {
	const key = "sk_test_release_0123456789abcdef"
	const oldAcct, newAcct = "1111000012", "1111000034"
	sshd := testsshd.Start(t)
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		if err := os.MkdirAll(sshd.Path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	drop := func(name, acct string, number int) {
		t.Helper()
		body := "number,amount,memo,name,email,bank_routing,bank_account\r\n" +
			fmt.Sprintf("%d,12.30,Invoice %d,Ada Lovelace,ada@example.com,999900001,%s\r\n", number, number, acct)
		if err := os.WriteFile(sshd.Path("inbox", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	url := startSandbox(t, "--key", key)
	c := client(t, url, key)
	dir := t.TempDir()
	admin := freePort(t)
	token := func(name, tok string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	config := func(name, tokenFile string) string {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		return writeConfig(t, d, fmt.Sprintf(`
state_dir: %s
shutdown_timeout: 10s
log: {format: json}
api: {base_url: %s, mode: test, rate: 50, burst: 5, concurrency: 2, timeout: 5s}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s,
       inbox: %s, archive: %s, failed: %s, outbox: %s}
ingest: {stable_for: 200ms, max_wait: 1s, on_account_change: hold}
schedule: {timezone: UTC, ingest: "@every 1s", submit: "@every 1h", reconcile: "@every 1h"}
admin: {listen: %s, token_file: %s}
`, filepath.Join(dir, "state"), url, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
			sshd.Path("inbox"), sshd.Path("archive"), sshd.Path("failed"), sshd.Path("outbox"), admin, tokenFile))
	}
	cfg := config("good", token("token", "tok-release-0123456789abcdef"))
	wrongCfg := config("wrong", token("wrong-token", "tok-wrong-0123456789abcdefgh"))

	checksFor := func(number string) int {
		n := 0
		for _, ch := range allChecks(t, c) {
			if ch.Number == number {
				n++
			}
		}
		return n
	}
	drop("first.csv", oldAcct, 501)
	d := startDaemon(t, cfg, key)
	eventually(t, "the first payment sent", 30*time.Second, func() bool { return checksFor("501") == 1 })

	drop("second.csv", newAcct, 502)
	report := sshd.Path("outbox", "second.csv.results.csv")
	eventually(t, "the changed account held and reported", 30*time.Second, func() bool {
		b, err := os.ReadFile(report)
		return err == nil && strings.Contains(string(b), "held")
	})

	env := map[string]string{"BATCHD_API_KEY": key, "USER": "alice"}
	var outputs []string
	release := func(cfg string, want int) string {
		t.Helper()
		code, out, errOut := runMain(t, env, "release", "--config", cfg, "--file", "second.csv", "--line", "2")
		outputs = append(outputs, out, errOut)
		if code != want {
			t.Fatalf("release: exit %d, want %d\n%s%s", code, want, out, errOut)
		}
		return out + errOut
	}
	if out := release(wrongCfg, exitFailure); !strings.Contains(out, "refused the token") {
		t.Fatalf("a wrong token:\n%s", out)
	}
	if n := checksFor("502"); n != 0 {
		t.Fatalf("%d checks for the held row after a refused release", n)
	}
	if out := release(cfg, exitOK); !strings.Contains(out, "released second.csv line 2 (batch 2 line 2, Ada Lovelace): now pending") {
		t.Fatalf("release while the daemon runs:\n%s", out)
	}
	eventually(t, "the released row sent", 30*time.Second, func() bool { return checksFor("502") == 1 })
	if out := release(cfg, exitFailure); !strings.Contains(out, "not held: there is nothing to release") {
		t.Fatalf("a second release:\n%s", out)
	}
	eventually(t, "the results report written again with the check", 30*time.Second, func() bool {
		b, err := os.ReadFile(report)
		return err == nil && strings.Contains(string(b), "released by alice")
	})
	select {
	case err := <-d.done:
		t.Fatalf("the daemon stopped: %v\n%s", err, lastLines(d.logs.String(), 20))
	default:
	}
	if n := checksFor("502"); n != 1 {
		t.Fatalf("%d checks for the released row, want 1", n)
	}

	outputs = append(outputs, d.logs.String())
	filepath.WalkDir(sshd.Root, func(p string, de os.DirEntry, err error) error {
		if err == nil && de.Type().IsRegular() && !strings.Contains(p, "inbox") && !strings.Contains(p, "archive") {
			b, _ := os.ReadFile(p)
			outputs = append(outputs, string(b))
		}
		return nil
	})
	for _, o := range outputs {
		for _, acct := range []string{oldAcct, newAcct} {
			if strings.Contains(o, acct) {
				t.Fatalf("a full account number %s in an output:\n%s", acct, o)
			}
		}
	}
	assertNoSecrets(t, d.logs.String(), key, sshd.IdentityFile)
}
