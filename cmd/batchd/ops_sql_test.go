package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/pgtest"
)

// TestMigratedDemoAnswersPsql is the README's line on the demo's ledger
// migrated to PostgreSQL: psql, asking the typed tables for the rows by
// state, prints the payment rows' states `batchd status` shows, and
// check (which also compares the tables with the keys) says OK.
func TestMigratedDemoAnswersPsql(t *testing.T) {
	_, dsn, bboltCfg, pgCfg, env := demoLedgers(t, pgServer(t))
	want := paymentStates(t, must(t, env, "status", "--config", bboltCfg, "--json"))
	must(t, env, "migrate-state", "--config", bboltCfg, "--from", "bbolt", "--to", "postgres")
	if check := must(t, env, "check", "--config", pgCfg); !strings.Contains(check, "verdict: OK") {
		t.Fatalf("check on the migrated demo:\n%s", check)
	}

	out, err := exec.Command(pgtest.Tool(t, "psql"), "-X", "-A", "-t", "-F", " ", "-d", dsn,
		"-c", "select state, count(*) from batchd_rows group by 1 order by 1").CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	t.Logf("psql:\n%s", out)
	if got := strings.Split(strings.TrimSpace(string(out)), "\n"); !slices.Equal(got, want) {
		t.Errorf("psql printed %q, want the demo's payment rows by state %q", got, want)
	}
}

// paymentStates sums `batchd status --json`'s payment batches' rows by
// state, as psql prints them: "state count", by state.
func paymentStates(t *testing.T, status string) []string {
	t.Helper()
	var st struct {
		Batches []struct {
			Kind    string         `json:"kind"`
			ByState map[string]int `json:"by_state"`
		} `json:"batches"`
	}
	if err := json.Unmarshal([]byte(status), &st); err != nil {
		t.Fatal(err)
	}
	sum := map[string]int{}
	for _, b := range st.Batches {
		if b.Kind == "payments" {
			for s, n := range b.ByState {
				sum[s] += n
			}
		}
	}
	var out []string
	for s, n := range sum {
		out = append(out, fmt.Sprintf("%s %d", s, n))
	}
	slices.Sort(out)
	return out
}
