package statetest

import (
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

// Line records (payment.LineLedger), the one store of every applied kind
// with a call per line: the intent is recorded once, before the request
// leaves, and found again after a restart; a line settles once; a file's
// lines list in line order; and `batchd check` reads every kind's bucket.
var lineCases = []testCase{
	{"IntentOnceSettleOnce", testLineRecords},
}

// lineRecord is a kind's record as the store sees it: anything with its
// "key".
type lineRecord struct {
	Key     payment.LineKey `json:"key"`
	Note    string          `json:"note"`
	Outcome string          `json:"outcome"`
}

var testLines = payment.LineStore[lineRecord]{
	Bucket: payment.KindLinks.Lines(), Noun: "test line",
	Key:   func(r *lineRecord) payment.LineKey { return r.Key },
	Final: func(r *lineRecord) bool { return r.Outcome != "" },
	Valid: func(r *lineRecord) string {
		if r.Note == "" {
			return " and a note"
		}
		return ""
	},
}

func testLineRecords(t *testing.T, be Backend) {
	f := open(t, be)
	k := payment.LineKey{File: "cd34", Line: 3}
	rec, fresh, err := testLines.Intent(f, lineRecord{Key: k, Note: "first"})
	if err != nil || !fresh || rec.Note != "first" {
		t.Fatalf("intent: %+v fresh=%v err=%v", rec, fresh, err)
	}
	if _, _, err := testLines.Intent(f, lineRecord{Key: payment.LineKey{File: "cd34", Line: 4}}); err == nil {
		t.Fatal("a record its kind calls invalid was recorded")
	}
	if _, err := testLines.Settle(f, payment.LineKey{File: "cd34", Line: 9}, func(r *lineRecord) { r.Outcome = "done" }); err == nil {
		t.Fatal("a line with no intent was settled")
	}
	f.reopen()
	again, fresh, err := testLines.Intent(f, lineRecord{Key: k, Note: "second"})
	if err != nil || fresh || again.Note != "first" {
		t.Fatalf("the line again: %+v fresh=%v err=%v", again, fresh, err)
	}
	got, err := testLines.Settle(f, k, func(r *lineRecord) { r.Outcome = "done" })
	if err != nil || got.Outcome != "done" {
		t.Fatalf("settle: %+v %v", got, err)
	}
	if got, _ := testLines.Settle(f, k, func(r *lineRecord) { r.Outcome = "late" }); got.Outcome != "done" {
		t.Fatalf("a settled line changed: %+v", got)
	}
	if _, _, err := testLines.Intent(f, lineRecord{Key: payment.LineKey{File: "cd34", Line: 2}, Note: "earlier"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := testLines.Intent(f, lineRecord{Key: payment.LineKey{File: "ab12", Line: 7}, Note: "other file"}); err != nil {
		t.Fatal(err)
	}
	mine, err := testLines.List(f, "cd34")
	if err != nil || len(mine) != 2 || mine[0].Key.Line != 2 || mine[1].Key.Line != 3 {
		t.Fatalf("file cd34's lines: %+v %v", mine, err)
	}
	if all, err := testLines.List(f, ""); err != nil || len(all) != 3 || all[0].Key.File != "ab12" {
		t.Fatalf("every line: %+v %v", all, err)
	}
	f.invariants()
}
