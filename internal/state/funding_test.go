package state

import (
	"fmt"
	"testing"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

// The helpers of this package's tests of funding rows; the rows' rules
// are tested by the conformance suite (internal/state/statetest).

// srcReq is an on-demand request for account number 11110000NN.
func srcReq(n int) funding.Request {
	return funding.Request{Method: funding.OnDemand, Routing: "999900001", Account: fmt.Sprintf("11110000%02d", n),
		AccountType: "checking", Customer: funding.Customer{FirstName: "A", LastName: "B", Email: fmt.Sprintf("c%d@example.com", n)}}
}

func verifyReq(source string) funding.Request {
	return funding.Request{Method: funding.Verify, UserID: "u-1", SourceID: source, Amounts: [2]money.Cents{3, 7}}
}

// loadSources commits a batch of kind with reqs on lines 2.. and returns it.
func loadSources(t *testing.T, d *DB, name string, kind payment.BatchKind, reqs ...funding.Request) payment.Batch {
	t.Helper()
	l, err := d.BeginBatch(payment.FileMeta{Kind: kind, Name: name, SHA256: "sha-" + name, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reqs {
		if err := l.(funding.Loader).AddSource(i+2, r); err != nil {
			t.Fatal(err)
		}
	}
	b, err := l.Commit(len(reqs), 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func srcKeys(t *testing.T, scan func(func(*funding.Row) (bool, error)) error) []payment.RowKey {
	t.Helper()
	var out []payment.RowKey
	if err := scan(func(r *funding.Row) (bool, error) { out = append(out, r.Key); return true, nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// submitSource drives a pending row to submitted with source id and status.
func submitSource(t *testing.T, d *DB, k payment.RowKey, id string, status funding.Status) *funding.Row {
	t.Helper()
	if _, err := d.SendSource(k, nil); err != nil {
		t.Fatal(err)
	}
	r, err := d.SourceCreated(k, funding.Result{SourceID: id, Status: status, BankName: "Bank", LastFour: "0001"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// wantInvariants runs `batchd check`'s invariants on the open ledger.
func wantInvariants(t *testing.T, d *DB) *Report {
	t.Helper()
	rep := &Report{ByState: map[payment.RowState]int{}}
	if err := d.view(rep.invariants); err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("invariants broken: %v", rep.Faults)
	}
	return rep
}
