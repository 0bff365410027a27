package main

import (
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

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/testsshd"
)

// TestChaos is issue 4's chaos test, run twice (issue 9): `batchd submit`
// runs as a separate process against a sandbox process that fails 10% of
// requests, drops 5% of create answers after storing the check, and
// rate-limits below api.rate, and it is SIGKILLed at random moments at
// least chaosMinKills times. At the end the service holds exactly one
// check per row, matched to its row by the identity rule.
//
//   - exact: `batchd sandbox`, which echoes every value as it was sent;
//     a row and its check must carry equal label, number and amount.
//   - quirks: `batchd sandbox --quirks`, which keeps numbers without
//     their leading zeros, filters the list by label as a case-insensitive
//     substring and echoes amounts as floats; a row and its check must be
//     the same by payment.Identity.Same (and their numbers must differ as
//     text, or the quirks were not in play).
//
// The rows come from two CSV files ingested by `batchd ingest` (see
// chaosFiles): the second file repeats the first's numbers, amounts and
// accounts under a longer label that contains the first's, so that only
// the label tells a check of one file from the same check of the other.
//
// Both run on each backend of the ledger (issue 27): bbolt, and
// PostgreSQL, where each one-shot submit takes the leader lease (a
// SIGKILLed one leaves it held until it runs out) and the next puts the
// rows its predecessor left in flight in doubt through the takeover. The
// two backends run side by side, each mostly waiting on the sandbox's
// rate and on leases.
//
// Replay a failure with BATCHD_CHAOS_SEED=<seed from the log> (every run
// uses the seed; -run 'TestChaos/postgres/quirks' replays one).
func TestChaos(t *testing.T) {
	seed := chaosSeed(t)
	for _, backend := range []string{"bbolt", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var pg *pgtest.Server
			if backend == "postgres" {
				pg = pgServer(t)
			}
			// Each variant mostly waits (on the sandbox's rate; on
			// PostgreSQL also on the killed command's lease): the two run
			// side by side, in one of the suite's parallel slots.
			sideBySide(t, []string{"exact", "quirks"}, func(t *testing.T, i int) {
				run := chaosRun{quirks: i == 1, rows: chaosRows, minKills: chaosMinKills}
				if pg != nil {
					run.dsn = pg.NewDatabase(t)
				}
				runChaos(t, seed, run)
			})
		})
	}
}

// TestChaosClocks is TestChaos (issue 17) against a service whose clock
// is 1 and 3 days ahead of batchd's and behind it (`batchd sandbox
// --date +N`), dating its checks in UTC or US Eastern time (`--tz`), exact
// and quirky: rows in doubt are looked up on the service's dates, never
// on batchd's clock agreeing, and every run ends with exactly one check
// per row. Each variant is smaller than TestChaos's runs (the suite's time
// budget) but still kills submit mid-request again and again.
func TestChaosClocks(t *testing.T) {
	seed := chaosSeed(t)
	variants := []chaosRun{
		{name: "ahead1d-eastern-exact", skewDays: 1, tz: "America/New_York"},
		{name: "behind1d-utc-quirks", skewDays: -1, quirks: true},
		{name: "ahead3d-utc-exact", skewDays: 3},
		{name: "behind3d-eastern-quirks", skewDays: -3, tz: "America/New_York", quirks: true},
	}
	names := make([]string, len(variants))
	for i, v := range variants {
		names[i] = v.name
	}
	// Each variant has its own sandbox and ledger and mostly waits on the
	// sandbox's rate: they run side by side.
	sideBySide(t, names, func(t *testing.T, i int) {
		v := variants[i]
		v.rows, v.minKills = 240, 4
		runChaos(t, seed, v)
	})
}

