package statetest

import (
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// Banks: the bank directory's answers are kept by routing number, the
// latest replacing the earlier, and survive a restart.
var bankCases = []testCase{
	{"KeptByRouting", testBanks},
}

func testBanks(t *testing.T, be Backend) {
	f := open(t, be)
	if b, err := f.Bank("021000021"); err != nil || b != nil {
		t.Fatalf("a routing number never asked: %+v %v", b, err)
	}
	if err := f.PutBank(payment.Bank{Routing: "021000021", Name: "First Bank", Known: true, Checked: Epoch}); err != nil {
		t.Fatal(err)
	}
	if err := f.PutBank(payment.Bank{Routing: "091999900", Checked: Epoch}); err != nil {
		t.Fatal(err)
	}
	if err := f.PutBank(payment.Bank{}); err == nil {
		t.Fatal("a bank without a routing number was recorded")
	}
	f.reopen()
	later := Epoch.Add(48 * time.Hour)
	if err := f.PutBank(payment.Bank{Routing: "021000021", Name: "First Bank NA", Known: true, Checked: later}); err != nil {
		t.Fatal(err)
	}
	b, err := f.Bank("021000021")
	if err != nil || b == nil || b.Name != "First Bank NA" || !b.Known || !b.Checked.Equal(later) {
		t.Fatalf("the latest answer: %+v %v", b, err)
	}
	if b, err := f.Bank("091999900"); err != nil || b == nil || b.Known {
		t.Fatalf("an unknown routing number: %+v %v", b, err)
	}
	f.invariants()
}
