package state

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

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

func payKeys(t *testing.T, scan func(func(*payment.Row) (bool, error)) error) []payment.RowKey {
	t.Helper()
	var out []payment.RowKey
	if err := scan(func(r *payment.Row) (bool, error) { out = append(out, r.Key); return true, nil }); err != nil {
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

func TestFundingLoaderKinds(t *testing.T) {
	d := open(t, t.TempDir())
	if _, err := d.BeginBatch(payment.FileMeta{Kind: "mystery", Name: "m.csv", SHA256: "m"}); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("unknown kind: %v, want ErrWrongKind", err)
	}
	l, err := d.BeginBatch(payment.FileMeta{Kind: payment.KindSources, Name: "s.csv", SHA256: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Add(2, pay("1111000001", 1)); !errors.Is(err, ErrWrongKind) || !strings.Contains(err.Error(), "AddSource") {
		t.Fatalf("payment into a funding-source batch: %v", err)
	}
	fl := l.(funding.Loader)
	if err := fl.AddSource(2, verifyReq("src-1")); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("verification into a funding-source batch: %v", err)
	}
	if err := fl.AddSource(3, srcReq(1)); err != nil {
		t.Fatal(err)
	}
	b, err := l.Commit(2, 1)
	if err != nil || b.Kind != payment.KindSources || b.Counts[payment.Pending] != 1 {
		t.Fatalf("commit: %+v %v", b, err)
	}

	lv, _ := d.BeginBatch(payment.FileMeta{Kind: payment.KindVerifications, Name: "v.csv", SHA256: "v"})
	if err := lv.(funding.Loader).AddSource(2, srcReq(2)); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("funding source into a verification batch: %v", err)
	}
	if err := lv.(funding.Loader).AddSource(2, verifyReq("src-1")); err != nil {
		t.Fatal(err)
	}
	if _, err := lv.Commit(1, 0); err != nil {
		t.Fatal(err)
	}

	lp, _ := d.BeginBatch(payment.FileMeta{Name: "p.csv", SHA256: "p"})
	if err := lp.(funding.Loader).AddSource(2, srcReq(3)); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("funding source into a payment batch: %v", err)
	}
	if err := lp.Abort(); err != nil {
		t.Fatal(err)
	}

	bs, err := d.Batches()
	if err != nil || len(bs) != 2 || bs[0].Kind != payment.KindSources || bs[1].Kind != payment.KindVerifications {
		t.Fatalf("batches %+v %v", bs, err)
	}
	if got, _ := d.Batch(bs[1].ID); got.Kind != payment.KindVerifications {
		t.Fatalf("Batch kind %q", got.Kind)
	}
	wantInvariants(t, d)
}

