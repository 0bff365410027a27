package reconcile

import (
	"context"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
)

// methodRecorder is a transport that remembers the method of every request.
type methodRecorder struct {
	base    http.RoundTripper
	mu      sync.Mutex
	methods map[string]int
}

func (m *methodRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	m.mu.Lock()
	m.methods[r.Method]++
	m.mu.Unlock()
	return m.base.RoundTrip(r)
}

// readOnlyClient is a service for the Runner whose requests are recorded.
func (e *env) readOnlyClient() (API, *methodRecorder) {
	e.t.Helper()
	rec := &methodRecorder{base: http.DefaultTransport, methods: map[string]int{}}
	c, err := echeck.New(apiwire.Options{BaseURL: e.url, Key: testKey, HTTPClient: &http.Client{Transport: rec}})
	if err != nil {
		e.t.Fatal(err)
	}
	return echeck.NewService(c), rec
}

// TestReconcileEndToEnd drives two batches and some special rows through
// the sandbox (deposits, a void, a failed account, a check made outside
// batchd, a lost answer, a check the service never had, an amount that
// differs), reconciles on three days, and checks every line of the three
// reports against what the test made.
func TestReconcileEndToEnd(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		ctx := context.Background()
		a := e.load("payments-a.csv",
			pay(10000, 16, "Ada Lovelace"), pay(25050, 16, "Grace Hopper"), pay(1, 8, "Tiny Amount"),
			pay(99999, 16, "Voided Later"), pay(1234, 2, "Bad Account"), pay(500000, 20, `=HYPERLINK("http://x","y")`))
		b := e.load("payments-b.csv", pay(1000, 16, "Bea"), pay(2000, 16, "Cal"), pay(3000, 16, "Dee"))
		c := e.load("payments-c.csv", pay(7777, 16, "Lost Answer"), pay(8888, 16, "Never There"), pay(9999, 16, "Other Amount"))

		ids := map[string]string{} // "a2" -> check id
		for i, k := range e.keys(a) {
			ids["a"+strconv.Itoa(i+2)] = e.submit(k)
		}
		for i, k := range e.keys(b) {
			ids["b"+strconv.Itoa(i+2)] = e.submit(k)
		}
		ck := e.keys(c)
		// c2: the create reached the service but its answer was lost.
		row, err := e.db.Send(ck[0])
		if err != nil {
			t.Fatal(err)
		}
		lost, err := e.api.CreateCheck(ctx, request(row))
		if err != nil {
			t.Fatal(err)
		}
		ids["c2"] = lost.CheckID
		if _, err := e.db.Doubt(ck[0], "answer lost"); err != nil {
			t.Fatal(err)
		}
		// c3: the ledger holds a check the service never had.
		if _, err := e.db.Send(ck[1]); err != nil {
			t.Fatal(err)
		}
		ids["c3"] = "0b0e7a1c-5e1f-4a2b-9c3d-4e5f6a7b8c9d"
		if _, err := e.db.Created(ck[1], payment.CheckResult{CheckID: ids["c3"], Status: payment.StatusInProcess, Created: monday()}); err != nil {
			t.Fatal(err)
		}
		// c4: the service holds another amount than the file.
		row, err = e.db.Send(ck[2])
		if err != nil {
			t.Fatal(err)
		}
		req := request(row)
		req.Amount = 9998
		other, err := e.api.CreateCheck(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		ids["c4"] = other.CheckID
		if _, err := e.db.Created(ck[2], created(other)); err != nil {
			t.Fatal(err)
		}
		outsider := e.outside("outside-payer", "4242", 4200)
		e.void(ids["a5"])
		e.deposit(ids["a2"], ids["b2"])
		e.advance(3) // Thursday: the other checks are printed, a6 failed

		api, methods := e.readOnlyClient()
		out := &dirOutbox{dir: t.TempDir()}
		sum, err := e.runner(api, Options{Outbox: report.Destination{Outbox: out, Dir: "/finance/outbox"}}).Run(ctx, Window{})
		if err != nil {
			t.Fatal(err)
		}
		thursday := Date{2026, 3, 5}
		want := Summary{Window: Window{Date{2026, 3, 2}, thursday}, RunDate: thursday, ChecksSeen: 12, Matched: 11,
			Resolved: 1, StatusChanges: 10, Unknown: 1, Missing: 1, Mismatched: 1, Returned: 1, Voided: 1,
			Final:     map[payment.Status]int{payment.StatusDeposited: 2, payment.StatusFailed: 1, payment.StatusVoid: 1},
			Confirmed: 1, PagesRead: 1, // no receipt delivered: none to write again (FinalBatches)
			Passes: 1, Consistent: true, StatusRows: 12, Reports: sum.Reports,
			Plan: PlanFullWalk, PlanReason: "1 rows in doubt are resolved from the list", Calls: 2, // one page, one GET
			MinCalls: 1} // the page: the GET is for a check the list lacks, which no plan foresees
		if !reflect.DeepEqual(*sum, want) {
			t.Fatalf("summary\n got %+v\nwant %+v", *sum, want)
		}
		for m := range methods.methods {
			if m != http.MethodGet {
				t.Errorf("reconcile sent %s; it may only read", m)
			}
		}

		// The status report: every row, with what the service says now.
		status := map[string]string{"a2": "deposited", "a3": "printed", "a4": "printed", "a5": "void", "a6": "failed",
			"a7": "printed", "b2": "deposited", "b3": "printed", "b4": "printed", "c2": "printed", "c3": "in_process", "c4": "printed"}
		deposited := map[string]string{"a2": "2026-03-05", "b2": "2026-03-05"}
		files := map[string]string{"a": "payments-a.csv", "b": "payments-b.csv", "c": "payments-c.csv"}
		batches := map[string]uint64{"a": a.ID, "b": b.ID, "c": c.ID}
		lines := table(t, e.reportPath("status", thursday))
		if len(lines) != len(status) {
			t.Fatalf("status report has %d lines, want %d", len(lines), len(status))
		}
		for i, l := range lines {
			name := map[uint64]string{a.ID: "a", b.ID: "b", c.ID: "c"}[mustUint(t, l["batch"])] + l["line"]
			row, err := e.db.Row(payment.RowKey{Batch: batches[name[:1]], Line: uint32(mustUint(t, l["line"]))})
			if err != nil {
				t.Fatal(err)
			}
			change := "2026-03-05 10:00:00"
			if name == "c2" || name == "c3" {
				change = stamp(row.StatusSeenAt, time.UTC) // recorded when created or resolved, not observed
			}
			wantLine := map[string]string{"batch": strconv.FormatUint(batches[name[:1]], 10), "file": files[name[:1]],
				"line": name[1:], "check_id": ids[name], "number": row.Number, "label": row.Label, "name": row.Payment.Name,
				"account": "****" + row.Payment.AccountLast4, "amount": row.Payment.Amount.String(), "status": status[name],
				"created": "2026-03-02 10:00:00", "last_status_change": change, "deposited_on": deposited[name],
				"outcome": string(payment.Status(status[name]).Outcome()), "bank": ""} // no bank directory asked here
			if name == "a7" {
				wantLine["name"] = `'=HYPERLINK("http://x","y")` // neutralised for spreadsheets
			}
			if !reflect.DeepEqual(l, wantLine) {
				t.Errorf("status line %d (%s)\n got %v\nwant %v", i+1, name, l, wantLine)
			}
		}

		// The settlement: per batch and status, per status, per deposit day.
		wantSettlement := [][]string{
			{"batch_status", "1", "payments-a.csv", "printed", "on_its_way", "", "3", "5250.51"},
			{"batch_status", "1", "payments-a.csv", "deposited", "paid", "", "1", "100.00"},
			{"batch_status", "1", "payments-a.csv", "failed", "not_paid", "", "1", "12.34"},
			{"batch_status", "1", "payments-a.csv", "void", "not_paid", "", "1", "999.99"},
			{"batch_outcome", "1", "payments-a.csv", "", "paid", "", "1", "100.00"},
			{"batch_outcome", "1", "payments-a.csv", "", "on_its_way", "", "3", "5250.51"},
			{"batch_outcome", "1", "payments-a.csv", "", "not_paid", "", "2", "1012.33"},
			{"batch_status", "2", "payments-b.csv", "printed", "on_its_way", "", "2", "50.00"},
			{"batch_status", "2", "payments-b.csv", "deposited", "paid", "", "1", "10.00"},
			{"batch_outcome", "2", "payments-b.csv", "", "paid", "", "1", "10.00"},
			{"batch_outcome", "2", "payments-b.csv", "", "on_its_way", "", "2", "50.00"},
			{"batch_outcome", "2", "payments-b.csv", "", "not_paid", "", "0", "0.00"},
			{"batch_status", "3", "payments-c.csv", "in_process", "on_its_way", "", "1", "88.88"},
			{"batch_status", "3", "payments-c.csv", "printed", "on_its_way", "", "2", "177.76"},
			{"batch_outcome", "3", "payments-c.csv", "", "paid", "", "0", "0.00"},
			{"batch_outcome", "3", "payments-c.csv", "", "on_its_way", "", "3", "266.64"},
			{"batch_outcome", "3", "payments-c.csv", "", "not_paid", "", "0", "0.00"},
			{"status_total", "", "", "in_process", "on_its_way", "", "1", "88.88"},
			{"status_total", "", "", "printed", "on_its_way", "", "7", "5478.27"},
			{"status_total", "", "", "deposited", "paid", "", "2", "110.00"},
			{"status_total", "", "", "failed", "not_paid", "", "1", "12.34"},
			{"status_total", "", "", "void", "not_paid", "", "1", "999.99"},
			{"deposited_by_date", "", "", "deposited", "paid", "2026-03-05", "2", "110.00"},
			{"outcome_total", "", "", "", "paid", "", "2", "110.00"},
			{"outcome_total", "", "", "", "on_its_way", "", "8", "5567.15"},
			{"outcome_total", "", "", "", "not_paid", "", "2", "1012.33"},
		}
		if got := readCSV(t, e.reportPath("settlement", thursday)); !reflect.DeepEqual(got[1:], wantSettlement) {
			t.Errorf("settlement\n got %q\nwant %q", got[1:], wantSettlement)
		}

		settlementAgrees(t, e.reportPath("status", thursday), e.reportPath("settlement", thursday))

		// The exceptions: missing, then unknown, then mismatch, then the
		// checks that ended not paid: a6 returned (its fixture fails), a5
		// voided at the service by someone else.
		excs := table(t, e.reportPath("exceptions", thursday))
		wantExc := []struct{ kind, id, batch, line, amount, detail string }{
			{"missing", ids["c3"], "3", "3", "88.88", "404"},
			{"unknown", outsider, "", "", "42.00", "no row of batchd owns it"},
			{"mismatch", ids["c4"], "3", "4", "99.99", "amount: batchd 99.99, service 99.98"},
			{"returned", ids["a6"], "1", "6", "12.34", "the money did not reach the payee; failed since 2026-03-05 10:00:00"},
			{"voided", ids["a5"], "1", "5", "999.99", "voided at the service, not by batchd"},
		}
		if len(excs) != len(wantExc) {
			t.Fatalf("exceptions: %v", excs)
		}
		for i, w := range wantExc {
			x := excs[i]
			if x["kind"] != w.kind || x["check_id"] != w.id || x["batch"] != w.batch || x["line"] != w.line ||
				x["amount"] != w.amount || !strings.Contains(x["detail"], w.detail) || x["action"] == "" {
				t.Errorf("exception %d = %v, want %+v", i+1, x, w)
			}
		}
		if !strings.Contains(excs[3]["action"], "contact the payee, confirm the bank details, and pay again with a new check number") ||
			!strings.Contains(excs[4]["action"], "pay again with a new check number") {
			t.Errorf("unpaid checks' actions: %q, %q", excs[3]["action"], excs[4]["action"])
		}
		if !strings.Contains(excs[1]["action"], "Check was created outside batchd") {
			t.Errorf("unknown check's action: %q", excs[1]["action"])
		}

		// The row in doubt now owns the check that carries its identity.
		if r, _ := e.db.Row(ck[0]); r.State != payment.Submitted || r.CheckID != ids["c2"] ||
			!strings.Contains(r.History[len(r.History)-1].Note, "found by reconcile") {
			t.Errorf("row in doubt after reconcile: %+v", r)
		}
		// The outbox has the same three files.
		for _, p := range sum.Reports {
			local, _ := os.ReadFile(p)
			remote, err := os.ReadFile(out.dir + "/finance/outbox/" + p[strings.LastIndex(p, "/")+1:])
			if err != nil || string(local) != string(remote) {
				t.Errorf("outbox copy of %s differs (%v)", p, err)
			}
		}

		// Friday: two printed checks are deposited; the ledger shows their path.
		e.deposit(ids["a3"], ids["a4"])
		e.advance(1)
		friday := Date{2026, 3, 6}
		sum = e.run(Options{})
		if sum.StatusChanges != 2 || sum.Missing != 1 {
			t.Fatalf("friday summary %+v", sum)
		}
		r, _ := e.db.Row(e.keys(a)[1])
		var path []payment.Status
		for _, s := range r.History {
			if s.CheckStatus != "" && (len(path) == 0 || path[len(path)-1] != s.CheckStatus) {
				path = append(path, s.CheckStatus)
			}
		}
		if !reflect.DeepEqual(path, []payment.Status{payment.StatusInProcess, payment.StatusPrinted, payment.StatusDeposited}) ||
			!r.DepositedSeenAt.Equal(time.Date(2026, 3, 6, 10, 0, 0, 0, time.UTC)) {
			t.Errorf("history of a3: %v, deposited seen %v", path, r.DepositedSeenAt)
		}
		set := readCSV(t, e.reportPath("settlement", friday))
		wantDeposits := [][]string{
			{"deposited_by_date", "", "", "deposited", "paid", "2026-03-05", "2", "110.00"},
			{"deposited_by_date", "", "", "deposited", "paid", "2026-03-06", "2", "250.51"},
			{"outcome_total", "", "", "", "paid", "", "4", "360.51"},
			{"outcome_total", "", "", "", "on_its_way", "", "6", "5316.64"},
			{"outcome_total", "", "", "", "not_paid", "", "2", "1012.33"},
		}
		if !reflect.DeepEqual(set[len(set)-5:], wantDeposits) {
			t.Errorf("friday deposits %q", set[len(set)-5:])
		}

		// Again on Friday: nothing changes, and the day's reports are replaced
		// by identical ones.
		before := map[string]string{}
		for _, p := range sum.Reports {
			raw, _ := os.ReadFile(p)
			before[p] = string(raw)
		}
		again := e.run(Options{})
		if again.StatusChanges != 0 || again.Resolved != 0 {
			t.Errorf("second friday run changed the ledger: %+v", again)
		}
		for _, p := range again.Reports {
			raw, _ := os.ReadFile(p)
			if string(raw) != before[p] {
				t.Errorf("%s differs on a second run of the same day", p)
			}
		}
		entries, _ := os.ReadDir(e.dir)
		if len(entries) != 6 { // three for Thursday, three for Friday, no temporary files
			t.Errorf("reports directory holds %d files", len(entries))
		}
	})
}

func mustUint(t testing.TB, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}
