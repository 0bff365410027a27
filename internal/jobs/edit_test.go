package jobs

import (
	"context"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

// submitted ingests and submits a payment file of the given body and
// returns its rows, in line order.
func (c *cycle) submitted(name, body string, n int) []*payment.Row {
	c.t.Helper()
	ctx := context.Background()
	c.drop(name, body)
	if out, err := c.env.Ingest(ctx); err != nil || len(out) != 1 || out[0].Outcome != ingest.Accepted {
		c.t.Fatalf("ingest: %+v %v", out, err)
	}
	if sum, _, err := c.env.Submit(ctx); err != nil || sum.Created != n {
		c.t.Fatalf("submit: %+v %v", sum, err)
	}
	bs, _ := c.env.DB.Batches()
	var rows []*payment.Row
	c.env.DB.Rows(bs[0].ID, func(r *payment.Row) (bool, error) { rows = append(rows, r); return true, nil })
	return rows
}

const fourPayments = "number,amount,memo,name,email,bank_routing,bank_account\n" +
	"901,10.00,inv 0,Ann,a@example.com,999900001,1111000016\n" +
	"902,11.00,inv 1,Bob,b@example.com,999900001,1111000016\n" +
	"903,12.00,inv 2,Cy,c@example.com,999900001,1111000016\n" +
	"904,13.00,inv 3,Di,d@example.com,999900001,1111000016\n"

// An edit file changes the amount of 2 checks in process (one named by
// id, one by file and line): the service's checks and the ledger's rows
// show the new amounts, and a reconcile's status report and settlement
// agree with them. A deposited check is too late to edit, with the
// action; an account whose last four digits are not the check's is
// refused as a change of bank details; the same file again is a
// duplicate.
func TestEditFileChangesAmountsInProcess(t *testing.T) {
	c := newCycle(t)
	ctx := context.Background()
	rows := c.submitted("week.csv", fourPayments, 4)
	c.post("/_sandbox/deposit", map[string]any{"check_ids": []string{rows[2].CheckID}})

	edits := "check_id,file,line,amount,memo,bank_routing,bank_account\n" +
		rows[0].CheckID + ",,,12.50,,999900001,1111000016\n" +
		",week.csv,3,20.00,inv 1b,999900001,1111000016\n" +
		rows[2].CheckID + ",,,99.00,,999900001,1111000016\n" +
		rows[3].CheckID + ",,,14.00,,999900001,2222000099\n"
	c.drop("fix-1.csv", edits)
	out, err := c.env.Ingest(ctx)
	if err != nil || len(out) != 1 || out[0].Outcome != ingest.Accepted || out[0].Kind != payment.KindEdits {
		t.Fatalf("ingest edits: %+v %v", out, err)
	}
	recs := c.outboxCSV("fix-1.csv.results")
	if len(recs) != 5 {
		t.Fatalf("results report %q", recs)
	}
	h := recs[0]
	want := []struct{ result, status, changed, flag string }{
		{"edited", "in_process", "amount 10.00 → 12.50", "yes"},
		{"edited", "in_process", `amount 11.00 → 20.00; memo "inv 1" → "inv 1b"`, "yes"},
		{"too_late", "deposited", "amount 12.00 → 99.00", "yes"},
		{"refused", "", "", ""},
	}
	for i, w := range want {
		rec := recs[i+1]
		if rec[col(h, "result")] != w.result || rec[col(h, "check_status")] != w.status || rec[col(h, "changed")] != w.changed ||
			rec[col(h, "amount_changed")] != w.flag || rec[col(h, "check_id")] != rows[i].CheckID {
			t.Errorf("line %d: %q, want %+v", i+2, rec, w)
		}
		if hasAction := rec[col(h, "action")] != ""; hasAction != (w.result == "too_late") {
			t.Errorf("line %d: action %q", i+2, rec[col(h, "action")])
		}
	}
	if note := recs[4][col(h, "note")]; !strings.Contains(note, "bank details change") || strings.Contains(note, "2222000099") {
		t.Errorf("bank details refusal: %q", note)
	}

	newAmounts := []money.Cents{1250, 2000, 1200, 1300}
	for i, r := range rows {
		ck, err := c.api.GetCheck(ctx, r.CheckID)
		if err != nil || ck.Amount != newAmounts[i] {
			t.Errorf("check of line %d: %+v %v, want %s", i+2, ck, err, newAmounts[i])
		}
		row, _ := c.env.DB.Row(r.Key)
		if row.Payment.Amount != newAmounts[i] {
			t.Errorf("row of line %d: amount %s, want %s", i+2, row.Payment.Amount, newAmounts[i])
		}
	}

	sum, err := c.env.Reconcile(ctx, nil)
	if err != nil || sum.Mismatched != 0 || sum.Missing != 0 || sum.Unknown != 0 || !sum.Consistent {
		t.Fatalf("reconcile: %+v %v", sum, err)
	}
	excs := c.outboxCSV("exceptions-")
	late := 0
	for _, e := range excs[1:] {
		if e[col(excs[0], "kind")] == KindEditTooLate {
			late++
			if e[col(excs[0], "check_id")] != rows[2].CheckID || e[col(excs[0], "action")] != actionEditTooLate {
				t.Errorf("too-late edit exception %q", e)
			}
		}
	}
	if late != 1 {
		t.Errorf("%d too-late edits in the exceptions report, want 1: %q", late, excs)
	}
	st := c.outboxCSV("status-")
	var shown []string
	for _, rec := range st[1:] {
		shown = append(shown, rec[col(st[0], "amount")]+" "+rec[col(st[0], "status")])
	}
	if strings.Join(shown, ", ") != "12.50 in_process, 20.00 in_process, 12.00 deposited, 13.00 in_process" {
		t.Errorf("status report: %v", shown)
	}
	got := c.settlementTotals()
	for k, v := range map[string]string{"in_process": "3/45.50", "deposited": "1/12.00", "on_its_way": "3/45.50", "paid": "1/12.00"} {
		if got[k] != v {
			t.Errorf("settlement %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}

	c.drop("fix-2.csv", edits)
	if out, err := c.env.Ingest(ctx); err != nil || len(out) != 1 || out[0].Outcome != ingest.Duplicate {
		t.Fatalf("the same edits again: %+v %v", out, err)
	}
}

// countingService counts the edit requests the rule sends.
type countingService struct {
	payment.Service
	edits int
}

func (s *countingService) EditCheck(ctx context.Context, id string, row *payment.Row) (*payment.Check, error) {
	s.edits++
	return s.Service.EditCheck(ctx, id, row)
}

// An edit line whose edit left but whose answer was lost (the process
// stopped after the request) is settled as edited when the file is
// applied again, without a second edit: the intent in the ledger holds
// the values after, and the check shows them. A line whose intent was
// recorded but whose edit never left is edited once. A check changed at
// the service by another hand is refused, and a settled line is answered
// from the ledger.
func TestEditAfterALostAnswer(t *testing.T) {
	c := newCycle(t)
	ctx := context.Background()
	rows := c.submitted("three.csv", strings.Join(strings.SplitAfter(fourPayments, "\n")[:4], ""), 3)
	svc := &countingService{Service: c.env.Service}
	edit := Edit(c.env.DB, svc, c.clk.Now)
	line := func(n int, r *payment.Row, amount money.Cents) ingest.EditLine {
		return ingest.EditLine{FileSHA: "e1", Line: n, CheckID: r.CheckID, Change: payment.EditChange{Amount: amount},
			BankRouting: "999900001", BankAccount: "1111000016"}
	}
	intent := func(l ingest.EditLine, r *payment.Row) payment.Edit {
		before := payment.EditFieldsOf(r)
		rec, fresh, err := payment.EditLines.Intent(c.env.DB, payment.Edit{CheckLine: payment.CheckLine[payment.EditOutcome]{
			Key: payment.EditKey{File: l.FileSHA, Line: l.Line}, CheckID: r.CheckID, Row: r.Key},
			Before: before, After: l.Change.Over(before)}, c.clk.Now())
		if err != nil || !fresh {
			t.Fatal(fresh, err)
		}
		return rec
	}

	// Line 2's intent was recorded and its edit was made; then the process died.
	lost := line(2, rows[0], 1500)
	rec := intent(lost, rows[0])
	if _, err := c.api.EditCheck(ctx, rows[0].CheckID, echeck.RequestOf(editedRow(rows[0], rec.After, lost))); err != nil {
		t.Fatal(err)
	}
	// Line 3's intent was recorded, and its edit never left.
	unsent := line(3, rows[1], 1600)
	intent(unsent, rows[1])
	// Line 4's check was changed at the service by another hand.
	other := rows[2]
	if _, err := c.api.EditCheck(ctx, other.CheckID, echeck.RequestOf(editedRow(other, payment.EditChange{Amount: 1700}.Over(payment.EditFieldsOf(other)), unsent))); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		l      ingest.EditLine
		want   payment.EditOutcome
		amount money.Cents
		edits  int
	}{
		{lost, payment.EditEdited, 1500, 0},
		{unsent, payment.EditEdited, 1600, 1},
		{line(4, other, 1800), payment.EditRefused, 1200, 1},
		{lost, payment.EditEdited, 1500, 1}, // settled: answered from the ledger
	} {
		res, err := edit(ctx, tc.l)
		if err != nil || res.Outcome != tc.want || svc.edits != tc.edits {
			t.Fatalf("line %d: %+v %v, %d edits sent; want %s after %d", tc.l.Line, res, err, svc.edits, tc.want, tc.edits)
		}
		k := rows[tc.l.Line-2].Key
		if r, _ := c.env.DB.Row(k); r.Payment.Amount != tc.amount {
			t.Errorf("line %d: row amount %s, want %s", tc.l.Line, r.Payment.Amount, tc.amount)
		}
	}
	if r, _ := c.env.DB.Row(rows[0].Key); len(r.History) != len(rows[0].History)+1 ||
		!strings.Contains(r.History[len(r.History)-1].Note, "amount 10.00 → 15.00") {
		t.Errorf("row 2's history: %+v", r.History)
	}
	// Bank details that are not the check's are refused before any intent.
	bad := line(5, rows[1], 1900)
	bad.BankAccount = "3333000042"
	if res, err := edit(ctx, bad); err != nil || res.Outcome != payment.EditRefused || !strings.Contains(res.Note, "payee-change rules") {
		t.Fatalf("another account: %+v %v", res, err)
	}
	if got, _ := payment.EditLines.List(c.env.DB, "e1"); len(got) != 3 {
		t.Errorf("edit lines recorded: %+v", got)
	}
}
