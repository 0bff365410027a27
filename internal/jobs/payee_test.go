package jobs

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/payee"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/testsshd"
)

// The payee's two accounts: neither may appear whole in any output.
const (
	oldAccount = "0001234567"
	newAccount = "0009995678"
)

// lockedLog is a log destination the jobs' goroutines may share.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// payeeCycle is a cycle in mode whose log is kept, after a first file has
// paid Ada Lovelace to oldAccount.
func payeeCycle(t *testing.T, sshd *testsshd.Server, mode string) (*cycle, *lockedLog) {
	c := newCycleAt(t, sshd, mode, clocktest.Monday)
	logs := &lockedLog{}
	c.env.Log = slog.New(slog.NewTextHandler(logs, nil))
	c.env.Cfg.Ingest.OnAccountChange = mode
	c.env.ingest = ingest.New(c.env.DB, c.env.ingestOptions())
	c.drop("first.csv", "amount,memo,name,email,bank_routing,bank_account\n"+
		"10.00,inv 1,Ada Lovelace,ada@example.com,999900001,"+oldAccount+"\n")
	ctx := context.Background()
	if out, err := c.env.Ingest(ctx); err != nil || len(out) != 1 || out[0].Outcome != "accepted" {
		t.Fatalf("ingest first: %+v %v", out, err)
	}
	if sum, _, err := c.env.Submit(ctx); err != nil || sum.Created != 1 {
		t.Fatalf("submit first: %+v %v", sum, err)
	}
	return c, logs
}

// dropChanged ingests second.csv: the same payee, written otherwise, paid
// to newAccount on line 2.
func dropChanged(t *testing.T, c *cycle) {
	t.Helper()
	c.drop("second.csv", "amount,memo,name,email,bank_routing,bank_account\n"+
		"20.00,inv 2,  ADA   lovelace ,Ada@Example.com,999900001,"+newAccount+"\n")
	if out, err := c.env.Ingest(context.Background()); err != nil || len(out) != 1 || out[0].Outcome != "accepted" {
		t.Fatalf("ingest second: %+v %v", out, err)
	}
}

// checksAt counts the checks the sandbox holds.
func checksAt(t *testing.T, c *cycle) int {
	t.Helper()
	page, err := c.api.ListChecks(context.Background(), echeck.ListParams{Limit: 100, Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Checks)
}

// resultsRow is line 2 of second.csv's results report in the outbox.
func resultsRow(t *testing.T, c *cycle) map[string]string {
	t.Helper()
	recs := c.outboxCSV("second.csv.results")
	if len(recs) != 2 {
		t.Fatalf("results report %q", recs)
	}
	row := map[string]string{}
	for i, h := range recs[0] {
		row[h] = recs[1][i]
	}
	return row
}

// xlsxText is every part of an XLSX file, unzipped, as one text.
func xlsxText(t *testing.T, path string) string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var all strings.Builder
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	return all.String()
}

// noFullAccount fails when either account number appears whole in the
// log, in extra (command output, errors), or in any file in the outbox or
// the local reports folder (CSV, XLSX unzipped, error notes).
func noFullAccount(t *testing.T, c *cycle, logs string, extra ...string) {
	t.Helper()
	texts := map[string]string{"log": logs}
	for i, e := range extra {
		texts["output "+string(rune('0'+i))] = e
	}
	for _, dir := range []string{c.path("outbox"), c.env.ReportsDir()} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil || d.IsDir():
			case strings.HasSuffix(p, ".xlsx"):
				texts[p] = xlsxText(t, p)
			default:
				b, _ := os.ReadFile(p)
				texts[p] = string(b)
			}
			return nil
		})
	}
	masked := 0 // files that show the new account masked: the search looked where accounts are
	for where, text := range texts {
		if strings.Contains(text, "5678") {
			masked++
		}
		for _, acct := range []string{oldAccount, newAccount, strings.TrimLeft(newAccount, "0")} {
			if strings.Contains(text, acct) {
				t.Errorf("%s shows a full account number %s:\n%s", where, acct, text)
			}
		}
	}
	if masked < 4 { // the results report, CSV and XLSX, in the outbox and locally
		t.Errorf("only %d of %d outputs show the new account masked", masked, len(texts))
	}
}