// chaosSeed is the seed of a chaos test's faults and kills: random (not
// the clock's reading), so that every run explores new interleavings, or
// $BATCHD_CHAOS_SEED to replay the one a failed run logged. It is below
// 2^63, as `batchd sandbox --seed` takes an int64.
func chaosSeed(t *testing.T) uint64 {
	t.Helper()
	seed := rand.Uint64() >> 1 // the sandbox's --seed is an int64
	if s := os.Getenv("BATCHD_CHAOS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 63); err != nil {
			t.Fatalf("BATCHD_CHAOS_SEED=%q: %v", s, err)
		}
	}
	t.Logf("chaos seed %d (replay with BATCHD_CHAOS_SEED=%d)", seed, seed)
	return seed
}

// chaosRows is the rows of one chaos run (two files of half each), and
// chaosMinKills the SIGKILLs that must land while submit is working.
const (
	chaosRows     = 1000
	chaosMinKills = 8
)

// chaosRun is one chaos run's set-up: the sandbox's mode, its clock's
// distance in days from batchd's (--date +N/-N) and time zone (--tz,
// UTC when empty), the run's size, and the ledger: bbolt, or the
// PostgreSQL database dsn names.
type chaosRun struct {
	name           string
	quirks         bool
	skewDays       int
	tz             string
	rows, minKills int
	dsn            string
}

