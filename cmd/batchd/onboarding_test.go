package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/ach"
	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/testsshd"
)

// Issue 12 end to end, as processes over a real sshd and `batchd sandbox
// --drop-rate`: a funding-source file of 30 rows (on-demand rows by
// customer columns and by user_id, two processor tokens, one issued for
// svcach and one for another processor, an account another customer
// already holds, and a micro-deposit row refused at ingest since the
// deprecation) goes through ingest, submit and the results report. Lost
// answers are looked up, so no funding source is created twice.
// It runs on each ledger backend (the PostgreSQL one fenced, each command
// taking the lease as it runs).
func TestOnboardingProcess(t *testing.T) {
	ledgertest.Each(t, onboardingProcess)
}

func onboardingProcess(t *testing.T, backend string) {
	const key = "sk_test_onboarding_0123456789abcdef"
	sandboxURL, sandboxLog := startSandboxLogged(t, "--key", key, "--drop-rate", "0.3", "--seed", "7")
	api, err := ach.New(apiwire.Options{BaseURL: sandboxURL, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// Before the file: customer "held" owns account 1111000020, customer
	// "known" exists and is named in the file by user_id.
	held := ensureUser(t, api, "held@example.com")
	ensureSource(t, api, held, "1111000020")
	known := ensureUser(t, api, "known@example.com")
	good := sandboxToken(t, sandboxURL, key, "svcach", "999900001", "1111000021")
	other := sandboxToken(t, sandboxURL, key, "otherproc", "999900001", "1111000022")

	var b strings.Builder
	b.WriteString("user_id,first_name,last_name,email,routing_number,account_number,account_type,nickname,method,processor_token\n")
	for i := 1; i <= 17; i++ { // fixture accounts: Verified
		fmt.Fprintf(&b, ",Payee,Number %d,payee%02d@example.com,999900001,11110000%02d,checking,main,on-demand,\n", i, i, i)
	}
	for i := 18; i <= 23; i++ { // other accounts: Unverified (credits only)
		fmt.Fprintf(&b, ",Payee,Number %d,payee%02d@example.com,011000015,55500%02d,checking,,,\n", i, i, i)
	}
	// Two rows of one customer.
	b.WriteString(",Vera,Two,vera@example.com,011000015,4440001,savings,,,\n")
	b.WriteString(",Vera,Two,VERA@example.com,011000015,4440002,checking,,,\n")
	fmt.Fprintf(&b, "%s,,,,999900001,1111000019,checking,by id,,\n", known)
	fmt.Fprintf(&b, ",Tok,Good,tok.good@example.com,,,,,,%s\n", good)
	fmt.Fprintf(&b, ",Tok,Other,tok.other@example.com,,,,,,%s\n", other)
	b.WriteString(",Late,Taken,taken@example.com,999900001,1111000020,checking,,,\n")
	b.WriteString(",Micro,Late,micro@example.com,999900001,1111000018,checking,,micro-deposits,\n")
	body := b.String()

	sshd := testsshd.Start(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
log: {format: json}
api: {base_url: %s, mode: test, rate: 200, burst: 50}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s,
       inbox: %s, archive: %s, failed: %s, outbox: %s}
ingest: {stable_for: 100ms, on_invalid: skip_rows}
submit: {resolve_after: 1ms, max_attempts: 20}
%s`, filepath.Join(dir, "state"), sandboxURL, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
		sshd.Path("inbox"), sshd.Path("archive"), sshd.Path("failed"), sshd.Path("outbox"), ledgerYAML(t, backend, dir)))
	if n := strings.Count(body, "\n") - 1; n != 30 {
		t.Fatalf("the file has %d rows", n)
	}
	if err := os.WriteFile(sshd.Path("inbox", "onboard.csv"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runBatchd(t, key, "ingest", "--config", cfg)
	if code != 0 || !strings.Contains(out, "accepted-with-rejects") || !strings.Contains(out, "funding-sources") {
		t.Fatalf("ingest: exit %d\n%s%s", code, out, errOut)
	}
	rejects := readReport(t, sshd.Path("outbox", "onboard.csv.rejects.csv"))
	if len(rejects) != 2 || !strings.Contains(rejects[1][3], "deprecated") || !strings.Contains(rejects[1][3], "svcach") {
		t.Fatalf("rejects report: %q", rejects)
	}
	for _, s := range []string{good, other} {
		if strings.Contains(out+errOut, s) {
			t.Fatal("a processor token in ingest's output")
		}
	}

	// Submit until nothing is left: a dropped answer puts a row in doubt,
	// and the run looks it up before anything is sent again.
	for run := 0; ; run++ {
		code, out, errOut = runBatchd(t, key, "submit", "--config", cfg)
		if code == 0 {
			break
		}
		if run == 4 {
			t.Fatalf("submit still failing after %d runs: exit %d\n%s%s", run+1, code, out, errOut)
		}
	}
	t.Logf("submit:\n%s", out)
	if !strings.Contains(out, "funding sources: customers created") {
		t.Fatalf("submit printed no onboarding line:\n%s", out)
	}
	for _, s := range []string{good, other, key} {
		if strings.Contains(out+errOut, s) {
			t.Fatal("a secret in submit's output")
		}
	}
	if !strings.Contains(sandboxLog.String(), `"fault":"drop"`) {
		t.Fatal("the sandbox dropped no answer: the test proves nothing about lost answers")
	}

	results := readReport(t, sshd.Path("outbox", "onboard.csv.results.csv"))
	if got := strings.Join(results[0][:7], ","); got != "line,user_id,funding_source_id,status,bank_name,last_four,error" {
		t.Fatalf("results header %q", results[0])
	}
	by := map[string]int{}
	for _, r := range results[1:] {
		by[r[3]]++
		if strings.Contains(strings.Join(r, ","), "1111000020") {
			t.Fatalf("a full account number in the results report: %q", r)
		}
	}
	if len(results) != 30 || by["verified"] != 19 || by["unverified"] != 8 || by["rejected"] != 2 {
		t.Fatalf("results: %d rows, by status %v\n%q", len(results)-1, by, results)
	}
	for _, r := range results[1:] {
		switch line := r[0]; {
		case r[3] == "rejected" && !strings.Contains(r[6], "INVALID_PROCESSOR_TOKEN") && !strings.Contains(r[6], "associated with another user"):
			t.Errorf("line %s rejected for %q", line, r[6])
		case r[3] != "rejected" && (r[2] == "" || r[1] == ""):
			t.Errorf("line %s: no user or source id: %q", line, r)
		}
	}

	if code, out, errOut := runBatchd(t, key, "status", "--config", cfg); code != 0 || !strings.Contains(out, "funding-sources") {
		t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
	}

	// At the service: one source per linked account, none twice.
	sources := map[string]int{}
	for _, u := range allUsers(t, api) {
		list, err := api.ListFundingSources(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			if s.Status != ach.StatusDeleted {
				sources[u.ID+" "+s.Routing+" "+s.Last4]++
			}
		}
	}
	total := 0
	for k, n := range sources {
		total += n
		if n > 1 {
			t.Errorf("%s: %d sources", k, n)
		}
	}
	if total != 28 { // 27 made by batchd and the one "held" had before
		t.Fatalf("%d funding sources at the service, want 28: %v", total, sources)
	}
	assertBackend(t, backend, filepath.Join(dir, "state"))
}

// assertBackend fails t unless the ledger batchd kept is on backend: a
// PostgreSQL ledger leaves no bbolt file in state_dir.
func assertBackend(t *testing.T, backend, stateDir string) {
	t.Helper()
	_, err := os.Stat(filepath.Join(stateDir, state.FileName))
	if onFile := err == nil; onFile != (backend == ledgertest.Bbolt) {
		t.Fatalf("backend %s, but a ledger file in state_dir: %v", backend, onFile)
	}
}

// ledgerYAML is the configuration lines that put a process test's
// ledger on backend: none for bbolt (the file under state_dir); for
// PostgreSQL a private server (pgtest), its DSN in a file private to the
// test as an operator would keep it, and no scheduled backup (the
// configuration refuses one on that backend). The lease is the shortest
// allowed, so a process started after one was killed takes over within
// seconds, and the send window (a third of it) keeps the wait for rows in
// doubt short.
func ledgerYAML(t *testing.T, backend, dir string) string {
	t.Helper()
	if backend == ledgertest.Bbolt {
		return ""
	}
	dsnFile := filepath.Join(dir, "postgres-dsn")
	if err := os.WriteFile(dsnFile, []byte(pgtest.Start(t)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("state: {backend: postgres, postgres_dsn_file: %s, lease_ttl: 3s, account_keys_file: %s}\nbackup: {schedule: \"\"}\n",
		dsnFile, pgKeyRing(t, dir))
}

// openLedger opens the ledger of the configuration file cfg as batchd
// does (jobs.OpenLedger), for a test's assertions with batchd stopped;
// the caller closes it before batchd runs again (a bbolt file is locked).
// A PostgreSQL ledger is read without its
// lease: reads are not fenced.
func openLedger(t *testing.T, cfg string) state.Ledger {
	t.Helper()
	c, err := config.Load(cfg, config.Env(func(name string) (string, bool) {
		if name == "BATCHD_API_KEY" {
			return "sk_test_assertions_only_0123456789", true
		}
		return os.LookupEnv(name)
	}))
	if err != nil {
		t.Fatal(err)
	}
	db, err := jobs.OpenLedger(c, state.Options{NoSnapshots: true})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// startSandboxLogged is startSandbox with the sandbox's log kept for
// assertions.
func startSandboxLogged(t *testing.T, args ...string) (string, *syncBuffer) {
	t.Helper()
	var log syncBuffer
	url := startSandboxWith(t, &log, args...)
	return url, &log
}

// ensureUser creates a customer, looking it up by email when the answer is
// lost (the sandbox drops answers of creates).
func ensureUser(t *testing.T, api *ach.Client, email string) string {
	t.Helper()
	for try := 0; try < 10; try++ {
		u, err := api.CreateUser(context.Background(), ach.UserRequest{FirstName: "Set", LastName: "Up", Email: email})
		if err == nil {
			return u.ID
		}
		for _, u := range allUsers(t, api) {
			if strings.EqualFold(u.Email, email) {
				return u.ID
			}
		}
	}
	t.Fatalf("cannot create customer %s", email)
	return ""
}

// ensureSource links an account to a customer, on-demand, looking it up
// when the answer is lost.
func ensureSource(t *testing.T, api *ach.Client, user, account string) {
	t.Helper()
	ctx := context.Background()
	for try := 0; try < 10; try++ {
		_, err := api.CreateOnDemandFundingSource(ctx, ach.FundingSourceRequest{UserID: user, Routing: "999900001", Account: account, Type: "checking"})
		if err == nil || errors.Is(err, ach.ErrAlreadyLinked) {
			return
		}
		list, lerr := api.ListFundingSources(ctx, user)
		if lerr != nil {
			t.Fatal(lerr)
		}
		for _, s := range list {
			if strings.HasSuffix(account, s.Last4) && s.Status != ach.StatusDeleted {
				return
			}
		}
	}
	t.Fatalf("cannot link account for %s", user)
}

// allUsers lists every customer of the key.
func allUsers(t *testing.T, api *ach.Client) []ach.User {
	t.Helper()
	var out []ach.User
	for page := 1; ; page++ {
		var p *ach.UserPage
		achRead(t, func() (err error) { p, err = api.ListUsers(context.Background(), page, 100); return err })
		out = append(out, p.Users...)
		if page >= p.LastPage || len(p.Users) == 0 {
			return out
		}
	}
}

// achRead runs a read of the test's own until the sandbox answers it:
// with an ErrorRate, any read may meet an injected 500 or 503, and which
// one does depends on how the runs' requests interleaved.
func achRead(t *testing.T, read func() error) {
	t.Helper()
	var err error
	for range 50 {
		if err = read(); err == nil || apiwire.ClassOf(err) != apiwire.Retryable {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// sandboxToken has the sandbox's stand-in for the bank-linking provider
// issue a processor token for processor and the account.
func sandboxToken(t *testing.T, base, key, processor, routing, account string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"processor": processor, "routing_number": routing, "account_number": account})
	req, _ := http.NewRequest(http.MethodPost, base+"/ach/v2/_sandbox/processor/token", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans struct {
		Token string `json:"processor_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || resp.StatusCode != http.StatusOK || ans.Token == "" {
		t.Fatalf("issue a %s token: %d %v", processor, resp.StatusCode, err)
	}
	return ans.Token
}

// readReport reads a CSV report whole.
func readReport(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")))).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}
