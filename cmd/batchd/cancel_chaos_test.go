package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/testsshd"
)

// A cancel file applied by `batchd ingest` processes SIGKILLed while they
// void, against a sandbox that loses a third of its answers (voids
// included) and fails a tenth of its requests, exact and --quirks, on
// both ledger backends: every check the file names that was in process
// ends void and is reported "voided" (never "already_void", which would
// mean a void left before its intent was recorded), every deposited one
// "too_late", and the checks it does not name are untouched.
func TestCancelChaos(t *testing.T) {
	t.Parallel() // mostly waiting (the sandbox's latency, leases): beside the other waiting tests
	onEveryLedger(t, cancelChaos)
}

func cancelChaos(t *testing.T, seed uint64, ledger chaosLedger, quirks bool) {
	const (
		key                      = "sk_test_cancel_0123456789abcdef"
		rows, deposited, untouch = 30, 8, 2
	)
	rng := rand.New(rand.NewPCG(seed, 1))
	url := faultySandbox(t, key, seed, quirks)
	var file strings.Builder
	file.WriteString("label,number,amount,memo,name,email,bank_routing,bank_account\n")
	for i := range rows {
		fmt.Fprintf(&file, "cxl,%04d,%d.%02d,inv %d,Payee %d,p@example.com,999900001,11110000%02d\n", 100+i, 10+i, i, i, i, 16)
	}
	ingestInto(t, ledger, map[string]string{"week.csv": file.String()})
	sshd := testsshd.Start(t)
	run := processRunner(t, ledger, url, key, sshd)
	submitUntilDone(t, run)
	all := ledgerRows(t, ledger)
	if len(all) != rows {
		t.Fatalf("%d rows", len(all))
	}
	var depositIDs []string
	for _, r := range all[rows-untouch-deposited : rows-untouch] {
		depositIDs = append(depositIDs, r.CheckID)
	}
	sandboxPost(t, url, key, "/_sandbox/deposit", map[string]any{"check_ids": depositIDs})

	cancels := "check_id,reason\n"
	for _, r := range all[:rows-untouch] {
		cancels += r.CheckID + ",sent twice\n"
	}
	dropFile(t, sshd, "cancel.csv", cancels)
	sha := fmt.Sprintf("%x", sha256.Sum256([]byte(cancels)))
	kills, midFile := applyWithKills(t, rng, ledger, run, "cancel.csv", rows-untouch, func(db *state.DB) (int, error) {
		lines, err := payment.CancelLines.List(db, sha)
		return len(lines), err
	})
	matches, _ := filepath.Glob(filepath.Join(sshd.Root, "outbox", "cancel*.results.csv"))
	if len(matches) != 1 {
		t.Fatalf("results reports %v", matches)
	}
	recs := readReport(t, matches[0])
	got := map[string]string{}
	for _, rec := range recs[1:] {
		got[rec[slices.Index(recs[0], "check_id")]] = rec[slices.Index(recs[0], "result")]
	}
	c := client(t, url, key)
	for i, r := range all {
		want, status := "voided", "void"
		switch {
		case i >= rows-untouch:
			want, status = "", "in_process"
		case i >= rows-untouch-deposited:
			want, status = "too_late", "deposited"
		}
		if got[r.CheckID] != want {
			t.Errorf("row %d: result %q, want %q", i, got[r.CheckID], want)
		}
		ck, err := getCheck(c, r.CheckID)
		if err != nil || ck.Status != status {
			t.Errorf("row %d's check: %+v %v, want %s", i, ck, err, status)
		}
	}
	t.Logf("%d SIGKILLs, %d of them while the file's lines were being voided", kills, midFile)
	if midFile == 0 {
		t.Fatalf("no SIGKILL landed while the cancel file's lines were being voided (%d kills): the test proves too little", kills)
	}
}

// processRunner writes the configuration of a process test's batchd
// (the ledger, the sandbox at url, the sshd's folders, ingest on done
// markers) and returns what makes a `batchd <cmd>` process of it.
func processRunner(t *testing.T, ledger chaosLedger, url, key string, sshd *testsshd.Server) func(string) *exec.Cmd {
	t.Helper()
	cfg := writeConfig(t, t.TempDir(), fmt.Sprintf(`
state_dir: %s
%slog: {format: json}
api: {base_url: %s, mode: test, rate: 200, burst: 20, timeout: 2s}
submit: {resolve_after: 1s, max_attempts: 20, backoff_max: 200ms}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s,
       inbox: %s/inbox, archive: %s/archive, failed: %s/failed, outbox: %s/outbox}
ingest: {done_marker: true, stable_for: 0s}
`, ledger.stateDir, ledger.config(), url, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
		sshd.Root, sshd.Root, sshd.Root, sshd.Root))
	return func(cmdName string) *exec.Cmd {
		cmd := exec.Command(binary, cmdName, "--config", cfg)
		cmd.Env = append(append(os.Environ(), "BATCHD_API_KEY="+key), ledger.env()...)
		return cmd
	}
}

