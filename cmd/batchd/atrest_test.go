package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/testsshd"
)

// The scan of issue 30's acceptance: the account numbers of the files
// batchd ingests must be readable nowhere batchd keeps data.
const (
	atRestPayments = 1000 // payment rows, each its own account
	atRestSources  = 20   // funding-source rows, each its own account
)

// atRestAccount is the i-th account number of the files: twelve digits
// that no other field, id or timestamp holds.
func atRestAccount(i int) string { return fmt.Sprintf("7%011d", 52_000_000+i*7919) }

// atRestFiles are the payment file and the funding-source file.
func atRestFiles() (files map[string]string, accounts []string) {
	var pay, src strings.Builder
	pay.WriteString("amount,memo,name,email,bank_routing,bank_account\n")
	for i := range atRestPayments {
		a := atRestAccount(i)
		accounts = append(accounts, a)
		fmt.Fprintf(&pay, "%d.%02d,Invoice %d,Payee %d,p%d@example.com,999900001,%s\n", 1+i/100, i%100, i, i, i, a)
	}
	src.WriteString("user_id,first_name,last_name,email,routing_number,account_number,account_type,nickname,method,processor_token\n")
	for i := range atRestSources {
		a := atRestAccount(atRestPayments + i)
		accounts = append(accounts, a)
		fmt.Fprintf(&src, ",Source,Number %d,src%02d@example.com,011000015,%s,checking,,,\n", i, i, a)
	}
	return map[string]string{"payroll.csv": pay.String(), "sources.csv": src.String()}, accounts
}

// atRestScan is what one scan looked at, by place, and what it found.
type atRestScan struct {
	places map[string][]byte
}

func (s *atRestScan) add(name string, b []byte) {
	if s.places == nil {
		s.places = map[string][]byte{}
	}
	s.places[name] = append(s.places[name], b...)
}

