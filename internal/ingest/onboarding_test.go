package ingest

import (
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

// The ledger's loader takes funding-source and verification rows.
var _ funding.Loader = loaderOf(nil)

func loaderOf(l payment.Loader) funding.Loader { fl, _ := l.(funding.Loader); return fl }

// sourceRows reads a batch's funding rows from the ledger.
func (r *rig) sourceRows(batch uint64) []*funding.Row {
	r.t.Helper()
	var out []*funding.Row
	if err := r.db.SourceRows(batch, func(row *funding.Row) (bool, error) { out = append(out, row); return true, nil }); err != nil {
		r.t.Fatal(err)
	}
	return out
}

func (r *rig) openSourceRows() int {
	n := 0
	r.db.OpenSourceRows(func(*funding.Row) (bool, error) { n++; return true, nil })
	return n
}

func TestFundingSourceAndVerificationFiles(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, nil)
		r.dropFile("links.csv", "../../testdata/funding-sources.csv")
		r.dropFile("statement.csv", "../../testdata/verifications.csv")
		r.drop("pay.csv", twoRows)
		out, err := r.run(r.rem)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 3 {
			t.Fatalf("outcomes %+v", out)
		}
		links, pay, statement := out[0], out[1], out[2]
		if links.Outcome != "accepted" || links.Rows != 5 || links.Valid != 5 || links.Kind != payment.KindSources {
			t.Fatalf("links %+v", links)
		}
		mustContain(t, links.Detail, "/archive/2026-11-20/links.csv: funding-sources batch ")
		if statement.Outcome != "accepted" || statement.Valid != 2 || statement.Kind != payment.KindVerifications {
			t.Fatalf("statement %+v", statement)
		}
		mustContain(t, statement.Detail, ": verifications batch ")
		if pay.Outcome != "accepted" || pay.Kind != payment.KindPayments || !strings.HasSuffix(pay.Detail, "/archive/2026-11-20/pay.csv") {
			t.Fatalf("payments %+v", pay)
		}
		if got := r.files("archive"); strings.Join(got, ",") != "2026-11-20/links.csv,2026-11-20/pay.csv,2026-11-20/statement.csv" {
			t.Fatalf("archive %v", got)
		}

		kinds := map[uint64]payment.BatchKind{}
		for _, b := range r.batches() {
			if b.Status != payment.BatchReady {
				t.Fatalf("batch %+v", b)
			}
			kinds[b.ID] = b.Kind
		}
		if kinds[links.Batch] != payment.KindSources || kinds[statement.Batch] != payment.KindVerifications || kinds[pay.Batch] != payment.KindPayments {
			t.Fatalf("batch kinds %v", kinds)
		}
		if r.pendingRows() != 2 || r.openSourceRows() != 7 {
			t.Fatalf("%d payment rows and %d funding rows open, want 2 and 7", r.pendingRows(), r.openSourceRows())
		}
		rows := r.sourceRows(links.Batch)
		lines, methods := []uint32{}, []funding.Method{}
		for _, row := range rows {
			lines, methods = append(lines, row.Key.Line), append(methods, row.Request.Method)
		}
		if len(rows) != 5 || lines[3] != 6 || methods[3] != funding.Processor || rows[2].Request.Account != "0123456789" ||
			rows[0].Request.Customer.Email != "ann@example.com" || rows[0].State != payment.Pending {
			t.Fatalf("funding rows: lines %v methods %v; %+v", lines, methods, rows[0])
		}
		v := r.sourceRows(statement.Batch)
		if len(v) != 2 || v[0].Request.Method != funding.Verify || v[0].Request.Amounts != [2]money.Cents{7, 15} {
			t.Fatalf("verification rows %+v", v)
		}
	})
}

