package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/pgtest"
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
	seed := chaosSeed(t)
	for _, backend := range []string{"bbolt", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var pg *pgtest.Server
			if backend == "postgres" {
				pg = pgServer(t)
			}
			var wg sync.WaitGroup
			for _, quirks := range []bool{false, true} {
				wg.Go(func() {
					t.Run(map[bool]string{false: "exact", true: "quirks"}[quirks], func(t *testing.T) {
						ledger := chaosLedger{stateDir: filepath.Join(t.TempDir(), "state")}
						if pg != nil {
							ledger.dsn = pg.NewDatabase(t)
						}
						cancelChaos(t, seed, ledger, quirks)
					})
				})
			}
			wg.Wait()
		})
	}
}

func cancelChaos(t *testing.T, seed uint64, ledger chaosLedger, quirks bool) {
	const (
		key                      = "sk_test_cancel_0123456789abcdef"
		rows, deposited, untouch = 30, 8, 2
	)
	rng := rand.New(rand.NewPCG(seed, 1))
	// A third of the answers lost (voids included), a tenth of the
	// requests failed before they act; the controls (deposit) are exempt.
	// Each request takes 25ms, so that applying the file takes a second
	// or two and the kills have lines to land between.
	args := []string{"--key", key, "--seed", strconv.FormatUint(seed, 10), "--drop-rate", "0.3", "--error-rate", "0.1", "--latency", "25ms"}
	if quirks {
		args = append(args, "--quirks")
	}
	url := startSandbox(t, args...)
	var file strings.Builder
	file.WriteString("label,number,amount,memo,name,email,bank_routing,bank_account\n")
	for i := range rows {
		fmt.Fprintf(&file, "cxl,%04d,%d.%02d,inv %d,Payee %d,p@example.com,999900001,11110000%02d\n", 100+i, 10+i, i, i, i, 16)
	}
	ingestInto(t, ledger, map[string]string{"week.csv": file.String()})
	sshd := testsshd.Start(t)
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
	run := func(cmdName string) *exec.Cmd {
		cmd := exec.Command(binary, cmdName, "--config", cfg)
		cmd.Env = append(append(os.Environ(), "BATCHD_API_KEY="+key), ledger.env()...)
		return cmd
	}
	for round := 0; ; round++ { // a run may leave rows in doubt (exit 1) for the next
		out, err := run("submit").CombinedOutput()
		if err == nil {
			break
		}
		if round > 10 {
			t.Fatalf("submit: %v\n%s", err, lastLines(string(out), 20))
		}
	}
	db := ledger.open(t)
	var all []*payment.Row
	bs, _ := db.Batches()
	db.Rows(bs[0].ID, func(r *payment.Row) (bool, error) { all = append(all, r); return true, nil })
	db.Close()
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
	for p, b := range map[string]string{"cancel.csv": cancels, "cancel.csv.done": ""} {
		if err := os.WriteFile(filepath.Join(sshd.Root, "inbox", p), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sha := fmt.Sprintf("%x", sha256.Sum256([]byte(cancels)))
	// Each kill aims at the file's lines: a kill before any line was
	// recorded waits longer next time, one after all of them shorter, so
	// that the kills land while lines are being voided whatever the
	// machine's speed.
	kills, midFile, wait := 0, 0, 150*time.Millisecond
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
				<-done
				kills++
				ledger.afterKill(t)
				switch n := recordedLines(t, ledger, sha); {
				case n == 0:
					wait += 100 * time.Millisecond
				case n < rows-untouch:
					midFile++
				default:
					wait = max(wait-50*time.Millisecond, 20*time.Millisecond)
				}
				continue
			}
		} else {
			err = <-done
		}
		if err == nil && strings.Contains(logs.String(), "cancel.csv") && strings.Contains(logs.String(), "accepted") {
			break
		}
		if round > 40 {
			t.Fatalf("the cancel file was never applied; last run: %v\n%s", err, lastLines(logs.String(), 30))
		}
	}
	matches, _ := filepath.Glob(filepath.Join(sshd.Root, "outbox", "cancel*.results.csv"))
	if len(matches) != 1 {
		t.Fatalf("results reports %v", matches)
	}
	recs := readReport(t, matches[0])
	got := map[string]string{}
	for _, rec := range recs[1:] {
		got[rec[1]] = rec[4]
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

// recordedLines counts the cancel lines of the file whose content hash is
// sha that the ledger holds, settled or not.
func recordedLines(t *testing.T, ledger chaosLedger, sha string) int {
	t.Helper()
	db := ledger.open(t)
	defer db.Close()
	lines, err := db.Cancels(sha)
	if err != nil {
		t.Fatal(err)
	}
	return len(lines)
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
