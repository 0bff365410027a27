package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// TestChaosSubmitSurvivesKills is issue 4's chaos test: 2,000 rows, a
// sandbox that fails 10% of requests, drops 5% of create answers after
// storing the check, and rate-limits below api.rate; `batchd submit` runs
// as a separate process and is SIGKILLed at random moments at least ten
// times. At the end the service holds exactly one check per row.
//
// Replay a failure with BATCHD_CHAOS_SEED=<seed from the log>.
func TestChaosSubmitSurvivesKills(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("BATCHD_CHAOS_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("chaos seed %d (replay with BATCHD_CHAOS_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	const rows, key = 2000, "sk_test_chaos_0123456789abcdef"

	url := startSandbox(t, "--key", key, "--error-rate", "0.1", "--drop-rate", "0.05",
		"--rate-limit", "150", "--seed", strconv.FormatUint(seed, 10))
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	loadRows(t, stateDir, rows)
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
log: {format: json}
api:
  base_url: %s
  mode: test
  rate: 200
  burst: 20
  concurrency: 16
  timeout: 2s
submit:
  resolve_after: 1s
  max_attempts: 20
  backoff_max: 500ms
  progress_interval: 1s
`, stateDir, url))

	kills := 0
	for round := 0; ; round++ {
		cmd := exec.Command(binary, "submit", "--config", cfg)
		cmd.Env = append(os.Environ(), "BATCHD_API_KEY="+key)
		var logs strings.Builder
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if kills < 10 || (kills < 15 && rng.IntN(2) == 0) {
			wait := time.Duration(150+rng.IntN(900)) * time.Millisecond
			select {
			case err := <-done:
				t.Logf("round %d ended by itself before its kill (%v)", round, err)
			case <-time.After(wait):
				cmd.Process.Signal(syscall.SIGKILL)
				<-done
				kills++
				t.Logf("round %d: SIGKILL after %v", round, wait)
			}
			continue
		}
		err := <-done
		if err == nil {
			break
		}
		if round > 60 {
			t.Fatalf("submit never finished; last run: %v\n%s", err, lastLines(logs.String(), 40))
		}
	}
	if kills < 10 {
		t.Fatalf("only %d kills landed mid-run; the test proves too little", kills)
	}
	assertOneCheckPerRow(t, stateDir, client(t, url, key), rows)
}

// loadRows puts n valid rows into a new ledger in stateDir.
func loadRows(t *testing.T, stateDir string, n int) {
	t.Helper()
	db, err := state.Open(stateDir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := db.BeginBatch(state.FileMeta{Name: "chaos.csv", SHA256: "chaos"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		p := payment.Payment{Amount: money.Cents(100 + i), Memo: "chaos", Name: "Payer", Email: "p@example.com",
			BankRouting: "999900001", BankAccount: fmt.Sprintf("11110000%02d", i%22+1)}
		if err := l.Add(i+2, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Commit(n, 0); err != nil {
		t.Fatal(err)
	}
}

// assertOneCheckPerRow checks exactly-once: the service holds exactly n
// checks, each row maps to a distinct one whose label, number and amount
// match it, and no row is in doubt or pending.
func assertOneCheckPerRow(t *testing.T, stateDir string, c *echeck.Client, n int) {
	t.Helper()
	checks := allChecks(t, c)
	byID := map[string]echeck.Check{}
	for _, ch := range checks {
		byID[ch.CheckID] = ch
	}
	if len(checks) != n || len(byID) != n {
		t.Fatalf("the service holds %d checks (%d distinct); want exactly %d", len(checks), len(byID), n)
	}
	db, err := state.Open(stateDir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bs, _ := db.Batches()
	seen := map[string]bool{}
	rowsSeen := 0
	for _, b := range bs {
		db.Rows(b.ID, func(r *state.Row) (bool, error) {
			rowsSeen++
			ch, ok := byID[r.CheckID]
			switch {
			case r.State != state.Submitted:
				t.Fatalf("row %s is %s", r.Key, r.State)
			case !ok || seen[r.CheckID]:
				t.Fatalf("row %s: check %q missing or shared", r.Key, r.CheckID)
			case ch.Label != r.Label || ch.Number != r.Number || ch.Amount != r.Payment.Amount:
				t.Fatalf("row %s: check %s has %q/%q/%s, row %q/%q/%s", r.Key, ch.CheckID,
					ch.Label, ch.Number, ch.Amount, r.Label, r.Number, r.Payment.Amount)
			}
			seen[r.CheckID] = true
			return true, nil
		})
	}
	if rowsSeen != n {
		t.Fatalf("ledger has %d rows, want %d", rowsSeen, n)
	}
}