func TestFundingSourceFileWithErrors(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, nil)
		r.dropFile("links.csv", "../../testdata/funding-sources-errors.csv")
		out, err := r.run(r.rem)
		if err != nil {
			t.Fatal(err)
		}
		o := out[0]
		if o.Outcome != "rejected" || o.Rows != 13 || o.Valid != 1 || o.Rejected != 12 || o.Kind != payment.KindSources {
			t.Fatalf("outcome %+v", o)
		}
		mustContain(t, o.Detail, "/failed/links.csv: funding-sources batch ", "12 of 13 rows are invalid")
		if r.openSourceRows() != 0 {
			t.Fatal("rows of a rejected file are open")
		}
		rep := r.read("outbox/links.csv.rejects.csv")
		mustContain(t, rep, `"line","column","value","message","severity"`,
			`"3","","****0001","same customer and account as line 2","error"`,
			`"6","method","micro-deposits","micro-deposit verification is deprecated for new bank accounts since 2026-06-08 (this file is read on 2026-11-20)`,
			`"10","processor_token","…(35 chars)","same processor_token as line 9: a token is exchanged once","error"`)
		mustContain(t, r.read("failed/links.csv.error.txt"), "12 of 13 rows are invalid", "links.csv.rejects.csv")
		if strings.Contains(rep, "secret-token") || strings.Contains(rep, "1111000001") {
			t.Fatal("the rejects report shows a token or an account number")
		}
	})
}

func TestFundingSourceSkipRows(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, func(o *Options) { o.OnInvalid = SkipRows })
		r.dropFile("statement.csv", "../../testdata/verifications-errors.csv")
		r.dropFile("links.csv", "../../testdata/funding-sources-errors.csv")
		out, err := r.run(r.rem)
		if err != nil {
			t.Fatal(err)
		}
		links, statement := out[0], out[1]
		if links.Outcome != "accepted-with-rejects" || links.Valid != 1 || links.Rejected != 12 {
			t.Fatalf("links %+v", links)
		}
		mustContain(t, links.Detail, "funding-sources batch ", "; 12 invalid rows skipped; see ")
		if statement.Outcome != "rejected" || statement.Valid != 0 {
			t.Fatalf("statement %+v", statement) // no valid row: rejected whatever the policy
		}
		if rows := r.sourceRows(links.Batch); len(rows) != 1 || rows[0].Key.Line != 2 {
			t.Fatalf("rows %+v", rows)
		}
		mustContain(t, r.read("outbox/statement.csv.rejects.csv"), `"2","amount1","7","must be a micro-deposit in dollars from 0.01 to 0.99`)
	})
}

func TestUnreadableFundingSourceFile(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, nil)
		r.drop("links.csv", "user_id,routing_number,nickname\nu1,999900001,Main\n")
		r.drop("zeros.csv", "user_id,routing_number,account_number\nu1,11000015,1111000001\nu2,999900001,1111000002\n")
		r.drop("neither.csv", "fruit,colour\napple,red\n")
		r.drop("mostly.csv", "user_id,fruit\nu1,apple\n")
		out, err := r.run(r.rem)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 4 {
			t.Fatalf("outcomes %+v", out)
		}
		for _, o := range out {
			if o.Outcome != "unreadable" {
				t.Fatalf("outcome %+v", o)
			}
		}
		mustContain(t, r.read("failed/links.csv.error.txt"), "the file cannot be read as a funding-source file: line 1: "+
			"header row of a funding-source file lacks required column routing_number and account_number, or processor_token")
		mustContain(t, r.read("failed/zeros.csv.error.txt"), "a funding-source file: line 2, column routing_number: routing number ****0015 has 8 digits")
		// A header of no kind keeps the payment file's error.
		mustContain(t, r.read("failed/neither.csv.error.txt"), "the file cannot be read as a payment file: line 1, column fruit: unknown column")
		// A column of a funding-source file and none of a payment file's.
		mustContain(t, r.read("failed/mostly.csv.error.txt"), "the file cannot be read as a funding-source file: line 1, column fruit: unknown column")
		for _, b := range r.batches() {
			if b.Status != payment.BatchRejected {
				t.Fatalf("batch %+v", b)
			}
		}
	})
}

func TestFundingSourceFileTwice(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, nil)
		r.dropFile("links.csv", "../../testdata/funding-sources.csv")
		if _, err := r.run(r.rem); err != nil {
			t.Fatal(err)
		}
		r.dropFile("again.csv", "../../testdata/funding-sources.csv")
		out, err := r.run(r.rem)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 1 || out[0].Outcome != "duplicate" || out[0].Kind != payment.KindSources {
			t.Fatalf("outcomes %+v", out)
		}
		mustContain(t, out[0].Detail, "/failed/again.csv: funding-sources batch 1; duplicate: the same content was already ingested")
		if r.openSourceRows() != 5 {
			t.Fatalf("%d funding rows open", r.openSourceRows())
		}
	})
}