// addTree adds every regular file under root but the key ring: the
// ledger file, the spool, the reports, the watermark.
func (s *atRestScan) addTree(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || d.Name() == acctseal.FileName {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil {
			s.add(p, b)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// found are the places that hold any of accounts, in the clear or, as a
// PostgreSQL dump shows bytea, in hex, with how many each holds.
func (s *atRestScan) found(accounts []string) map[string]int {
	out := map[string]int{}
	for name, b := range s.places {
		for _, a := range accounts {
			if bytes.Contains(b, []byte(a)) || bytes.Contains(b, []byte(hex.EncodeToString([]byte(a)))) {
				out[name]++
			}
		}
	}
	return out
}

// mustFindNone fails the test naming each place that holds a number.
func (s *atRestScan) mustFindNone(t *testing.T, stage string, accounts []string) {
	t.Helper()
	if len(s.places) == 0 {
		t.Fatalf("%s: the scan looked at nothing", stage)
	}
	found := s.found(accounts)
	var names []string
	for n := range found {
		names = append(names, fmt.Sprintf("%s (%d numbers)", n, found[n]))
	}
	sort.Strings(names)
	if len(names) > 0 {
		t.Errorf("%s: account numbers readable in %s", stage, strings.Join(names, ", "))
	}
}

// TestNoAccountNumberAtRest is issue 30's scan, with real batchd
// processes over a real sshd and the sandbox, on each ledger backend:
// 1,000 payment rows and 20 funding-source rows of distinct accounts are
// ingested and batchd is SIGKILLed before submit (its API unreachable,
// so nothing is sent), then again once everything is submitted, then
// the ledger is pruned and compacted. After each, no number of the files
// is found in the ledger file, its backup, a pg_dump of the ledger, the
// spool, the logs or any report. The same scan finds every number in a
// ledger written as builds before sealing wrote it, and none once this
// build opened it (TestNoAccountNumberAfterUpgrade).
func TestNoAccountNumberAtRest(t *testing.T) {
	t.Parallel()
	ledgertest.Each(t, noAccountNumberAtRest)
}

func noAccountNumberAtRest(t *testing.T, backend string) {
	t.Parallel() // real processes mostly waiting on their schedules: the backends overlap
	const key = "sk_test_atrest_0123456789abcdef"
	files, accounts := atRestFiles()
	sandboxURL := startSandbox(t, "--key", key)
	sshd := testsshd.Start(t)
	for name, body := range files {
		if err := os.WriteFile(sshd.Path("inbox", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	ledger, dsn := ledgerYAML(t, backend, dir), ""
	if backend == ledgertest.Postgres {
		b, err := os.ReadFile(filepath.Join(dir, "postgres-dsn"))
		if err != nil {
			t.Fatal(err)
		}
		dsn = strings.TrimSpace(string(b))
	}
	admin := freePort(t)
	config := func(name, apiURL string) string {
		return writeConfigAs(t, dir, name, fmt.Sprintf(`
state_dir: %s
log: {format: json}
api: {base_url: %s, mode: test, rate: 400, burst: 50, concurrency: 16, timeout: 5s}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s,
       inbox: %s, archive: %s, failed: %s, outbox: %s}
ingest: {stable_for: 100ms}
submit: {resolve_after: 1s, max_attempts: 20, backoff_max: 200ms}
schedule: {timezone: UTC, ingest: "@every 1s", submit: "@every 1s", reconcile: "@every 1h"}
admin: {listen: %s}
%s`, stateDir, apiURL, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
			sshd.Path("inbox"), sshd.Path("archive"), sshd.Path("failed"), sshd.Path("outbox"), admin, ledger))
	}
	env := map[string]string{"BATCHD_API_KEY": key}
	logs := &syncBuffer{}
	scan := func(stage, cfg string) {
		t.Helper()
		var s atRestScan
		s.addTree(t, stateDir)
		s.addTree(t, sshd.Path("outbox"))
		s.add("the logs", []byte(logs.String()))
		if backend == ledgertest.Bbolt {
			backup := filepath.Join(dir, "backup-"+strings.ReplaceAll(stage, " ", "-")+".db")
			out := must(t, env, "backup", "--config", cfg, "--to", backup)
			logs.Write([]byte(out))
			s.addTree(t, backup)
		} else {
			out, err := exec.Command(pgtest.Tool(t, "pg_dump"), "--data-only", "--dbname", dsn).Output()
			if err != nil {
				t.Fatalf("pg_dump: %v", err)
			}
			s.add("pg_dump", out)
		}
		s.mustFindNone(t, stage, accounts)
	}

	// Ingested, never sent: the API is unreachable, so submit sends
	// nothing; batchd is killed once both files are recorded.
	offline := config("offline.yaml", "http://127.0.0.1:1")
	run := atRestRun(t, offline, admin, key, logs)
	eventually(t, "both files accepted", 2*time.Minute, func() bool {
		return strings.Count(logs.String(), `"msg":"file accepted"`) == len(files)
	})
	kill(run)
	scan("killed before submit", offline)

	// Submitted: killed once every row has its result.
	online := config("online.yaml", sandboxURL)
	run = atRestRun(t, online, admin, key, logs)
	eventually(t, "every row submitted", 2*time.Minute, func() bool { return allSent(run) })
	// A key rotation while batchd runs: the key is added, for the running
	// batchd to take up; the next scans cover what it seals.
	if out := must(t, env, "rekey", "--config", online); !strings.Contains(out, "a running batchd holds the ledger") {
		t.Fatalf("rekey while batchd runs:\n%s", out)
	}
	eventually(t, "the running batchd taking the new key up", time.Minute, func() bool {
		return strings.Contains(logs.String(), "the account key ring has a new key")
	})
	kill(run)
	scan("killed after submit", online)

	// Reconciled, pruned and compacted: every check is deposited at the
	// service and reconciled, so the status, settlement and exceptions
	// reports join the scan. Prune keeps batches changed within
	// reconcile.lookback_days, so on the real clock it archives nothing
	// here (TestPruneProcess scans an archive report for account numbers);
	// the file is compacted all the same on bbolt.
	if backend == ledgertest.Postgres {
		leaseFreeOn(t, dsn)
	}
	var ids []string
	for _, c := range allChecks(t, client(t, sandboxURL, key)) {
		ids = append(ids, c.CheckID)
	}
	if len(ids) != atRestPayments {
		t.Fatalf("%d checks at the service, want %d", len(ids), atRestPayments)
	}
	sandboxPost(t, sandboxURL, key, "/_sandbox/deposit", map[string]any{"check_ids": ids})
	out := must(t, env, "reconcile", "--config", online)
	logs.Write([]byte(out))
	if !strings.Contains(out, "status-") {
		t.Fatalf("reconcile wrote no status report:\n%s", out)
	}
	out = must(t, env, "prune", "--config", online, "--before", time.Now().UTC().Format(time.DateOnly))
	logs.Write([]byte(out))
	scan("after prune and compaction", online)
}

// atRestRun starts `batchd run` on cfg, its admin server at admin, its
// output into logs.
func atRestRun(t *testing.T, cfg, admin, key string, logs *syncBuffer) *failoverInstance {
	t.Helper()
	in := &failoverInstance{t: t, name: "batchd run", cfg: cfg, base: "http://" + admin, env: []string{"BATCHD_API_KEY=" + key}, logs: logs}
	in.start()
	return in
}

// kill SIGKILLs in and waits for it to end.
func kill(in *failoverInstance) {
	in.cmd.Process.Signal(syscall.SIGKILL)
	<-in.done
}

// allSent reports whether the running batchd's status shows every row
// with a result: none pending, in flight or in doubt.
func allSent(in *failoverInstance) bool {
	var st struct {
		Rows       map[string]int `json:"rows"`
		SourceRows map[string]int `json:"source_rows"`
	}
	if code, err := getJSON(in.base+"/v1/status", &st); err != nil || code != 200 {
		return false
	}
	open := func(m map[string]int) int { return m["pending"] + m["in_flight"] + m["in_doubt"] + m["held"] }
	return st.Rows["submitted"] == atRestPayments && open(st.Rows) == 0 && open(st.SourceRows) == 0 && len(st.SourceRows) > 0
}

// leaseFreeOn waits until the lease a SIGKILLed batchd held on the
// PostgreSQL ledger dsn has run out, so that a one-shot command may lead.
func leaseFreeOn(t *testing.T, dsn string) {
	t.Helper()
	db := chaosLedger{dsn: dsn}.open(t)
	defer db.Close()
	waitLeaseFree(t, db)
}

// TestNoAccountNumberAfterUpgrade: the scan finds every account number
// in a ledger written as builds before sealing wrote it (payment and
// funding-source rows in the clear), and none once this build opened it
// (batchd init), in the file or in a backup taken after.
func TestNoAccountNumberAfterUpgrade(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	_, accounts := atRestFiles()
	db, err := state.Open(stateDir, state.Options{NoSnapshots: true, AccountKeys: acctseal.InClear()})
	if err != nil {
		t.Fatal(err)
	}
	l, err := db.BeginBatch(payment.FileMeta{Name: "payroll.csv", SHA256: "old-payroll", Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range accounts[:atRestPayments] {
		p := payment.Payment{Amount: 100, Memo: "m", Name: fmt.Sprint("Payee ", i), Email: "p@example.com", BankRouting: "999900001", BankAccount: a}
		if err := l.Add(i+2, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Commit(atRestPayments, 0); err != nil {
		t.Fatal(err)
	}
	sl, err := db.BeginSourceBatch(payment.FileMeta{Kind: payment.KindSources, Name: "sources.csv", SHA256: "old-sources", Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range accounts[atRestPayments:] {
		r := funding.Request{Method: funding.OnDemand, Routing: "011000015", Account: a, AccountType: "checking",
			Customer: funding.Customer{FirstName: "Source", LastName: fmt.Sprint("Number ", i), Email: fmt.Sprintf("src%02d@example.com", i)}}
		if err := sl.AddSource(i+2, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sl.Commit(atRestSources, 0); err != nil {
		t.Fatal(err)
	}
	db.Close()

	var before atRestScan
	before.addTree(t, stateDir)
	if found := before.found(accounts)[filepath.Join(stateDir, state.FileName)]; found != len(accounts) {
		t.Fatalf("the scan finds %d of the %d numbers of a ledger in the clear: it cannot fail", found, len(accounts))
	}

	cfg := writeConfigAs(t, dir, "bbolt.yaml", "state_dir: "+stateDir+"\napi: {base_url: http://127.0.0.1:1}\n")
	env := map[string]string{"BATCHD_API_KEY": migrateTestKey}
	out := must(t, env, "init", "--config", cfg)
	backup := filepath.Join(dir, "after.db")
	out += must(t, env, "backup", "--config", cfg, "--to", backup)
	var after atRestScan
	after.addTree(t, stateDir)
	after.addTree(t, backup)
	after.add("the output", []byte(out))
	after.mustFindNone(t, "after the upgrade", accounts)
}
