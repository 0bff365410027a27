package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/testsshd"
)

// TestStatusAndReconcileBesideTheDaemon: while `batchd run` holds the
// ledger (bbolt's file lock; PostgreSQL's lease), `batchd status` says
// how the payments stand and `batchd reconcile --from --to` has the
// daemon run its reconcile over that window, waits for it and exits 0
// with its summary: neither advises stopping the daemon.
func TestStatusAndReconcileBesideTheDaemon(t *testing.T) {
	for _, backend := range []string{"bbolt", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			const key, rows = "sk_test_beside_0123456789abcdef", 6
			sshd := testsshd.Start(t)
			for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
				os.MkdirAll(filepath.Join(sshd.Root, d), 0o755)
			}
			url := startSandbox(t, "--key", key)
			dir, admin := t.TempDir(), freePort(t)
			env := []string{"BATCHD_API_KEY=" + key}
			state := ""
			if backend == "postgres" {
				pg, err := pgtest.NewServer()
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { pg.Close() })
				env = append(env, "BATCHD_POSTGRES_DSN="+pg.NewDatabase(t))
				state = "state: {backend: postgres, lease_ttl: 3s, account_keys_file: " + pgKeyRing(t, dir) + "}"
			}
			cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
%s
log: {format: json}
api: {base_url: %s, mode: test, rate: 50, burst: 5, concurrency: 4, timeout: 5s}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s, inbox: %s/inbox, archive: %s/archive, failed: %s/failed, outbox: %s/outbox}
ingest: {stable_for: 300ms}
schedule: {timezone: UTC, ingest: "@every 1s", submit: "@every 1s", reconcile: "@every 1h"}
admin: {listen: %s}
`, filepath.Join(dir, "state"), state, url, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
				sshd.Root, sshd.Root, sshd.Root, sshd.Root, admin))
			if err := os.WriteFile(filepath.Join(sshd.Root, "inbox", "payroll.csv"), []byte(paymentFile(rows)), 0o644); err != nil {
				t.Fatal(err)
			}
			d := &failoverInstance{t: t, name: "batchd run", cfg: cfg, base: "http://" + admin, env: env}
			d.start()
			eventually(t, "every row submitted", 60*time.Second, func() bool {
				var st statusDoc
				code, err := getJSON(d.base+"/v1/status", &st)
				return err == nil && code == 200 && st.Rows["submitted"] == rows
			})

			run := func(args ...string) (int, string, string) {
				cmd := exec.Command(binary, append(args, "--config", cfg)...)
				cmd.Env = append(os.Environ(), env...)
				var out, errb strings.Builder
				cmd.Stdout, cmd.Stderr = &out, &errb
				err := cmd.Run()
				if _, exited := err.(*exec.ExitError); err != nil && !exited {
					t.Fatal(err)
				}
				return cmd.ProcessState.ExitCode(), out.String(), errb.String()
			}
			code, out, errOut := run("status")
			if code != 0 || !strings.Contains(out, "payroll.csv") || !strings.Contains(out, fmt.Sprintf("in_process %d ", rows)) {
				t.Errorf("batchd status beside the daemon: exit %d\n%s%s\nwant exit 0 and the batch's checks by status", code, out, errOut)
			}
			code, out, errOut = run("reconcile", "--from", "2020-01-01", "--to", "2020-01-02")
			if code != 0 || !strings.Contains(out, "started in the running batchd") || !strings.Contains(out, "window 2020-01-01..2020-01-02") ||
				strings.Contains(out+errOut, "stop") {
				t.Errorf("batchd reconcile beside the daemon: exit %d\n%s%s\nwant exit 0 with the daemon's run over the window", code, out, errOut)
			}
		})
	}
}
