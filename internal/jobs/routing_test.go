package jobs

import (
	"context"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/sandbox"
)

// A payment row whose routing number the service's bank directory does
// not know is refused at ingest with the directory's reason and the fix;
// with ingest.on_invalid: skip_rows the other rows go on and are paid.
func TestUnknownRoutingNumberRefusesItsRow(t *testing.T) {
	c := newCycle(t)
	ctx := context.Background()
	c.env.Cfg.Ingest.OnInvalid = config.OnInvalidSkipRows
	c.env.ingest = ingest.New(c.env.DB, c.env.ingestOptions())
	c.drop("pay.csv", "amount,memo,name,email,bank_routing,bank_account\n"+
		"10.00,a,Ann,a@example.com,999900001,1111000016\n"+
		"11.00,b,Bob,b@example.com,"+sandbox.UnknownRouting+",1111000016\n"+
		"12.00,c,Cy,c@example.com,999900001,1111000016\n")
	out, err := c.env.Ingest(ctx)
	if err != nil || len(out) != 1 || out[0].Outcome != ingest.AcceptedWithRejects || out[0].Valid != 2 || out[0].Rejected != 1 {
		t.Fatalf("ingest: %+v %v", out, err)
	}
	rej := c.outboxCSV("pay.csv.rejects")
	h := rej[0]
	if len(rej) != 2 || rej[1][col(h, "line")] != "3" || rej[1][col(h, "column")] != "bank_routing" ||
		!strings.Contains(rej[1][col(h, "message")], "knows no bank with routing number "+sandbox.UnknownRouting) {
		t.Fatalf("rejects: %q", rej)
	}
	if sum, _, err := c.env.Submit(ctx); err != nil || sum.Created != 2 {
		t.Fatalf("submit: %+v %v", sum, err)
	}
	res := c.outboxCSV("pay.csv.results")
	if len(res) != 3 || res[1][col(res[0], "bank")] != "Sandbox Test Bank" {
		t.Errorf("results report: %q", res)
	}
	if _, err := c.env.Reconcile(ctx, nil); err != nil {
		t.Fatal(err)
	}
	st := c.outboxCSV("status-")
	for _, rec := range st[1:] {
		if rec[col(st[0], "bank")] != "Sandbox Test Bank" {
			t.Errorf("status line %q: bank %q", rec, rec[col(st[0], "bank")])
		}
	}
}