func TestFundingLoadVisibleOnlyAfterCommit(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir) // chunks of 3
	l, _ := d.BeginBatch(payment.FileMeta{Kind: payment.KindSources, Name: "a.csv", SHA256: "a"})
	for i := range 5 {
		if err := l.(funding.Loader).AddSource(i+2, srcReq(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if got := srcKeys(t, d.OpenSourceRows); len(got) != 0 {
		t.Fatalf("rows of a loading batch are open: %v", got)
	}
	b, err := l.Commit(5, 0)
	if err != nil || b.Counts[payment.Pending] != 5 {
		t.Fatalf("commit %+v %v", b, err)
	}
	if got := srcKeys(t, d.OpenSourceRows); len(got) != 5 || got[0] != (payment.RowKey{Batch: b.ID, Line: 2}) {
		t.Fatalf("open rows %v", got)
	}
	r, err := d.SourceRow(payment.RowKey{Batch: b.ID, Line: 4})
	if err != nil || r.State != payment.Pending || r.Request.Account != "1111000003" || len(r.History) != 1 {
		t.Fatalf("row %+v %v", r, err)
	}

	// Reject and Abort leave no row behind; a crash mid-load neither.
	lr, _ := d.BeginBatch(payment.FileMeta{Kind: payment.KindSources, Name: "r.csv", SHA256: "r"})
	la, _ := d.BeginBatch(payment.FileMeta{Kind: payment.KindSources, Name: "x.csv", SHA256: "x"})
	for i := range 4 {
		lr.(funding.Loader).AddSource(i+2, srcReq(i+1))
		la.(funding.Loader).AddSource(i+2, srcReq(i+1))
	}
	rb, err := lr.Reject(4, 0, "bad header")
	if err != nil || rb.Status != payment.BatchRejected || len(rb.Counts) != 0 {
		t.Fatalf("reject %+v %v", rb, err)
	}
	if err := la.Abort(); err != nil {
		t.Fatal(err)
	}
	lc, _ := d.BeginBatch(payment.FileMeta{Kind: payment.KindSources, Name: "c.csv", SHA256: "c"})
	for i := range 4 {
		lc.(funding.Loader).AddSource(i+2, srcReq(i+1))
	}
	d.Close()
	d = open(t, dir)
	for _, id := range []uint64{rb.ID, la.Batch().ID, lc.Batch().ID} {
		if got := srcKeys(t, func(fn func(*funding.Row) (bool, error)) error { return d.SourceRows(id, fn) }); len(got) != 0 {
			t.Fatalf("batch %d left rows %v", id, got)
		}
	}
	if got := srcKeys(t, d.OpenSourceRows); len(got) != 5 {
		t.Fatalf("open rows after reopen %v", got)
	}
	wantInvariants(t, d)
}

func TestFundingRowsApartFromPayments(t *testing.T) {
	d := open(t, t.TempDir())
	pb := load(t, d, "pay.csv", 3)
	sb := loadSources(t, d, "src.csv", payment.KindSources, srcReq(1), srcReq(2))
	d.Send(payment.RowKey{Batch: pb.ID, Line: 2})
	d.Created(payment.RowKey{Batch: pb.ID, Line: 2}, payment.CheckResult{CheckID: "chk-1", Status: "in_process"})
	submitSource(t, d, payment.RowKey{Batch: sb.ID, Line: 2}, "src-1", funding.StatusPending)

	for _, k := range payKeys(t, d.OpenRows) {
		if k.Batch != pb.ID {
			t.Fatalf("OpenRows yields %s of the funding batch", k)
		}
	}
	if got := payKeys(t, d.TrackedRows); len(got) != 1 || got[0].Batch != pb.ID {
		t.Fatalf("TrackedRows %v", got)
	}
	if got := srcKeys(t, d.OpenSourceRows); len(got) != 1 || got[0] != (payment.RowKey{Batch: sb.ID, Line: 3}) {
		t.Fatalf("OpenSourceRows %v", got)
	}
	if got := srcKeys(t, d.TrackedSourceRows); len(got) != 1 || got[0].Batch != sb.ID {
		t.Fatalf("TrackedSourceRows %v", got)
	}
	if got := payKeys(t, func(fn func(*payment.Row) (bool, error)) error { return d.Rows(sb.ID, fn) }); len(got) != 0 {
		t.Fatalf("Rows of a funding batch: %v", got)
	}
	if got := srcKeys(t, func(fn func(*funding.Row) (bool, error)) error { return d.SourceRows(pb.ID, fn) }); len(got) != 0 {
		t.Fatalf("SourceRows of a payment batch: %v", got)
	}
	if _, err := d.SourceRow(payment.RowKey{Batch: pb.ID, Line: 2}); !errors.Is(err, payment.ErrNotFound) {
		t.Fatalf("SourceRow of a payment row: %v", err)
	}
	if _, err := d.Row(payment.RowKey{Batch: sb.ID, Line: 2}); !errors.Is(err, payment.ErrNotFound) {
		t.Fatalf("Row of a funding row: %v", err)
	}
	// A check id and a source id that are the same text do not collide.
	if owners, _ := d.CheckOwners([]string{"src-1"}); len(owners) != 0 {
		t.Fatalf("a source id owns a check: %v", owners)
	}
	if _, err := d.Send(payment.RowKey{Batch: sb.ID, Line: 3}); !errors.Is(err, payment.ErrNotFound) {
		t.Fatalf("Send of a funding row: %v", err)
	}
	if _, err := d.SendSource(payment.RowKey{Batch: pb.ID, Line: 3}, nil); !errors.Is(err, payment.ErrNotFound) {
		t.Fatalf("SendSource of a payment row: %v", err)
	}
	wantInvariants(t, d)
}

func TestFundingLifecycle(t *testing.T) {
	d := open(t, t.TempDir())
	tok := funding.Request{Method: funding.Processor, UserID: "u-9", ProcessorToken: "processor-sandbox-secret"}
	b := loadSources(t, d, "src.csv", payment.KindSources, srcReq(1), tok, srcReq(3))
	k, kp, k4 := payment.RowKey{Batch: b.ID, Line: 2}, payment.RowKey{Batch: b.ID, Line: 3}, payment.RowKey{Batch: b.ID, Line: 4}
	illegal := func(what string, _ *funding.Row, err error) {
		t.Helper()
		if !errors.Is(err, payment.ErrIllegal) {
			t.Fatalf("%s: %v, want ErrIllegal", what, err)
		}
	}

	_, err := d.CustomerFound(k, "u-1", "")
	illegal("CustomerFound on a pending row", nil, err)
	r, err := d.SourceCreated(k, funding.Result{SourceID: "s"})
	illegal("SourceCreated on a pending row", r, err)
	r, err = d.Initiated(k, time.Now(), "")
	illegal("Initiated on a pending row", r, err)
	r, err = d.SendSource(k, nil)
	if err != nil || r.State != payment.InFlight || r.Attempts != 1 || r.AttemptAt.IsZero() {
		t.Fatalf("SendSource: %+v %v", r, err)
	}
	r, err = d.SendSource(k, nil)
	illegal("second SendSource", r, err)
	if r, err = d.CustomerFound(k, "u-1", "created"); err != nil || r.UserID != "u-1" || r.State != payment.InFlight {
		t.Fatalf("CustomerFound: %+v %v", r, err)
	}
	if r, err = d.CustomerFound(k, "u-1", ""); err != nil || len(r.History) != 3 {
		t.Fatalf("the same customer again added a step: %+v %v", r, err)
	}
	if _, err := d.CustomerFound(k, "", ""); err == nil {
		t.Fatal("CustomerFound without a user_id was accepted")
	}
	if r, err = d.DoubtSource(k, "timeout"); err != nil || r.State != payment.InDoubt || r.Error != "timeout" {
		t.Fatalf("DoubtSource: %+v %v", r, err)
	}
	r, err = d.RejectSource(k, "no", "")
	illegal("RejectSource from in doubt", r, err)
	if r, err = d.CustomerFound(k, "u-1", "found by email after a lost answer"); err != nil || r.State != payment.InDoubt {
		t.Fatalf("CustomerFound in doubt: %+v %v", r, err)
	}
	if r, err = d.ReleaseSource(k, "no source found"); err != nil || r.State != payment.Pending || r.UserID != "u-1" {
		t.Fatalf("ReleaseSource: %+v %v", r, err)
	}
	r, err = d.ReleaseSource(k, "again")
	illegal("ReleaseSource of a pending row", r, err)
	d.SendSource(k, nil)
	if _, err := d.SourceCreated(k, funding.Result{}); err == nil {
		t.Fatal("SourceCreated without a source id was accepted")
	}
	r, err = d.SourceCreated(k, funding.Result{SourceID: "src-1", Status: funding.StatusPending, BankName: "Bank", LastFour: "0001", NextStep: "initiate"})
	if err != nil || r.State != payment.Submitted || r.Attempts != 2 || r.Error != "" || r.NextStep != "initiate" || r.StatusSeenAt.IsZero() {
		t.Fatalf("SourceCreated: %+v %v", r, err)
	}
	r, err = d.DoubtSource(k, "late")
	illegal("DoubtSource of a submitted row", r, err)
	r, err = d.CustomerFound(k, "u-2", "")
	illegal("CustomerFound on a submitted row", r, err)
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	if r, err = d.Initiated(k, at, ""); err != nil || !r.Initiated.Equal(at) || r.NextStep != "" || r.State != payment.Submitted {
		t.Fatalf("Initiated: %+v %v", r, err)
	}
	var path []string
	for _, s := range r.History {
		path = append(path, fmt.Sprintf("%s/%s/%s", s.Via, s.State, string(s.CheckStatus)))
	}
	want := "/pending/ send/in_flight/ customer/in_flight/ doubt/in_doubt/ customer/in_doubt/ release/pending/ send/in_flight/ create/submitted/pending initiate/submitted/pending"
	if got := strings.Join(path, " "); got != want {
		t.Fatalf("history %q\nwant    %q", got, want)
	}

	// A processor row: before is recorded, and the token is not kept
	// once the row has a result.
	before := []string{"old-1", "old-2"}
	if r, err = d.SendSource(kp, before); err != nil || !reflect.DeepEqual(r.SourcesBefore, before) || r.Request.ProcessorToken == "" {
		t.Fatalf("SendSource with before: %+v %v", r, err)
	}
	if r, err = d.RejectSource(kp, "INVALID_PROCESSOR_TOKEN: used", funding.BankLinkStep); err != nil ||
		r.State != payment.Rejected || r.Request.ProcessorToken != "" || r.NextStep != funding.BankLinkStep || r.Error == "" {
		t.Fatalf("RejectSource: %+v %v", r, err)
	}
	r, err = d.SendSource(kp, nil)
	illegal("SendSource of a rejected row", r, err)

	// Micro-deposits that cannot be initiated say what to do instead.
	submitSource(t, d, k4, "src-4", funding.StatusPending)
	if r, err = d.Initiated(k4, at, funding.BankLinkStep); err != nil || !r.Initiated.IsZero() || r.NextStep != funding.BankLinkStep {
		t.Fatalf("Initiated refused: %+v %v", r, err)
	}
	bb, _ := d.Batch(b.ID)
	if !reflect.DeepEqual(bb.Counts, map[payment.RowState]int{payment.Submitted: 2, payment.Rejected: 1}) || bb.OpenRows() != 0 {
		t.Fatalf("counts %v", bb.Counts)
	}
	if got := srcKeys(t, d.TrackedSourceRows); !reflect.DeepEqual(got, []payment.RowKey{k, k4}) {
		t.Fatalf("tracked %v", got)
	}
	wantInvariants(t, d)
}

// TestSettledSourceRowKeepsOnlyLastDigits: as for a payment row, the full
// account number stays in the ledger only while the row has no result;
// then only the digits a report may show remain, also after a reopen.
func TestSettledSourceRowKeepsOnlyLastDigits(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir)
	b := loadSources(t, d, "keep.csv", payment.KindSources,
		funding.Request{Method: funding.OnDemand, UserID: "u-1", Routing: "999900001", Account: "1111000016", AccountType: "checking"},
		funding.Request{Method: funding.OnDemand, UserID: "u-2", Routing: "999900001", Account: "1111000017", AccountType: "checking"})
	k1, k2 := payment.RowKey{Batch: b.ID, Line: 2}, payment.RowKey{Batch: b.ID, Line: 3}
	for _, k := range []payment.RowKey{k1, k2} {
		if _, err := d.SendSource(k, nil); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := d.SourceRow(k1); err != nil || r.Request.Account != "1111000016" {
		t.Fatalf("in flight: %+v %v (the account is needed until the row has a result)", r, err)
	}
	if _, err := d.SourceCreated(k1, funding.Result{SourceID: "s-1", Status: funding.StatusVerified}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.RejectSource(k2, "This bank account is associated with another user", ""); err != nil {
		t.Fatal(err)
	}
	d.Close()
	d = open(t, dir)
	defer d.Close()
	for k, last := range map[payment.RowKey]string{k1: "0016", k2: "0017"} {
		r, err := d.SourceRow(k)
		if err != nil {
			t.Fatal(err)
		}
		if r.Request.Account != "" || r.Request.AccountLast4 != last || r.Request.LastFour() != last {
			t.Errorf("%s: account %q, last digits %q, want only %q", k, r.Request.Account, r.Request.AccountLast4, last)
		}
	}
}
