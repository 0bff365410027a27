package main

import (
	"context"
	"errors"
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

	"github.com/batchd/batchd/internal/ach"
	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/testsshd"
)

// TestOnboardingChaos: `batchd submit` on a funding-source file of 60 rows
// is SIGKILLed again and again (the sandbox slow enough that most kills
// land with a request out), while the sandbox also drops answers and
// fails requests, exact and quirky. When a run finally finishes, every
// row has exactly one funding source and every email exactly one
// customer at the service.
//
// On PostgreSQL (the exact sandbox only: each kill costs a lease) the
// killed command's lease is held until it runs out: the next command
// refuses to run until then, and the one that runs takes over, putting
// the rows the killed one left in flight in doubt.
func TestOnboardingChaos(t *testing.T) {
	// Each variant has its own sandbox and ledger and mostly waits on the
	// sandbox's latency and, on PostgreSQL, on leases: they run side by side.
	sideBySide(t, []string{"exact", "quirks", "postgres"}, func(t *testing.T, i int) {
		switch i {
		case 0, 1:
			onboardingChaos(t, ledgertest.Bbolt, i == 1, 5)
		default:
			onboardingChaos(t, ledgertest.Postgres, false, 3)
		}
	})
}

func onboardingChaos(t *testing.T, backend string, quirks bool, minKills int) {
	const key, rows = "sk_test_onchaos_0123456789abcdef", 60
	args := []string{"--key", key, "--latency", "100ms", "--drop-rate", "0.1", "--error-rate", "0.05", "--seed", "5"}
	if quirks {
		args = append(args, "--quirks")
	}
	url := startSandbox(t, args...)
	var b strings.Builder
	b.WriteString("first_name,last_name,email,routing_number,account_number,account_type\n")
	for i := range rows {
		// Three accounts per customer: rows of one customer wait for
		// each other while one is in doubt.
		fmt.Fprintf(&b, "Cust,No %d,cust%02d@example.com,011000015,%d,checking\n", i/3, i/3, 5550000+i)
	}
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	ledger := ledgerYAML(t, backend, dir)
	if backend == ledgertest.Bbolt {
		ingestCSV(t, stateDir, map[string]string{"customers.csv": b.String()})
	} else {
		ingestSources(t, stateDir, ledger, "customers.csv", b.String())
	}
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
log: {format: json}
api: {base_url: %s, mode: test, rate: 200, burst: 20, timeout: 2s}
submit: {resolve_after: 1ms, max_attempts: 20, backoff_max: 200ms}
%s`, stateDir, url, ledger))

	rng := rand.New(rand.NewPCG(5, 0))
	kills, midRequest := 0, 0
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
		var err error
		if kills < minKills {
			select {
			case err = <-done:
			case <-time.After(time.Duration(150+rng.IntN(400)) * time.Millisecond):
				cmd.Process.Signal(syscall.SIGKILL)
				<-done
				kills++
				if sourcesInFlight(t, cfg) > 0 {
					midRequest++
				}
				awaitNoLeader(t, cfg)
				continue
			}
		} else {
			err = <-done
		}
		if err == nil {
			break
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitFailure {
			t.Fatalf("round %d: submit ended with %v, want exit 0, or 1 for work left undone:\n%s", round, err, lastLines(logs.String(), 30))
		}
		if round > 40 {
			t.Fatalf("submit never finished:\n%s", lastLines(logs.String(), 30))
		}
	}
	if kills < minKills || midRequest == 0 {
		t.Fatalf("%d SIGKILLs, %d with a request out: the test proves too little", kills, midRequest)
	}

	api, err := ach.New(apiwire.Options{BaseURL: url, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	users := allUsers(t, api)
	emails := map[string]int{}
	total := 0
	for _, u := range users {
		emails[funding.EmailKey(u.Email)]++
		var list []ach.FundingSource
		achRead(t, func() (err error) { list, err = api.ListFundingSources(context.Background(), u.ID); return err })
		seen := map[string]bool{}
		for _, s := range list {
			if seen[s.Routing+s.Last4] {
				t.Errorf("customer %s has account …%s twice", u.Email, s.Last4)
			}
			seen[s.Routing+s.Last4] = true
			total++
		}
	}
	for e, n := range emails {
		if n != 1 {
			t.Errorf("%d customers with email %s", n, e)
		}
	}
	if len(emails) != rows/3 || total != rows {
		t.Fatalf("the service holds %d customers and %d sources, want %d and %d", len(emails), total, rows/3, rows)
	}
	t.Logf("%d SIGKILLs (%d with a request out); %d customers, %d sources, none twice", kills, midRequest, len(emails), total)
}

// sourcesInFlight opens the ledger of the configuration file cfg (no
// batchd running) and counts the funding rows in flight.
func sourcesInFlight(t *testing.T, cfg string) int {
	t.Helper()
	db := openLedger(t, cfg)
	defer db.Close()
	n := 0
	err := db.OpenSourceRows(func(r *funding.Row) (bool, error) {
		if r.State == payment.InFlight {
			n++
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// awaitNoLeader waits until no process holds the lease of the ledger of
// the configuration file cfg: a killed command's lease runs out on its
// own (state.lease_ttl), and until it does the next command refuses to
// run (jobs.ErrNotLeader). A file ledger's lock goes with its process.
func awaitNoLeader(t *testing.T, cfg string) {
	t.Helper()
	db := openLedger(t, cfg)
	defer db.Close()
	eventually(t, "the killed command's lease run out", 20*time.Second, func() bool {
		li, err := db.Leader(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return !li.Shared || li.Holder == ""
	})
}

// ingestSources ingests one funding-source file into the ledger the
// configuration lines ledger name (ledgerYAML), through `batchd ingest`
// over a private sshd, and checks every row was accepted.
func ingestSources(t *testing.T, stateDir, ledger, name, body string) {
	t.Helper()
	sshd := testsshd.Start(t)
	for p, b := range map[string]string{name: body, name + ".done": ""} {
		if err := os.WriteFile(filepath.Join(sshd.Root, "inbox", p), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := writeConfig(t, t.TempDir(), fmt.Sprintf(`
state_dir: %s
api: {base_url: "http://127.0.0.1:1", mode: test}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s,
       inbox: %s/inbox, archive: %s/archive, failed: %s/failed, outbox: %s/outbox}
ingest: {done_marker: true, stable_for: 0s}
%s`, stateDir, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
		sshd.Root, sshd.Root, sshd.Root, sshd.Root, ledger))
	code, out, errOut := runBatchd(t, "sk_test_ingest_0123456789abcdef", "ingest", "--config", cfg)
	rows, accepted := strconv.Itoa(strings.Count(body, "\n")-1), false
	for _, line := range strings.Split(out, "\n") { // FILE ROWS VALID REJECTED OUTCOME
		f := strings.Fields(line)
		accepted = accepted || (len(f) >= 5 && f[0] == name && f[2] == rows && f[4] == "accepted")
	}
	if code != 0 || !accepted {
		t.Fatalf("batchd ingest (want %s rows accepted): exit %d\nstdout:\n%s\nstderr:\n%s", rows, code, out, errOut)
	}
}