func runChaos(t *testing.T, seed uint64, run chaosRun) {
	quirks, chaosRows, chaosMinKills := run.quirks, run.rows, run.minKills
	t.Logf("chaos seed %d, %+v (replay with BATCHD_CHAOS_SEED=%d)", seed, run, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	const key = "sk_test_chaos_0123456789abcdef"
	args := []string{"--key", key, "--error-rate", "0.1", "--drop-rate", "0.05",
		"--rate-limit", "150", "--seed", strconv.FormatUint(seed, 10)}
	if quirks {
		args = append(args, "--quirks")
	}
	if run.skewDays != 0 {
		args = append(args, fmt.Sprintf("--date=%+d", run.skewDays))
	}
	if run.tz != "" {
		args = append(args, "--tz", run.tz)
	}
	url := startSandbox(t, args...)
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	ledger := chaosLedger{stateDir: stateDir}
	if run.dsn != "" {
		ledger = ledger.onPostgres(t, run.dsn, dir)
	}
	ingestInto(t, ledger, chaosFiles(chaosRows, quirks))
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
%slog: {format: json}
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
`, stateDir, ledger.config(), url))

	// The kills are spread over the whole run, whatever the machine's
	// speed: each round aims to submit a random share of about
	// 1/(chaosMinKills+1) of the rows before its SIGKILL (and leaves room
	// for the kills still to come), at the fastest pace (rows per
	// millisecond, restart included) a round showed, waiting at most twice
	// as long as the last round did.
	start := time.Now()
	kills, midRequest := 0, 0 // midRequest: kills that left creates in flight
	pace, submittedBefore := 0.05, 0
	var lastWait time.Duration // a round waits at most twice the last one
	step := chaosRows / (chaosMinKills + 1)
	for round := 0; ; round++ {
		cmd := exec.Command(binary, "submit", "--config", cfg)
		cmd.Env = append(append(os.Environ(), "BATCHD_API_KEY="+key), ledger.env()...)
		var logs strings.Builder
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		if kills < chaosMinKills || (kills < chaosMinKills+4 && rng.IntN(2) == 0) {
			rows := float64(step/2 + rng.IntN(step))
			if left := chaosMinKills - kills; left > 0 {
				// Leave rows for the kills still to come.
				rows = min(rows, float64(chaosRows-submittedBefore)/float64(left+2))
			}
			wait := min(max(time.Duration(rows/pace)*time.Millisecond, 150*time.Millisecond), 8*time.Second)
			if lastWait > 0 {
				// A slow round (a restart's lookups, a loaded machine)
				// understates the pace; one long wait after it would
				// submit every row before the kills are done.
				wait = min(wait, 2*lastWait)
			}
			lastWait = wait
			select {
			case err = <-done:
				t.Logf("round %d ended by itself before its kill (%v)", round, err)
			case <-time.After(wait):
				cmd.Process.Signal(syscall.SIGKILL)
				<-done
				kills++
				inFlight, submitted := ledger.afterKill(t)
				if inFlight > 0 {
					midRequest++
				}
				if submitted > submittedBefore {
					// The fastest pace seen: a round slowed by its restart's
					// lookups must not make the next one wait too long.
					pace = max(pace, float64(submitted-submittedBefore)/float64(wait.Milliseconds()))
				}
				submittedBefore = submitted
				t.Logf("round %d: SIGKILL after %v: %d rows in flight, %d submitted", round, wait, inFlight, submitted)
				continue
			}
		} else {
			err = <-done
		}
		if err == nil {
			break // every row done
		}
		// A run that ends by itself with work left must say so with exit
		// 1 (rows whose lookups failed stay in doubt until the next run);
		// any other end (a panic, a ledger failure) is a bug.
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitFailure || !strings.Contains(logs.String(), "batchd submit: submit left work undone: ") {
			t.Fatalf("round %d: submit ended with %v, want exit 1 for work left undone:\n%s", round, err, lastLines(logs.String(), 40))
		}
		if round > 80 {
			t.Fatalf("submit never finished; last run: %v\n%s", err, lastLines(logs.String(), 40))
		}
	}
	t.Logf("%d SIGKILLs; submit finished after %v", kills, time.Since(start).Round(time.Millisecond))
	if kills < chaosMinKills || midRequest < chaosMinKills/2 {
		t.Fatalf("submit finished every row after only %d SIGKILLs, %d of them with creates in flight (want %d and %d); the test proves too little",
			kills, midRequest, chaosMinKills, chaosMinKills/2)
	}
	same := func(r *payment.Row, ch echeck.Check) bool {
		return ch.Label == r.Label && ch.Number == r.Number && ch.Amount == r.Payment.Amount
	}
	asSent := 0 // quirks: checks whose number reads as the row's, zeros and all
	if quirks {
		same = func(r *payment.Row, ch echeck.Check) bool {
			if ch.Number == r.Number {
				asSent++
			}
			return r.Identity().Same(payment.Identity{Label: ch.Label, Number: ch.Number, Amount: ch.Amount})
		}
	}
	assertOneCheckPerRowIn(t, ledger, client(t, url, key), chaosRows, same)
	if asSent > 0 {
		t.Fatalf("%d checks echo their number with its leading zeros: the sandbox's --quirks did not apply", asSent)
	}
	if run.skewDays != 0 || run.tz != "" {
		assertServiceSkew(t, stateDir, run)
	}
}

// assertServiceSkew shows that the run met the clocks it meant to: each
// row's check is dated by the service run.skewDays days (and, in another
// time zone, that zone's offset) from batchd's time of sending it, within
// the run's length. A check made by an attempt before the last one (a
// lost answer found later) was sent earlier still, so only a check dated
// too late would say the sandbox's clock was not moved.
func assertServiceSkew(t *testing.T, stateDir string, run chaosRun) {
	t.Helper()
	loc := time.UTC
	if run.tz != "" {
		var err error
		if loc, err = time.LoadLocation(run.tz); err != nil {
			t.Fatal(err)
		}
	}
	db, err := state.Open(stateDir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bs, err := db.Batches()
	if err != nil {
		t.Fatal(err)
	}
	want := time.Duration(run.skewDays) * 24 * time.Hour
	checked := 0
	for _, b := range bs {
		err := db.Rows(b.ID, func(r *payment.Row) (bool, error) {
			// The service writes its wall time, in the zone's offset at
			// its own instant (a DST change may lie between batchd's
			// day and the service's); the client reads it as UTC.
			ok, got := false, time.Duration(0)
			for _, at := range []time.Time{r.AttemptAt.Add(want - 10*time.Minute), r.AttemptAt.Add(want + 2*time.Minute)} {
				_, offset := at.In(loc).Zone()
				got = r.CheckCreated.Sub(r.AttemptAt) - time.Duration(offset)*time.Second
				ok = ok || (got <= want+2*time.Minute && got >= want-10*time.Minute)
			}
			if !ok {
				t.Errorf("row %s sent at %s has its check dated %s: %v from batchd's clock, want about %v (the sandbox's --date %+d --tz %q)",
					r.Key, r.AttemptAt.Format(time.DateTime), r.CheckCreated.Format(time.DateTime), got, want, run.skewDays, run.tz)
				return false, nil
			}
			checked++
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked != run.rows {
		t.Fatalf("checked the dates of %d rows of %d", checked, run.rows)
	}
}

// rowCounts opens the bbolt ledger in stateDir (no batchd may be
// running) and counts the rows in flight and the rows submitted.
func rowCounts(t *testing.T, stateDir string) (inFlight, submitted int) {
	t.Helper()
	db := chaosLedger{stateDir: stateDir}.open(t)
	defer db.Close()
	return ledgerCounts(t, db)
}

// chaosFiles returns two payment files of n/2 rows each. The second
// repeats the first's numbers, amounts and accounts, in reverse order,
// under the label "Payroll-Nov-B", which contains the first's
// "Payroll-Nov": a lookup through a substring label filter (the quirky
// sandbox's), or the resolver's unfiltered walk (either sandbox), returns
// both files' checks, and only the label tells them apart.
//
// With quirks every number has leading zeros, a different count in each
// file ("0001000", "000001000": the same check number by the identity
// rule), and labels come in three spellings per file: in upper case, in
// lower case, and in the file's own case between spaces. The spaces (and
// a no-break space, which spreadsheets add) cannot reach the service:
// ingest trims every cell with strings.TrimSpace, the very trim the
// sandbox applies to a stored label, so the sandbox's trimming has nothing
// left to do on anything a CSV can carry, and the rows' labels differ
// from the stored ones only where the service differs in kind: the
// number's zeros, and the label filter matching other spellings and the
// other file's longer label. The case differences make the labels of one
// file's rows differ from each other as text while being one label by the
// identity rule.
func chaosFiles(n int, quirks bool) map[string]string {
	files := map[string]string{}
	for f, base := range []string{"Payroll-Nov", "Payroll-Nov-B"} {
		var b strings.Builder
		b.WriteString("number,amount,memo,name,email,bank_routing,bank_account,label\r\n")
		for k := 0; k < n/2; k++ {
			// The second file runs the first's rows backwards, so that
			// its first rows, sent right after the first file's last,
			// carry their number and amount: around the files' boundary
			// both may be in doubt at once, each check unowned.
			i := k
			if f == 1 {
				i = n/2 - 1 - k
			}
			number, label := strconv.Itoa(1000+i), base
			if quirks {
				number = fmt.Sprintf("%0*d", 7+2*f, 1000+i)
				switch i % 3 {
				case 0:
					label = `"  ` + base + `  "`
				case 1:
					label = strings.ToUpper(base)
				case 2:
					label = "\u00a0" + strings.ToLower(base) + " "
				}
			}
			cents := 57 + i // 0.57 is 0.5700000000000001 as a float64
			fmt.Fprintf(&b, "%s,%d.%02d,Invoice %d,Payee %d,p%d@example.com,999900001,11110000%02d,%s\r\n",
				number, cents/100, cents%100, i, i, i, i%22+1, label)
		}
		files[fmt.Sprintf("payroll-%c.csv", 'a'+f)] = b.String()
	}
	return files
}

// ingestCSV loads payment files into the bbolt ledger in stateDir as
// production does: each file is dropped, with its .done marker, into the
// inbox of a real sshd, and one `batchd ingest` process picks them up.
// Every file must be accepted whole.
func ingestCSV(t *testing.T, stateDir string, files map[string]string) {
	t.Helper()
	ingestInto(t, chaosLedger{stateDir: stateDir}, files)
}

// ingestInto is ingestCSV into either backend's ledger.
func ingestInto(t *testing.T, ledger chaosLedger, files map[string]string) {
	t.Helper()
	sshd := testsshd.Start(t)
	for name, body := range files {
		for p, b := range map[string]string{name: body, name + ".done": ""} {
			if err := os.WriteFile(filepath.Join(sshd.Root, "inbox", p), []byte(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg := writeConfig(t, t.TempDir(), fmt.Sprintf(`
state_dir: %s
%sapi: {base_url: "http://127.0.0.1:1", mode: test}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s,
       inbox: %s/inbox, archive: %s/archive, failed: %s/failed, outbox: %s/outbox}
ingest: {done_marker: true, stable_for: 0s}
`, ledger.stateDir, ledger.config(), sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
		sshd.Root, sshd.Root, sshd.Root, sshd.Root))
	cmd := exec.Command(binary, "ingest", "--config", cfg)
	cmd.Env = append(append(os.Environ(), "BATCHD_API_KEY=sk_test_ingest_0123456789abcdef"), ledger.env()...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("batchd ingest: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	for name, body := range files {
		rows := strings.Count(body, "\n") - 1
		ok := false
		for _, line := range strings.Split(stdout.String(), "\n") {
			f := strings.Fields(line)
			ok = ok || (len(f) >= 5 && f[0] == name && f[2] == strconv.Itoa(rows) && f[4] == "accepted")
		}
		if !ok {
			t.Fatalf("batchd ingest did not accept all %d rows of %s:\n%s%s", rows, name, stdout.String(), stderr.String())
		}
	}
}

// loadRows puts n valid rows into a new ledger in stateDir.
func loadRows(t *testing.T, stateDir string, n int) {
	t.Helper()
	db, err := state.Open(stateDir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := db.BeginBatch(payment.FileMeta{Name: "chaos.csv", SHA256: "chaos"})
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
// checks, each row of the bbolt ledger in stateDir maps to a distinct one
// that is the row's by same, and no row is in doubt or pending.
func assertOneCheckPerRow(t *testing.T, stateDir string, c *echeck.Client, n int, same func(*payment.Row, echeck.Check) bool) {
	t.Helper()
	assertOneCheckPerRowIn(t, chaosLedger{stateDir: stateDir}, c, n, same)
}

// assertOneCheckPerRowIn is assertOneCheckPerRow on either backend.
func assertOneCheckPerRowIn(t *testing.T, ledger chaosLedger, c *echeck.Client, n int, same func(*payment.Row, echeck.Check) bool) {
	t.Helper()
	checks := allChecks(t, c)
	byID := map[string]echeck.Check{}
	for _, ch := range checks {
		byID[ch.CheckID] = ch
	}
	if len(checks) != n || len(byID) != n {
		t.Fatalf("the service holds %d checks (%d distinct); want exactly %d", len(checks), len(byID), n)
	}
	db := ledger.open(t)
	defer db.Close()
	assertRowsOwnChecks(t, db, byID, n, same)
}

// assertRowsOwnChecks is assertOneCheckPerRow's ledger half, on any
// backend: every row of db is submitted and owns a distinct check of
// byID that is its own by same, and there are n rows.
func assertRowsOwnChecks(t *testing.T, db payment.RowReader, byID map[string]echeck.Check, n int, same func(*payment.Row, echeck.Check) bool) {
	t.Helper()
	bs, _ := db.Batches()
	seen := map[string]bool{}
	rowsSeen := 0
	for _, b := range bs {
		db.Rows(b.ID, func(r *payment.Row) (bool, error) {
			rowsSeen++
			ch, ok := byID[r.CheckID]
			switch {
			case r.State != payment.Submitted:
				t.Fatalf("row %s is %s", r.Key, r.State)
			case !ok || seen[r.CheckID]:
				t.Fatalf("row %s: check %q missing or shared", r.Key, r.CheckID)
			case !same(r, ch):
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
