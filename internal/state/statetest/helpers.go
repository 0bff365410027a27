package statetest

import (
	"fmt"
	"testing"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// pay is a valid payment to account acct.
func pay(acct string, cents int64) payment.Payment {
	return payment.Payment{Amount: money.Cents(cents), Memo: "m", Name: "n", Email: "a@b.c", BankRouting: "999900001", BankAccount: acct}
}

// key is the key of row line of batch b.
func key(b payment.Batch, line uint32) payment.RowKey { return payment.RowKey{Batch: b.ID, Line: line} }

// load commits a payment batch of n rows on lines 2..n+1 and returns it.
func load(t *testing.T, d *state.DB, name string, n int) payment.Batch {
	t.Helper()
	l, err := d.BeginBatch(payment.FileMeta{Name: name, SHA256: "sha-" + name, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := l.Add(i+2, pay(fmt.Sprintf("11110000%02d", i%22+1), int64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	b, err := l.Commit(n, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sourceLoader is the loader's funding side. The one type assertion on a
// loader is here: BeginBatch returns a payment.Loader.
func sourceLoader(t *testing.T, l payment.Loader) funding.Loader {
	t.Helper()
	fl, ok := l.(funding.Loader)
	if !ok {
		t.Fatalf("the loader %T takes no funding rows", l)
	}
	return fl
}

// srcReq is an on-demand request for account number 11110000NN.
func srcReq(n int) funding.Request {
	return funding.Request{Method: funding.OnDemand, Routing: "999900001", Account: fmt.Sprintf("11110000%02d", n),
		AccountType: "checking", Customer: funding.Customer{FirstName: "A", LastName: "B", Email: fmt.Sprintf("c%d@example.com", n)}}
}

func verifyReq(source string) funding.Request {
	return funding.Request{Method: funding.Verify, UserID: "u-1", SourceID: source, Amounts: [2]money.Cents{3, 7}}
}

// loadSources commits a batch of kind with reqs on lines 2.. and returns it.
func loadSources(t *testing.T, d *state.DB, name string, kind payment.BatchKind, reqs ...funding.Request) payment.Batch {
	t.Helper()
	l, err := d.BeginBatch(payment.FileMeta{Kind: kind, Name: name, SHA256: "sha-" + name, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reqs {
		if err := sourceLoader(t, l).AddSource(i+2, r); err != nil {
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

func payKeys(t *testing.T, scan func(func(*payment.Row) (bool, error)) error) []payment.RowKey {
	t.Helper()
	var out []payment.RowKey
	if err := scan(func(r *payment.Row) (bool, error) { out = append(out, r.Key); return true, nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// batchRows is the keys of one payment batch's rows.
func batchRows(t *testing.T, d *state.DB, id uint64) []payment.RowKey {
	t.Helper()
	return payKeys(t, func(fn func(*payment.Row) (bool, error)) error { return d.Rows(id, fn) })
}

// batchSources is the keys of one batch's funding rows.
func batchSources(t *testing.T, d *state.DB, id uint64) []payment.RowKey {
	t.Helper()
	return srcKeys(t, func(fn func(*funding.Row) (bool, error)) error { return d.SourceRows(id, fn) })
}

// submit drives a pending payment row to submitted with check id.
func submit(t *testing.T, d *state.DB, k payment.RowKey, id string, status payment.Status) *payment.Row {
	t.Helper()
	if _, err := d.Send(k); err != nil {
		t.Fatal(err)
	}
	r, err := d.Created(k, payment.CheckResult{CheckID: id, Status: status})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// submitSource drives a pending row to submitted with source id and status.
func submitSource(t *testing.T, d *state.DB, k payment.RowKey, id string, status funding.Status) *funding.Row {
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

// row returns one payment row, or fails the test.
func row(t *testing.T, d *state.DB, k payment.RowKey) *payment.Row {
	t.Helper()
	r, err := d.Row(k)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sourceRow returns one funding row, or fails the test.
func sourceRow(t *testing.T, d *state.DB, k payment.RowKey) *funding.Row {
	t.Helper()
	r, err := d.SourceRow(k)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// batch returns one batch, or fails the test.
func batch(t *testing.T, d *state.DB, id uint64) *payment.Batch {
	t.Helper()
	b, err := d.Batch(id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