// onEveryLedger runs a process test of an applied kind on bbolt and on
// PostgreSQL (side by side), each exact and against `batchd sandbox
// --quirks` (started together: they mostly wait on the sandbox's latency
// and on leases), with one seed for the whole run.
func onEveryLedger(t *testing.T, test func(t *testing.T, seed uint64, ledger chaosLedger, quirks bool)) {
	seed := chaosSeed(t)
	for _, backend := range []string{"bbolt", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var pg *pgtest.Server
			if backend == "postgres" {
				pg = pgServer(t)
			}
			sideBySide(t, []string{"exact", "quirks"}, func(t *testing.T, i int) {
				ledger := chaosLedger{stateDir: filepath.Join(t.TempDir(), "state")}
				if pg != nil {
					ledger = ledger.onPostgres(t, pg.NewDatabase(t), t.TempDir())
				}
				test(t, seed, ledger, i == 1)
			})
		})
	}
}

// faultySandbox starts `batchd sandbox` for key with the faults of the
// applied kinds' process tests: a third of the answers lost (voids,
// edits and link creates included), a tenth of the requests failed before
// they act (the controls, such as deposit, are exempt), and 25ms a
// request, so that applying a file takes a second or two and the kills
// have lines to land between.
func faultySandbox(t *testing.T, key string, seed uint64, quirks bool) string {
	t.Helper()
	args := []string{"--key", key, "--seed", strconv.FormatUint(seed, 10), "--drop-rate", "0.3", "--error-rate", "0.1", "--latency", "25ms"}
	if quirks {
		args = append(args, "--quirks")
	}
	return startSandbox(t, args...)
}

// submitUntilDone runs `batchd submit` until it exits 0: under the
// sandbox's faults a run may leave rows in doubt (exit 1) for the next.
func submitUntilDone(t *testing.T, run func(string) *exec.Cmd) {
	t.Helper()
	for round := 0; ; round++ {
		out, err := run("submit").CombinedOutput()
		if err == nil {
			return
		}
		if round > 10 {
			t.Fatalf("submit: %v\n%s", err, lastLines(string(out), 20))
		}
	}
}

// dropFile puts a file and its .done marker in the sshd's inbox.
func dropFile(t *testing.T, sshd *testsshd.Server, name, body string) {
	t.Helper()
	for p, b := range map[string]string{name: body, name + ".done": ""} {
		if err := os.WriteFile(filepath.Join(sshd.Root, "inbox", p), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// applyWithKills runs `batchd ingest` (run makes the command) until it
// has applied the file name, SIGKILLing it while the file's lines are
// being applied: a kill before any of its lines was recorded (recorded
// counts them in the ledger) waits longer next time, one after all of
// them shorter, so that the kills land among the lines whatever the
// machine's speed. It returns the kills, and those that landed with
// some but not all lines recorded.
func applyWithKills(t *testing.T, rng *rand.Rand, ledger chaosLedger, run func(string) *exec.Cmd, name string, lines int,
	recorded func(*state.DB) (int, error)) (kills, midFile int) {
	t.Helper()
	wait := 150 * time.Millisecond
	if ledger.dsn != "" {
		wait = 400 * time.Millisecond // a start on PostgreSQL takes the lease first; every kill costs its TTL
	}
	for round := 0; ; round++ {
		cmd := run("ingest")
		var logs strings.Builder
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		if midFile < 2 && round < 30 {
			select {
			case err = <-done:
			case <-time.After(wait + time.Duration(rng.IntN(50))*time.Millisecond):
				cmd.Process.Signal(syscall.SIGKILL)
				if err = <-done; err == nil {
					break // it ended by itself just before the kill: judged below like any run
				}
				kills++
				ledger.afterKill(t)
				db := ledger.open(t)
				n, rerr := recorded(db)
				db.Close()
				if rerr != nil {
					t.Fatal(rerr)
				}
				switch {
				case n == 0:
					wait += 100 * time.Millisecond
				case n < lines:
					midFile++
				default:
					wait = max(wait-50*time.Millisecond, 20*time.Millisecond)
				}
				continue
			}
		} else {
			err = <-done
		}
		if err == nil && strings.Contains(logs.String(), name) && strings.Contains(logs.String(), "accepted") {
			return kills, midFile
		}
		if err == nil && strings.Contains(logs.String(), "no files in") && allRecorded(t, ledger, recorded, lines) {
			return kills, midFile // a killed run had applied it all and moved it
		}
		if round > 40 {
			t.Fatalf("%s was never applied; last run: %v\n%s", name, err, lastLines(logs.String(), 30))
		}
	}
}

// allRecorded reports whether the ledger holds all lines of the file.
func allRecorded(t *testing.T, ledger chaosLedger, recorded func(*state.DB) (int, error), lines int) bool {
	t.Helper()
	db := ledger.open(t)
	defer db.Close()
	n, err := recorded(db)
	if err != nil {
		t.Fatal(err)
	}
	return n >= lines
}

// getCheck reads one check, asking again while the sandbox fails or drops
// (its faults are on): a read changes nothing.
func getCheck(c *echeck.Client, id string) (*echeck.Check, error) {
	var err error
	for range 20 {
		var ck *echeck.Check
		if ck, err = c.GetCheck(context.Background(), id); err == nil {
			return ck, nil
		}
	}
	return nil, err
}
