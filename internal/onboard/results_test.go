package onboard

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/report/reporttest"
	"github.com/batchd/batchd/internal/sandbox"
)

// TestResultsReport: a funding-source file's receipt says, line by line,
// the customer, the source, its status, bank and last four, the service's
// refusal, the method, the next step and the masked account; never a
// processor token. It waits for the batch's last row, is delivered once,
// and a payment job's results never include it.
func TestResultsReport(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, friday, sandbox.Options{})
		lee, mae := customer("lee"), customer("mae")
		good := r.token(funding.ProcessorName, fixtureAccount(11))
		bad := r.token("legacyproc", fixtureAccount(12))
		b := r.load(payment.KindSources, "onboard.csv",
			onDemand(lee, fixtureRouting, fixtureAccount(13)),
			onDemand(lee, otherRouting, "123456789012"),
			micro(mae, "44400001"),
			processor(mae, good),
			processor(lee, bad),
			onDemand(mae, fixtureRouting, fixtureAccount(13)),
		)
		dir, out := t.TempDir(), dirOutbox{t.TempDir()}
		dest := report.Destination{Outbox: out, Dir: "outbox"}
		both := []report.Format{report.CSV, report.XLSX}
		if names, err := DeliverResults(context.Background(), r.db, dir, dest, both); err != nil || len(names) != 0 {
			t.Fatalf("before the run: %q %v", names, err)
		}
		mustRun(t, r.runner(Options{}))
		names, err := DeliverResults(context.Background(), r.db, dir, dest, both)
		if err != nil || len(names) != 1 || names[0] != "onboard.csv.results.csv, onboard.csv.results.xlsx" {
			t.Fatalf("delivered %q %v", names, err)
		}
		local := filepath.Join(dir, "batch-000001-onboard.csv.results")
		for _, ext := range []string{".csv", ".xlsx"} {
			a, err1 := os.ReadFile(local + ext)
			c, err2 := os.ReadFile(filepath.Join(out.dir, "outbox", "onboard.csv.results"+ext))
			if err1 != nil || err2 != nil || !bytes.Equal(a, c) {
				t.Fatalf("%s: outbox copy differs (%v %v)", ext, err1, err2)
			}
			for _, tok := range []string{good, bad, strings.TrimPrefix(good, "processor-sandbox-")} {
				if bytes.Contains(a, []byte(tok)) {
					t.Fatalf("%s holds a processor token", ext)
				}
			}
			if bytes.Contains(a, []byte("123456789012")) || bytes.Contains(a, []byte(fixtureAccount(13))) {
				t.Fatalf("%s holds a full account number", ext)
			}
		}
		csv := reporttest.ReadCSV(t, local+".csv")
		if got := strings.Join(csv[0], ","); got != "line,user_id,funding_source_id,status,bank_name,last_four,error,method,next_step,account" {
			t.Fatalf("header %q", got)
		}
		rows := r.rows(b.ID)
		want := []struct {
			status, lastFour, method, step, account string
			refused                                 bool
		}{
			{"verified", "0013", "on-demand", "", "****0013", false},
			{"unverified", "9012", "on-demand", StepUnverified, "****9012", false},
			{"pending", "0001", "micro-deposits", StepSendVerification, "****0001", false},
			{"verified", "0011", "processor", "", "", false},
			{"rejected", "", "processor", StepInvalidToken, "", true},
			{"rejected", "0013", "on-demand", StepAccountTaken, "****0013", true},
		}
		for i, w := range want {
			got := csv[i+1]
			row := rows[i]
			if got[0] != strconv.Itoa(int(row.Key.Line)) || got[1] != row.UserID || got[2] != row.SourceID ||
				got[3] != w.status || got[5] != w.lastFour || got[7] != w.method || got[8] != w.step || got[9] != w.account {
				t.Errorf("line %d: %q", row.Key.Line, got)
			}
			if w.refused != (got[6] != "") || (!w.refused && got[2] == "") {
				t.Errorf("line %d: error %q, source %q", row.Key.Line, got[6], got[2])
			}
		}
		if csv[1][4] == "" {
			t.Errorf("no bank name for an on-demand source: %q", csv[1])
		}
		s := reporttest.Check(t, local+".xlsx", ResultsTable)
		if s.Shown[1][s.Col(t, "last_four")] != "0013" {
			t.Errorf("xlsx last four %q", s.Shown[1][s.Col(t, "last_four")])
		}
		// Delivered once.
		if names, err := DeliverResults(context.Background(), r.db, dir, dest, both); err != nil || len(names) != 0 {
			t.Fatalf("second delivery %q %v", names, err)
		}
	})
}

// TestResultsWaitForInitiation: a micro-deposit row whose deposits could
// not be sent yet keeps its batch's receipt back, since its next step is
// still to come.
func TestResultsWaitForInitiation(t *testing.T) {
	row := &funding.Row{State: payment.Submitted, Status: funding.StatusPending, Request: funding.Request{Method: funding.MicroDeposits}}
	if settled(row) {
		t.Error("a micro-deposit row without deposits or a next step is settled")
	}
	row.NextStep = funding.BankLinkStep
	if !settled(row) || NextStep(row) != funding.BankLinkStep {
		t.Error("a micro-deposit row told to use the bank-linking flow is not settled")
	}
}