func TestPayeeAccountChangeModes(t *testing.T) {
	sshd := testsshd.Start(t)
	ctx := context.Background()

	t.Run("warn", func(t *testing.T) {
		c, logs := payeeCycle(t, sshd, payee.Warn)
		dropChanged(t, c)
		sum, _, err := c.env.Submit(ctx)
		if err != nil || sum.Created != 1 || sum.Held != 0 {
			t.Fatalf("submit: %+v %v", sum, err)
		}
		if n := checksAt(t, c); n != 2 {
			t.Fatalf("sandbox holds %d checks, want 2", n)
		}
		row := resultsRow(t, c)
		if row["account_change"] != "…4567 → …5678 (warned)" || row["status"] != "in_process" {
			t.Fatalf("results row %v", row)
		}
		exc := exceptionOf(t, c, "account_change")
		if exc["file"] != "second.csv" || exc["line"] != "2" || exc["detail"] != "paid to a changed account: …4567 → …5678" {
			t.Fatalf("exceptions row %v", exc)
		}
		if !strings.Contains(logs.String(), `msg="payee's bank account changed" file=second.csv line=2`) ||
			!strings.Contains(logs.String(), "from=…4567 to=…5678 action=warn") {
			t.Fatalf("no WARN line for the change:\n%s", logs)
		}
		noFullAccount(t, c, logs.String())
	})

	t.Run("allow", func(t *testing.T) {
		c, logs := payeeCycle(t, sshd, payee.Allow)
		dropChanged(t, c)
		if sum, _, err := c.env.Submit(ctx); err != nil || sum.Created != 1 {
			t.Fatalf("submit: %+v %v", sum, err)
		}
		if row := resultsRow(t, c); row["account_change"] != "" || row["status"] != "in_process" {
			t.Fatalf("results row %v", row)
		}
		if strings.Contains(logs.String(), "bank account changed") {
			t.Fatalf("allow says nothing:\n%s", logs)
		}
		noFullAccount(t, c, logs.String())
	})

	t.Run("payee_id", func(t *testing.T) {
		// A payee_id names the payee whatever its name says: a renamed
		// payee with another account is a change.
		c, logs := payeeCycle(t, sshd, payee.Warn)
		for _, f := range []struct{ name, body string }{
			{"third.csv", "V-1,30.00,inv 3,Ada Lovelace,ada@example.com,999900001," + oldAccount},
			{"fourth.csv", "v-1 ,40.00,inv 4,Countess of Lovelace,countess@example.com,999900001," + newAccount},
		} {
			c.drop(f.name, "payee_id,amount,memo,name,email,bank_routing,bank_account\n"+f.body+"\n")
			if out, err := c.env.Ingest(ctx); err != nil || len(out) != 1 || out[0].Outcome != "accepted" {
				t.Fatalf("ingest %s: %+v %v", f.name, out, err)
			}
			if sum, _, err := c.env.Submit(ctx); err != nil || sum.Created != 1 {
				t.Fatalf("submit %s: %+v %v", f.name, sum, err)
			}
		}
		recs := c.outboxCSV("fourth.csv.results")
		if got := recs[1][col(recs[0], "account_change")]; got != "…4567 → …5678 (warned)" {
			t.Fatalf("fourth.csv: %q", got)
		}
		recs = c.outboxCSV("third.csv.results")
		if got := recs[1][col(recs[0], "account_change")]; got != "" {
			t.Fatalf("third.csv (a new payee_id) is no change: %q", got)
		}
		noFullAccount(t, c, logs.String())
	})

	t.Run("hold", func(t *testing.T) {
		c, logs := payeeCycle(t, sshd, payee.Hold)
		dropChanged(t, c)
		sum, _, err := c.env.Submit(ctx)
		if err != nil || sum.Created != 0 || sum.Held != 1 || sum.Pending != 0 {
			t.Fatalf("submit with a held row: %+v %v", sum, err)
		}
		if n := checksAt(t, c); n != 1 {
			t.Fatalf("the held row was sent: the sandbox holds %d checks", n)
		}
		row := resultsRow(t, c)
		if row["status"] != "held" || row["account_change"] != "…4567 → …5678 (held)" ||
			row["error"] != "held: bank details changed from …4567 to …5678; release with batchd release --file second.csv --line 2" {
			t.Fatalf("results row while held %v", row)
		}
		if exc := exceptionOf(t, c, "held"); exc["line"] != "2" || exc["detail"] != row["error"] || exc["status"] != "held" {
			t.Fatalf("exceptions row %v", exc)
		}
		// Still held at the next run.
		if sum, _, err := c.env.Submit(ctx); err != nil || sum.Created != 0 || sum.Held != 1 {
			t.Fatalf("second submit: %+v %v", sum, err)
		}
		bs, _ := c.env.DB.Batches()
		k := payment.RowKey{Batch: bs[len(bs)-1].ID, Line: 2}
		if _, err := c.env.DB.ApproveHeld(k, "alice"); err != nil {
			t.Fatal(err)
		}
		sum, _, err = c.env.Submit(ctx)
		if err != nil || sum.Created != 1 || sum.Held != 0 {
			t.Fatalf("submit after release: %+v %v", sum, err)
		}
		if n := checksAt(t, c); n != 2 {
			t.Fatalf("sandbox holds %d checks after release, want 2", n)
		}
		row = resultsRow(t, c)
		if row["status"] != "in_process" || row["check_id"] == "" || row["error"] != "" ||
			row["account_change"] != "…4567 → …5678 (released by alice)" {
			t.Fatalf("results row after release %v", row)
		}
		// Exactly once: nothing more is sent.
		if sum, _, err := c.env.Submit(ctx); err != nil || sum.Created != 0 || sum.Attempts != 0 {
			t.Fatalf("a later submit: %+v %v", sum, err)
		}
		if n := checksAt(t, c); n != 2 {
			t.Fatalf("sandbox holds %d checks, want 2", n)
		}
		last, ok, err := c.env.DB.LastPaid(lastPayee(t, c))
		if err != nil || !ok || last.Last4 != "5678" {
			t.Fatalf("the released account is the payee's last: %+v %v %v", last, ok, err)
		}
		noFullAccount(t, c, logs.String())
	})
}

// lastPayee is the payee key of Ada Lovelace with the cycle's hash key.
func lastPayee(t *testing.T, c *cycle) string {
	t.Helper()
	k, err := payee.LoadKey(c.env.Cfg.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	return k.Payee(payee.Name(&payment.Payment{Name: "Ada Lovelace", Email: "ada@example.com"}))
}

// exceptionOf runs reconcile and returns the one exception of kind in the
// exceptions report it delivers.
func exceptionOf(t *testing.T, c *cycle, kind string) map[string]string {
	t.Helper()
	if _, err := c.env.Reconcile(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	recs := c.outboxCSV("exceptions-")
	var found []map[string]string
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, h := range recs[0] {
			row[h] = rec[i]
		}
		if row["kind"] == kind {
			found = append(found, row)
		}
	}
	if len(found) != 1 {
		t.Fatalf("exceptions of kind %s: %v in %q", kind, found, recs)
	}
	return found[0]
}
