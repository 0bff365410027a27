package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
	bolt "go.etcd.io/bbolt"
)

// Issue 10's acceptance tests: the ledger can be backed up, restored and
// checked without paying twice; a damaged or missing ledger is refused,
// never reset.

// batchdRun runs one batchd command line as a process and returns its
// exit code and output.
func batchdRun(t *testing.T, key string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "BATCHD_API_KEY="+key)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.Exited():
		code = exit.ExitCode()
	default:
		t.Fatalf("batchd %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return code, out.String(), errb.String()
}

// TestBackupDuringSubmitThenRestore: a snapshot taken by `batchd backup`
// while `batchd submit` runs in another process, restored after that
// submit finished, must not make the next submit pay any row twice: the
// service ends with exactly one check per row. Run against the exact
// sandbox and against --quirks.
func TestBackupDuringSubmitThenRestore(t *testing.T) {
	// Each has its own sandbox and ledger, mostly waiting on the
	// sandbox's latency: they run side by side.
	sideBySide(t, []string{"exact", "quirks"}, func(t *testing.T, i int) { backupDuringSubmit(t, i == 1) })
}

func backupDuringSubmit(t *testing.T, quirks bool) {
	const rows, key = 300, "sk_test_backup_0123456789abcdef"
	args := []string{"--key", key, "--latency", "40ms"}
	if quirks {
		args = append(args, "--quirks")
	}
	url := startSandbox(t, args...)
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	loadRows(t, stateDir, rows)
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
log: {format: json}
api: {base_url: %s, mode: test, rate: 1000, burst: 50, concurrency: 2, timeout: 5s}
submit: {resolve_after: 1s, max_attempts: 5, backoff_max: 200ms}
`, stateDir, url))
	api := client(t, url, key)

	sub := exec.Command(binary, "submit", "--config", cfg)
	sub.Env = append(os.Environ(), "BATCHD_API_KEY="+key)
	logs := &syncBuffer{}
	sub.Stdout, sub.Stderr = logs, logs
	if err := sub.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sub.Wait() }()
	t.Cleanup(func() { sub.Process.Kill() })
	deadline := time.Now().Add(60 * time.Second)
	for n := 0; n < rows/10; n = len(allChecks(t, api)) {
		select {
		case err := <-done:
			t.Fatalf("submit ended (%v) before the backup could be taken mid-run; slow the sandbox down:\n%s", err, lastLines(logs.String(), 20))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("submit made only %d checks in 60s", n)
		}
		time.Sleep(50 * time.Millisecond)
	}

	snap := filepath.Join(dir, "backups", "mid-submit.db")
	code, out, errOut := batchdRun(t, key, "backup", "--config", cfg, "--to", snap)
	if code != exitOK || !strings.Contains(out, "from batchd process") || !strings.Contains(out, "checked: OK") {
		t.Fatalf("batchd backup during submit: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("backup: %s", strings.ReplaceAll(strings.TrimSpace(out), "\n", " | "))
	var snapRep struct {
		ByState    map[string]int `json:"by_state"`
		SnapshotAt time.Time      `json:"snapshot_at"`
		Faults     []state.Fault  `json:"faults"`
	}
	code, out, errOut = batchdRun(t, key, "check", "--file", snap, "--json")
	if code != exitOK || json.Unmarshal([]byte(out), &snapRep) != nil || snapRep.SnapshotAt.IsZero() {
		t.Fatalf("batchd check --file snapshot: exit %d\n%s%s", code, out, errOut)
	}
	if snapRep.ByState["submitted"] == 0 || snapRep.ByState["submitted"] == rows {
		t.Fatalf("the snapshot was not taken mid-run: %v", snapRep.ByState)
	}
	t.Logf("the snapshot holds rows %v", snapRep.ByState)

	if err := <-done; err != nil {
		t.Fatalf("submit: %v\n%s", err, lastLines(logs.String(), 20))
	}
	if n := len(allChecks(t, api)); n != rows {
		t.Fatalf("after the first submit the service holds %d checks, want %d", n, rows)
	}

	code, out, errOut = batchdRun(t, key, "restore", "--config", cfg, "--from", snap)
	if code != exitOK || !strings.Contains(out, "put in doubt") || !strings.Contains(out, ".replaced-") {
		t.Fatalf("batchd restore: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("restore: %s", strings.ReplaceAll(strings.TrimSpace(out), "\n", " | "))
	if _, out, _ := batchdRun(t, key, "status", "--config", cfg); !strings.Contains(out, "restored at") {
		t.Fatalf("batchd status does not show the restore:\n%s", out)
	}

	code, out, errOut = submitProcess(t, cfg, key)
	if code != exitOK {
		t.Fatalf("submit after the restore: exit %d\n%s%s", code, out, lastLines(errOut, 20))
	}
	t.Logf("submit after the restore: %s", strings.TrimSpace(out))
	same := func(r *payment.Row, ch echeck.Check) bool {
		return ch.Label == r.Label && ch.Number == r.Number && ch.Amount == r.Payment.Amount
	}
	if quirks {
		same = func(r *payment.Row, ch echeck.Check) bool {
			return r.Identity().Same(payment.Identity{Label: ch.Label, Number: ch.Number, Amount: ch.Amount})
		}
	}
	assertOneCheckPerRow(t, stateDir, api, rows, same)

	// A reconcile over the snapshot's date clears the mark.
	if code, out, errOut := batchdRun(t, key, "reconcile", "--config", cfg); code != exitOK {
		t.Fatalf("reconcile: exit %d\n%s%s", code, out, lastLines(errOut, 20))
	}
	if _, out, _ := batchdRun(t, key, "status", "--config", cfg); strings.Contains(out, "restored") {
		t.Fatalf("the restored mark outlived a reconcile:\n%s", out)
	}
}

// damagedCopies makes, beside a good ledger in dir/good, one state
// directory per kind of damage, each with the good ledger's marker:
// empty, truncated, a flipped byte (in the flags of the rows bucket's
// root page), and a marker without a ledger.
func damagedCopies(t *testing.T, dir string) (good string, damaged map[string]string) {
	t.Helper()
	good = filepath.Join(dir, "good")
	loadRows(t, good, 200)
	ledger := filepath.Join(good, state.FileName)
	raw, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	marker, err := os.ReadFile(filepath.Join(good, state.MarkerName))
	if err != nil {
		t.Fatal(err)
	}
	b, err := bolt.Open(ledger, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var root int
	b.View(func(tx *bolt.Tx) error { root = int(tx.Bucket([]byte("rows")).Root()); return nil })
	ps := b.Info().PageSize
	b.Close()
	flipped := append([]byte(nil), raw...)
	flipped[root*ps+8] ^= 0xff

	damaged = map[string]string{}
	for name, content := range map[string][]byte{
		"empty": {}, "truncated": raw[:len(raw)/2], "flipped": flipped, "missing": nil,
	} {
		sd := filepath.Join(dir, name)
		os.MkdirAll(sd, 0o700)
		os.WriteFile(filepath.Join(sd, state.MarkerName), marker, 0o600)
		if content != nil {
			os.WriteFile(filepath.Join(sd, state.FileName), content, 0o600)
		}
		damaged[name] = sd
	}
	return good, damaged
}

// TestDamagedLedgerIsRefusedNotReset: on an empty, truncated or
// byte-flipped ledger, or a marker without one, every command exits 1
// with a message naming the file, pointing to check and restore, and
// changes nothing; none panics.
func TestDamagedLedgerIsRefusedNotReset(t *testing.T) {
	const key = "sk_test_damaged_0123456789abcdef"
	dir := t.TempDir()
	good, damaged := damagedCopies(t, dir)
	config := func(stateDir string) string {
		return writeConfig(t, stateDir+"-cfg", fmt.Sprintf(`
state_dir: %s
log: {format: json}
api: {base_url: "http://127.0.0.1:1", mode: test}
admin: {listen: ""}
`, stateDir))
	}
	for _, d := range []string{good + "-cfg"} {
		os.MkdirAll(d, 0o700)
	}
	code, out, errOut := batchdRun(t, key, "check", "--config", config(good))
	if code != exitOK || !strings.Contains(out, "verdict: OK") || !strings.Contains(out, "200 rows") {
		t.Fatalf("check of a good ledger: exit %d\n%s%s", code, out, errOut)
	}

	for name, sd := range damaged {
		t.Run(name, func(t *testing.T) {
			os.MkdirAll(sd+"-cfg", 0o700)
			cfg := config(sd)
			ledger := filepath.Join(sd, state.FileName)
			before, _ := os.ReadFile(ledger)
			for _, cmd := range [][]string{
				{"status"}, {"submit"}, {"reconcile"}, {"ingest"}, {"check"}, {"backup", "--to", filepath.Join(sd+"-cfg", "b.db")}, {"run"},
				{"check", "--file", ledger},
			} {
				if name == "missing" && len(cmd) == 3 && cmd[1] == "--file" {
					continue
				}
				code, out, errOut := batchdRun(t, key, append(cmd, "--config", cfg)...)
				all := out + errOut
				if code != exitFailure || strings.Contains(all, "panic:") || strings.Contains(all, "goroutine ") {
					t.Fatalf("batchd %s on a %s ledger: exit %d (want 1, no panic)\n%s", cmd[0], name, code, all)
				}
				if !strings.Contains(all, ledger) {
					t.Fatalf("batchd %s on a %s ledger does not name the file:\n%s", cmd[0], name, all)
				}
				if cmd[0] != "check" && !(strings.Contains(all, "batchd check") && strings.Contains(all, "batchd restore")) {
					t.Fatalf("batchd %s on a %s ledger does not point to check and restore:\n%s", cmd[0], name, all)
				}
				if cmd[0] == "check" && !strings.Contains(out, "verdict: DAMAGED") {
					t.Fatalf("batchd check on a %s ledger:\n%s", name, all)
				}
				var plain []string
				for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
					if !strings.HasPrefix(l, "{") {
						plain = append(plain, l)
					}
				}
				if cmd[0] != "check" {
					t.Logf("%s: %s", cmd[0], strings.Join(plain, " | "))
				}
			}
			after, err := os.ReadFile(ledger)
			if string(after) != string(before) || (before == nil) != errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the %s ledger was changed or created", name)
			}
		})
	}
}

// TestCheckNeverPanicsOnFlippedBytes flips bytes across every page of a
// ledger and cuts it at many lengths: `batchd check --file` answers each
// with exit 0 (the byte was not read) or 1 and a verdict, never a panic.
// It runs the production binary, built without the race detector's
// pointer checks, which end a process on bbolt's reads of a damaged page.
func TestCheckNeverPanicsOnFlippedBytes(t *testing.T) {
	dir := t.TempDir()
	loadRows(t, filepath.Join(dir, "good"), 60)
	raw, err := os.ReadFile(filepath.Join(dir, "good", state.FileName))
	if err != nil {
		t.Fatal(err)
	}
	const ps = 4096
	var copies [][]byte
	for pg := 2; pg < len(raw)/ps; pg++ {
		for _, off := range []int{0, 8, 10, 16, 24, 40} {
			c := append([]byte(nil), raw...)
			c[pg*ps+off] ^= 0xff
			copies = append(copies, c)
		}
	}
	for _, n := range []int{1, 15, ps + 80, 2 * ps, len(raw) - ps, len(raw) - 1} {
		copies = append(copies, raw[:n])
	}
	bad := 0
	p := filepath.Join(dir, "copy.db")
	for i, c := range copies {
		os.WriteFile(p, c, 0o600)
		code, out, errOut := batchdRun(t, "", "check", "--file", p)
		all := out + errOut
		if (code != exitOK && code != exitFailure) || strings.Contains(all, "panic:") || strings.Contains(all, "goroutine ") {
			t.Fatalf("copy %d: batchd check: exit %d\n%s", i, code, all)
		}
		if code == exitFailure {
			bad++
			if !strings.Contains(out, "verdict: DAMAGED") {
				t.Fatalf("copy %d: exit 1 without a verdict:\n%s", i, all)
			}
		}
	}
	t.Logf("%d damaged copies, %d found damaged, none panicked", len(copies), bad)
}

// TestInitAndMarker: init creates the ledger and its marker once; a
// marker without a ledger makes init (and every other command) refuse.
func TestInitAndMarker(t *testing.T) {
	env := map[string]string{"BATCHD_API_KEY": "sk_test_x1234567890"}
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	cfg := writeConfig(t, dir, fmt.Sprintf("state_dir: %s\napi: {base_url: http://127.0.0.1:1}\n", stateDir))
	if code, _, errOut := runMain(t, env, "check", "--config", cfg); code != exitFailure || !strings.Contains(errOut, "batchd init") {
		t.Fatalf("check before init: exit %d %s", code, errOut)
	}
	code, out, errOut := runMain(t, env, "init", "--config", cfg)
	if code != exitOK || !strings.Contains(out, "created the ledger") {
		t.Fatalf("init: exit %d %s %s", code, out, errOut)
	}
	if code, out, _ := runMain(t, env, "init", "--config", cfg); code != exitOK || !strings.Contains(out, "exists already") {
		t.Fatalf("second init: exit %d %s", code, out)
	}
	if code, out, _ := runMain(t, env, "check", "--config", cfg); code != exitOK || !strings.Contains(out, "verdict: OK") {
		t.Fatalf("check after init: exit %d %s", code, out)
	}
	os.Remove(filepath.Join(stateDir, state.FileName))
	for _, c := range []string{"init", "status", "check"} {
		code, out, errOut := runMain(t, env, c, "--config", cfg)
		if code != exitFailure || !strings.Contains(out+errOut, "is missing") {
			t.Fatalf("%s with a marker and no ledger: exit %d %s %s", c, code, out, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(stateDir, state.FileName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a new ledger was made where one was lost")
	}
}

// TestDaemonBacksUpAndShowsARestore: `batchd run` takes snapshots on
// backup.schedule and keeps backup.keep of them, reports the backup job
// in its metrics, serves `batchd backup` through its socket and refuses
// `batchd restore` while it runs; after a restore it shows the restored
// mark in /healthz (as a note, not a failure) and /v1/status, until a
// reconcile clears it.
func TestDaemonBacksUpAndShowsARestore(t *testing.T) {
	const key = "sk_test_daemonbackup_0123456789abcdef"
	url := startSandbox(t, "--key", key)
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	backups := filepath.Join(dir, "backups")
	loadRows(t, stateDir, 20)
	admin := freePort(t)
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
shutdown_timeout: 10s
log: {format: json}
api: {base_url: %s, mode: test, rate: 100, burst: 10, concurrency: 4, timeout: 5s}
submit: {resolve_after: 1s}
schedule: {timezone: UTC, ingest: "@every 1h", submit: "@every 1h", reconcile: "@every 1h"}
backup: {schedule: "@every 1s", dir: %s, keep: 2}
admin: {listen: %s}
`, stateDir, url, backups, admin))
	base := "http://" + admin
	d := startDaemon(t, cfg, key)
	snaps := func() []string {
		m, _ := filepath.Glob(filepath.Join(backups, "batchd-*.db"))
		return m
	}
	eventually(t, "three scheduled backups", 30*time.Second, func() bool {
		return strings.Count(d.logs.String(), `"job":"backup"`) > 0 &&
			strings.Count(d.logs.String(), `snapshot `) >= 3
	})
	eventually(t, "backup.keep applied", 10*time.Second, func() bool { return len(snaps()) == 2 })
	t.Logf("a backup run: %s", lastLines(grepLines(d.logs.String(), `"job":"backup"`), 1))
	metrics := getText(base + "/metrics")
	if !strings.Contains(metrics, `batchd_job_last_success_timestamp_seconds{job="backup"}`) ||
		strings.Contains(metrics, `batchd_job_last_success_timestamp_seconds{job="backup"} 0`+"\n") {
		t.Fatalf("/metrics lacks the backup job's last success:\n%s", grepLines(metrics, "backup"))
	}
	manual := filepath.Join(dir, "manual.db")
	if code, out, errOut := batchdRun(t, key, "backup", "--config", cfg, "--to", manual); code != exitOK || !strings.Contains(out, "from batchd process") {
		t.Fatalf("batchd backup while batchd run holds the ledger: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := batchdRun(t, key, "check", "--config", cfg); code != exitOK || !strings.Contains(out, "checked through a snapshot") {
		t.Fatalf("batchd check while batchd run holds the ledger: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := batchdRun(t, key, "restore", "--config", cfg, "--from", manual); code != exitFailure || !strings.Contains(errOut, "in use by a running batchd") {
		t.Fatalf("batchd restore while batchd run holds the ledger: exit %d\n%s%s", code, out, errOut)
	}
	d.cmd.Process.Signal(os.Interrupt)
	if err := <-d.done; err != nil {
		t.Fatalf("stop: %v", err)
	}

	if code, out, errOut := batchdRun(t, key, "restore", "--config", cfg, "--from", manual); code != exitOK {
		t.Fatalf("restore: exit %d\n%s%s", code, out, errOut)
	}
	d = startDaemon(t, cfg, key)
	var hz struct {
		Notes struct {
			Restored *state.RestoreMark `json:"restored"`
		} `json:"notes"`
	}
	eventually(t, "the restored mark in /healthz", 20*time.Second, func() bool {
		_, err := getJSON(base+"/healthz", &hz)
		return err == nil && hz.Notes.Restored != nil
	})
	var st struct {
		Restored *state.RestoreMark `json:"restored"`
	}
	if code, err := getJSON(base+"/v1/status", &st); code != 200 || err != nil || st.Restored == nil || st.Restored.RowsInDoubt != 20 {
		t.Fatalf("/v1/status after a restore: %d %v %+v", code, err, st.Restored)
	}
	resp, err := http.Post(base+"/v1/jobs/reconcile", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("trigger reconcile: %s", resp.Status)
	}
	eventually(t, "the restored mark cleared by the reconcile", 30*time.Second, func() bool {
		hz.Notes.Restored = nil
		_, err := getJSON(base+"/healthz", &hz)
		return err == nil && hz.Notes.Restored == nil
	})
	d.cmd.Process.Signal(os.Interrupt)
	if err := <-d.done; err != nil {
		t.Fatalf("stop: %v", err)
	}
}
