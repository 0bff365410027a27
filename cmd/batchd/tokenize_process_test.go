package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/payee"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/tokenize"
)

// tokenStore is the acceptance test's api.store.
const tokenStore = "Acme Payroll"

// TestTokenizedAccountsProcess is issue 30's acceptance test of
// api.accounts: tokenize: 50 rows of 10 payees, ingested over the real
// sshd, are sent by `batchd submit` processes to a sandbox process that
// loses 20% of the answers (tokenizations included) and fails 5% of the
// requests, and the first submit is SIGKILLed mid-run. At the end the
// service holds exactly 50 checks, one per row, each drawn by token
// (its store is api.store: the sandbox refuses a store with routing and
// account, spec §2.1 rules 1-2, so no create carried an account number)
// on its payee's account (the last four digits and bank the token
// stands for); the ledger keeps one token per payee, sealed, and the
// ledger file holds neither a token nor an account number in the clear.
// With api.accounts: raw the checks carry no store and the test fails.
func TestTokenizedAccountsProcess(t *testing.T) {
	t.Parallel()
	seed := chaosSeed(t)
	const key = "sk_test_tokenize_0123456789abcdef"
	var sandboxLog syncBuffer
	url := startSandboxWith(t, &sandboxLog, "--key", key, "--error-rate", "0.05", "--drop-rate", "0.2", "--seed", strconv.FormatUint(seed, 10))
	dir := t.TempDir()
	ledger := chaosLedger{stateDir: filepath.Join(dir, "state")}
	ingestInto(t, ledger, map[string]string{"payroll-tok.csv": tokenFile(50, 10)})
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
log: {format: json}
api: {base_url: %s, mode: test, rate: 10, burst: 2, concurrency: 8, timeout: 2s,
      accounts: tokenize, store: %q}
submit: {resolve_after: 1s, max_attempts: 20, backoff_max: 300ms, progress_interval: 1s}
`, ledger.stateDir, url, tokenStore))

	// At 10 requests a second, 50 creates and 10 tokenizations take 6 s
	// at least: a kill after 1.5 s lands mid-run, however fast the host.
	logs := submitThenKill(t, cfg, key, 1500*time.Millisecond)
	inFlight, submitted := ledger.afterKill(t)
	t.Logf("SIGKILL: %d rows in flight, %d submitted", inFlight, submitted)
	if submitted >= 50 {
		t.Fatalf("submit finished before its SIGKILL:\n%s", lastLines(logs, 20))
	}
	for round := 0; ; round++ {
		logs, err := submitToEnd(cfg, key)
		if err == nil {
			break
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitFailure || round > 20 {
			t.Fatalf("round %d: submit ended with %v:\n%s", round, err, lastLines(logs, 40))
		}
	}
	assertOneCheckPerRowIn(t, ledger, client(t, url, key), 50, func(r *payment.Row, ch echeck.Check) bool {
		if ch.Store != tokenStore || ch.BankAccount != "****"+r.Payment.AccountLast4 || ch.BankName != "Sandbox Test Bank" {
			t.Errorf("row %s's check %s is not drawn by its payee's token: store %q, account %s, bank %q", r.Key, ch.CheckID,
				ch.Store, ch.BankAccount, ch.BankName)
		}
		return ch.Label == r.Label && ch.Number == r.Number && ch.Amount == r.Payment.Amount
	})
	assertTokensKept(t, ledger, 10)
	t.Logf("the sandbox lost or failed %d tokenization answers", strings.Count(sandboxLog.String(), `"path":"/v1/account/tokenization"`))
}

// tokenFile is a payment file of rows rows paying payees payees in turn,
// each payee at an account of its own; the even payees give first_name
// and last_name, the odd ones leave them to the name's split.
func tokenFile(rows, payees int) string {
	var b strings.Builder
	b.WriteString("number,amount,memo,name,email,bank_routing,bank_account,first_name,last_name\n")
	for i := range rows {
		p := i % payees
		first, last := "", ""
		if p%2 == 0 {
			first, last = "Pat", fmt.Sprintf("Payee%d", p)
		}
		fmt.Fprintf(&b, "%d,%d.%02d,Invoice %d,Payee %d Ltd,p%d@example.com,999900001,%s,%s,%s\n",
			5000+i, 1+i/100, i%100, i, p, p, tokenAccount(p), first, last)
	}
	return b.String()
}

// tokenAccount is payee p's account number.
func tokenAccount(p int) string { return fmt.Sprintf("2222%06d", 31*p+7) }

// submitThenKill runs `batchd submit` and SIGKILLs it after wait, returning
// its output.
func submitThenKill(t *testing.T, cfg, key string, wait time.Duration) string {
	t.Helper()
	cmd := exec.Command(binary, "submit", "--config", cfg)
	cmd.Env = append(os.Environ(), "BATCHD_API_KEY="+key)
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("submit ended by itself before its SIGKILL (%v):\n%s", err, lastLines(logs.String(), 20))
	case <-time.After(wait):
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}
	return logs.String()
}

// submitToEnd runs `batchd submit` until it ends by itself.
func submitToEnd(cfg, key string) (string, error) {
	cmd := exec.Command(binary, "submit", "--config", cfg)
	cmd.Env = append(os.Environ(), "BATCHD_API_KEY="+key)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// assertTokensKept: the ledger keeps a token for each payee's account,
// with its bank and last four digits, and its file shows none of the
// tokens nor any account number.
func assertTokensKept(t *testing.T, ledger chaosLedger, payees int) {
	t.Helper()
	hash, err := payee.LoadKey(ledger.stateDir)
	if err != nil {
		t.Fatal(err)
	}
	db := ledger.open(t)
	var secrets []string
	for p := range payees {
		acct := tokenAccount(p)
		k := tokenize.KeyOf(hash, &payment.Payment{Name: fmt.Sprintf("Payee %d Ltd", p), Email: fmt.Sprintf("p%d@example.com", p),
			BankRouting: "999900001", BankAccount: acct})
		tok, err := db.AccountToken(k)
		if err != nil || tok == nil || len(tok.Token) != 36 || tok.Last4 != acct[len(acct)-4:] || tok.Bank != "Sandbox Test Bank" {
			t.Fatalf("payee %d's token: %+v %v", p, tok, err)
		}
		secrets = append(secrets, tok.Token, acct)
	}
	db.Close()
	raw, err := os.ReadFile(filepath.Join(ledger.stateDir, "batchd.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if bytes.Contains(raw, []byte(s)) {
			t.Fatalf("the ledger file holds %s in the clear", s[:4]+"…")
		}
	}
}
