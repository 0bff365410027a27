package main

import (
	"context"
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
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/state/postgres"
	"github.com/batchd/batchd/internal/testsshd"
)

// TestFailover is issue 19's failover chaos test: two `batchd run`
// processes share one PostgreSQL ledger (a private server), an SFTP inbox
// (a real sshd) and a sandbox that fails 5% of requests and drops 5% of
// create answers after storing the check, exact and with --quirks. While
// the leader submits a 1,000-row payroll, the test SIGKILLs it, later
// SIGSTOPs the new leader for longer than the lease and resumes it after
// the other took over, and kills once more, at random points of the run.
// Each time the other instance must lead within two lease periods. At the
// end the service holds exactly 1,000 checks, one per row and the row's
// by the identity rule, and no row is in doubt: no takeover paid twice
// and none lost a payment.
//
// Replay a failure with BATCHD_CHAOS_SEED=<seed from the log>.
func TestFailover(t *testing.T) {
	t.Parallel()
	seed := chaosSeed(t)
	pg, err := pgtest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	// The two runs mostly wait (on the rate, on leases): they run side by
	// side, in one of the suite's parallel slots.
	sideBySide(t, []string{"exact", "quirks"}, func(t *testing.T, i int) {
		runFailover(t, seed, i == 1, pg.NewDatabase(t))
	})
}

// failoverLease is the runs' state.lease_ttl, the shortest allowed, so
// that takeovers are quick; the send window is its third.
const failoverLease = 3 * time.Second

// failoverRows is the payroll's size.
const failoverRows = 1000

