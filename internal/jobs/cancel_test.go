package jobs

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/paymentlink"
)

// A cancel file naming 10 checks, 3 of them already deposited: the 7 in
// process are voided (named by id, by file and line, and by label and
// number), the 3 deposited are "too late to void" with the action to
// take, the 2 checks it does not name are untouched, and the same file
// dropped again is a duplicate that voids nothing.
func TestCancelFileVoidsChecksInProcess(t *testing.T) {
	c := newCycle(t)
	ctx := context.Background()
	var file strings.Builder
	file.WriteString("label,number,amount,memo,name,email,bank_routing,bank_account\n")
	for i := range 12 {
		fmt.Fprintf(&file, "wk48,%d,%d.00,inv %d,Payee %d,p@example.com,999900001,11110000%02d\n", 900+i, 10+i, i, i, 16)
	}
	c.drop("week.csv", file.String())
	if out, err := c.env.Ingest(ctx); err != nil || len(out) != 1 || out[0].Outcome != "accepted" {
		t.Fatalf("ingest: %+v %v", out, err)
	}
	if sum, _, err := c.env.Submit(ctx); err != nil || sum.Created != 12 {
		t.Fatalf("submit: %+v %v", sum, err)
	}
	bs, _ := c.env.DB.Batches()
	var rows []*payment.Row
	c.env.DB.Rows(bs[0].ID, func(r *payment.Row) (bool, error) { rows = append(rows, r); return true, nil })
	c.post("/_sandbox/deposit", map[string]any{"check_ids": []string{rows[7].CheckID, rows[8].CheckID, rows[9].CheckID}})

	cancels := "check_id,file,line,label,number,reason\n"
	for i := range 10 {
		switch i {
		case 1:
			cancels += ",week.csv,3,,,sent twice\n" // rows[1] is line 3
		case 2:
			cancels += ",,,WK48,0902,sent twice\n" // as the service may echo label and number
		default:
			cancels += rows[i].CheckID + ",,,,,sent twice\n"
		}
	}
	c.drop("cancel-1.csv", cancels)
	out, err := c.env.Ingest(ctx)
	if err != nil || len(out) != 1 || out[0].Outcome != ingest.Accepted || out[0].Kind != payment.KindCancels {
		t.Fatalf("ingest cancels: %+v %v", out, err)
	}
	recs := c.outboxCSV("cancel-1.csv.results")
	if len(recs) != 11 {
		t.Fatalf("results report %q", recs)
	}
	h := recs[0]
	for i, rec := range recs[1:] {
		want, status := "voided", "void"
		if i >= 7 {
			want, status = "too_late", "deposited"
		}
		if rec[col(h, "result")] != want || rec[col(h, "check_status")] != status || rec[col(h, "check_id")] != rows[i].CheckID ||
			rec[col(h, "payment_row")] != fmt.Sprintf("week.csv line %d", i+2) {
			t.Errorf("line %d: %q, want %s (%s) for %s", i+2, rec, want, status, rows[i].CheckID)
		}
		if hasAction := rec[col(h, "action")] != ""; hasAction != (want == "too_late") {
			t.Errorf("line %d: action %q", i+2, rec[col(h, "action")])
		}
	}
	for i, r := range rows {
		ck, err := c.api.GetCheck(ctx, r.CheckID)
		want := map[bool]string{true: "void", false: "in_process"}[i < 7]
		if i >= 7 && i < 10 {
			want = "deposited"
		}
		if err != nil || ck.Status != want {
			t.Errorf("check of line %d: %+v %v, want %s", i+2, ck, err, want)
		}
		row, _ := c.env.DB.Row(r.Key)
		if why, ok := row.VoidedByBatchd(); ok != (i < 7) || ok && why != "cancel file: sent twice" {
			t.Errorf("row of line %d: voided by batchd %v %q", i+2, ok, why)
		}
	}

	c.drop("cancel-2.csv", cancels)
	if out, err := c.env.Ingest(ctx); err != nil || len(out) != 1 || out[0].Outcome != ingest.Duplicate {
		t.Fatalf("the same cancels again: %+v %v", out, err)
	}

	// The 3 too late are exceptions a person acts on in the daily report;
	// the 7 cancelled on request are not.
	if _, err := c.env.Reconcile(ctx, nil); err != nil {
		t.Fatal(err)
	}
	excs := c.outboxCSV("exceptions-")
	eh, late := excs[0], map[string]bool{}
	for _, e := range excs[1:] {
		switch e[col(eh, "kind")] {
		case KindCancelTooLate:
			late[e[col(eh, "check_id")]] = e[col(eh, "action")] == actionTooLate && e[col(eh, "file")] == "week.csv"
		case "voided":
			t.Errorf("a check cancelled on request is reported voided: %q", e)
		}
	}
	for i := 7; i < 10; i++ {
		if !late[rows[i].CheckID] {
			t.Errorf("line %d's too-late cancel: exceptions %q", i+2, excs)
		}
	}
	if len(late) != 3 {
		t.Errorf("%d too-late cancels in the exceptions report, want 3: %q", len(late), excs)
	}
	// The 7 checks stopped on purpose are cancelled money, owed to no one:
	// not "not paid" (the payee still owed).
	got := c.settlementTotals()
	for k, v := range map[string]string{"cancelled": "7/91.00", "not_paid": "0/0.00", "void": "7/91.00"} {
		if got[k] != v {
			t.Errorf("settlement %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

// A cancel line whose void left but whose answer was lost (the process
// stopped after the request) is settled as batchd's void when the file is
// applied again: the intent in the ledger says the void may have left, and
// the check is void. A line never sent finds the check void by another
// hand: already void.
func TestCancelAfterALostAnswer(t *testing.T) {
	c := newCycle(t)
	ctx := context.Background()
	c.drop("two.csv", "amount,memo,name,email,bank_routing,bank_account\n"+
		"10.00,a,Ann,a@example.com,999900001,1111000016\n11.00,b,Bob,b@example.com,999900001,1111000016\n")
	if _, err := c.env.Ingest(ctx); err != nil {
		t.Fatal(err)
	}
	if sum, _, err := c.env.Submit(ctx); err != nil || sum.Created != 2 {
		t.Fatalf("submit: %+v %v", sum, err)
	}
	bs, _ := c.env.DB.Batches()
	var rows []*payment.Row
	c.env.DB.Rows(bs[0].ID, func(r *payment.Row) (bool, error) { rows = append(rows, r); return true, nil })
	void := Cancel(c.env.DB, c.env.Service, paymentlink.NewService(c.env.API), c.clk.Now)

	// Line 2's intent was recorded and its void left; then the process died.
	lost := ingest.CancelLine{FileSHA: "f1", Line: 2, CheckID: rows[0].CheckID, Reason: "wrong payee"}
	if _, fresh, err := payment.CancelLines.Intent(c.env.DB, payment.Cancel{CheckLine: payment.CheckLine[payment.CancelOutcome]{
		Key: payment.LineKey{File: "f1", Line: 2}, CheckID: rows[0].CheckID, Row: rows[0].Key}, Reason: "wrong payee"}, c.clk.Now()); err != nil || !fresh {
		t.Fatal(fresh, err)
	}
	if err := c.api.DeleteCheck(ctx, rows[0].CheckID); err != nil {
		t.Fatal(err)
	}
	// Line 3's check was voided by hand before any cancel.
	if err := c.api.DeleteCheck(ctx, rows[1].CheckID); err != nil {
		t.Fatal(err)
	}
	res, err := void(ctx, lost)
	if err != nil || res.Outcome != payment.CancelVoided {
		t.Fatalf("the lost void: %+v %v", res, err)
	}
	if r, _ := c.env.DB.Row(rows[0].Key); r.CheckStatus != payment.StatusVoid {
		t.Errorf("row 2 after the lost void: %s", r.CheckStatus)
	}
	res, err = void(ctx, ingest.CancelLine{FileSHA: "f1", Line: 3, CheckID: rows[1].CheckID, Reason: "wrong payee"})
	if err != nil || res.Outcome != payment.CancelAlreadyVoid {
		t.Fatalf("a check voided by hand: %+v %v", res, err)
	}
	// Settled lines are answered from the ledger, whatever the service says now.
	res, err = void(ctx, lost)
	if err != nil || res.Outcome != payment.CancelVoided {
		t.Fatalf("the line again: %+v %v", res, err)
	}
	// A row with no check, and no row at all, are refused with the reason.
	res, err = void(ctx, ingest.CancelLine{FileSHA: "f1", Line: 4, File: "nosuch.csv", RowLine: 2, Reason: "x"})
	if err != nil || res.Outcome != payment.CancelRefused || !strings.Contains(res.Note, "no row at nosuch.csv line 2") {
		t.Fatalf("no such row: %+v %v", res, err)
	}
}