func runFailover(t *testing.T, seed uint64, quirks bool, dsn string) {
	rng := rand.New(rand.NewPCG(seed, 1))
	const key = "sk_test_failover_0123456789abcdef"
	args := []string{"--key", key, "--error-rate", "0.05", "--drop-rate", "0.05", "--seed", strconv.FormatUint(seed, 10)}
	if quirks {
		args = append(args, "--quirks")
	}
	url := startSandbox(t, args...)
	sshd := testsshd.Start(t)
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		os.MkdirAll(filepath.Join(sshd.Root, d), 0o755)
	}
	for name, body := range chaosFiles(failoverRows, quirks) {
		if err := os.WriteFile(filepath.Join(sshd.Root, "inbox", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	ring := pgKeyRing(t, dir) // every instance shares the ledger's key ring
	insts := make([]*failoverInstance, 2)
	for i := range insts {
		admin := freePort(t)
		os.MkdirAll(filepath.Join(dir, strconv.Itoa(i)), 0o700)
		cfg := writeConfig(t, filepath.Join(dir, strconv.Itoa(i)), fmt.Sprintf(`
state_dir: %s
shutdown_timeout: 5s
log: {format: json}
state: {backend: postgres, lease_ttl: %s, account_keys_file: %s}
backup: {schedule: ""}
api: {base_url: %s, mode: test, rate: 400, burst: 20, concurrency: 16, timeout: 2s}
sftp:
  address: %s
  user: %s
  identity_file: %s
  known_hosts: %s
  inbox: %s/inbox
  archive: %s/archive
  failed: %s/failed
  outbox: %s/outbox
ingest: {stable_for: 300ms}
submit: {resolve_after: 1s, max_attempts: 20, backoff_max: 500ms}
schedule: {timezone: UTC, ingest: "@every 1s", submit: "@every 1s", reconcile: "@every 1h"}
admin: {listen: %s}
`, filepath.Join(dir, strconv.Itoa(i), "state"), failoverLease, ring, url, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
			sshd.Root, sshd.Root, sshd.Root, sshd.Root, admin))
		insts[i] = &failoverInstance{t: t, name: fmt.Sprintf("instance %d", i), cfg: cfg, base: "http://" + admin,
			env: []string{"BATCHD_API_KEY=" + key, "BATCHD_POSTGRES_DSN=" + dsn}}
		insts[i].start()
	}
	began := time.Now()
	leader := waitLeader(t, insts, nil)
	t.Logf("%s leads", leader.name)

	// Three disruptions, each at a random point of its third of the run.
	var takeovers []time.Duration
	for n, action := range []string{"kill", "stop", "kill"} {
		at := failoverRows*n/3 + 30 + rng.IntN(failoverRows/3-60)
		eventually(t, fmt.Sprintf("%d rows submitted before the %s", at, action), 90*time.Second, func() bool {
			return submittedRows(insts) >= at
		})
		other := otherOf(insts, leader)
		start := time.Now()
		switch action {
		case "kill":
			leader.cmd.Process.Signal(syscall.SIGKILL)
			<-leader.done
			next := waitLeader(t, []*failoverInstance{other}, nil)
			takeovers = append(takeovers, time.Since(start))
			leader.start() // back as a standby
			leader = next
		case "stop":
			leader.cmd.Process.Signal(syscall.SIGSTOP)
			next := waitLeader(t, []*failoverInstance{other}, nil)
			takeovers = append(takeovers, time.Since(start))
			// Frozen until the new leader has sent rows of its own, so the
			// old one wakes into a ledger another instance has moved on.
			base := submittedRows([]*failoverInstance{next})
			eventually(t, "the new leader submitting while the old one is frozen", 30*time.Second, func() bool {
				return submittedRows([]*failoverInstance{next}) >= base+10
			})
			leader.cmd.Process.Signal(syscall.SIGCONT)
			stopped := leader
			eventually(t, stopped.name+" standing down after its pause", 2*failoverLease, func() bool {
				h, ok := stopped.health()
				return ok && h.Role != nil && !h.Role.Leading
			})
			leader = next
		}
		t.Logf("%v: %s at %d rows submitted: %s leads after %v", time.Since(began).Round(time.Millisecond), action, at, leader.name, takeovers[len(takeovers)-1].Round(time.Millisecond))
	}
	for i, d := range takeovers {
		if d > 2*failoverLease {
			t.Errorf("takeover %d took %v, more than two lease periods (%v)", i+1, d.Round(time.Millisecond), 2*failoverLease)
		}
	}

	eventually(t, "every row submitted, none in doubt", 120*time.Second, func() bool {
		var st statusDoc
		code, err := getJSON(leader.base+"/v1/status", &st)
		return err == nil && code == 200 && st.Rows["submitted"] == failoverRows && st.Rows["in_doubt"] == 0 && st.Rows["in_flight"] == 0
	})
	t.Logf("%v: every row submitted", time.Since(began).Round(time.Millisecond))

	// A one-shot submit while a daemon leads is refused, naming it: its
	// writes would be fenced, and two senders share one rate budget.
	one := exec.Command(binary, "submit", "--config", insts[0].cfg)
	one.Env = append(os.Environ(), insts[0].env...)
	out, err := one.CombinedOutput()
	if code := one.ProcessState.ExitCode(); err == nil || code != exitFailure || !strings.Contains(string(out), "another batchd instance leads the ledger") {
		t.Errorf("batchd submit while a daemon leads: exit %d, %v:\n%s", code, err, out)
	}
	for _, in := range insts {
		in.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, in := range insts {
		if err := <-in.done; err != nil {
			t.Errorf("%s after SIGTERM: %v", in.name, err)
		}
	}

	db, err := postgres.OpenLedger(context.Background(), dsn, postgres.Options{}, state.Options{AccountKeysFile: ring})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	byID := map[string]echeck.Check{}
	checks := allChecks(t, client(t, url, key))
	for _, ch := range checks {
		byID[ch.CheckID] = ch
	}
	if len(checks) != failoverRows || len(byID) != failoverRows {
		t.Fatalf("the service holds %d checks (%d distinct); want exactly %d", len(checks), len(byID), failoverRows)
	}
	same := func(r *payment.Row, ch echeck.Check) bool {
		return ch.Label == r.Label && ch.Number == r.Number && ch.Amount == r.Payment.Amount
	}
	if quirks {
		same = func(r *payment.Row, ch echeck.Check) bool {
			return r.Identity().Same(payment.Identity{Label: ch.Label, Number: ch.Number, Amount: ch.Amount})
		}
	}
	assertRowsOwnChecks(t, db, byID, failoverRows, same)
	t.Logf("takeovers: %v", takeovers)
}

// failoverInstance is one `batchd run` of the failover test, restartable.
type failoverInstance struct {
	t         *testing.T
	name, cfg string
	base      string // its admin server
	env       []string
	cmd       *exec.Cmd
	logs      *syncBuffer
	done      chan error
}

func (f *failoverInstance) start() {
	f.t.Helper()
	f.cmd = exec.Command(binary, "run", "--config", f.cfg)
	f.cmd.Env = append(os.Environ(), f.env...)
	if f.logs == nil {
		f.logs = &syncBuffer{}
	}
	f.cmd.Stdout, f.cmd.Stderr = f.logs, f.logs
	if err := f.cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.done = make(chan error, 1)
	cmd, done := f.cmd, f.done
	go func() { done <- cmd.Wait() }()
	f.t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		if f.t.Failed() {
			f.t.Logf("%s log:\n%s", f.name, lastLines(f.logs.String(), 30))
		}
	})
}

// failoverHealth is the part of /healthz the test reads.
type failoverHealth struct {
	Role *struct {
		Text    string `json:"text"`
		Leading bool   `json:"leading"`
		Epoch   uint64 `json:"epoch"`
	} `json:"role"`
}

func (f *failoverInstance) health() (failoverHealth, bool) {
	var h failoverHealth
	_, err := getJSON(f.base+"/healthz", &h)
	return h, err == nil
}

// waitLeader waits until one of insts reports leading, and returns it.
func waitLeader(t *testing.T, insts []*failoverInstance, _ *failoverInstance) *failoverInstance {
	t.Helper()
	var found *failoverInstance
	eventually(t, "an instance leading", 4*failoverLease, func() bool {
		for _, in := range insts {
			if h, ok := in.health(); ok && h.Role != nil && h.Role.Leading {
				found = in
				return true
			}
		}
		return false
	})
	return found
}

func otherOf(insts []*failoverInstance, one *failoverInstance) *failoverInstance {
	if insts[0] == one {
		return insts[1]
	}
	return insts[0]
}

// submittedRows reads the ledger's count of submitted rows from any
// instance that answers.
func submittedRows(insts []*failoverInstance) int {
	for _, in := range insts {
		var st statusDoc
		if code, err := getJSON(in.base+"/v1/status", &st); err == nil && code == 200 {
			return st.Rows["submitted"]
		}
	}
	return 0
}
