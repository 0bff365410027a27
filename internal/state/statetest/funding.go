package statetest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// Funding-source rows: loading, lifecycle, ownership, observation,
// recovery.
var fundingCases = []testCase{
	{"LoaderKinds", testFundingLoaderKinds},
	{"LoadVisibleOnlyAfterCommit", testFundingLoadVisibleOnlyAfterCommit},
	{"RowsApartFromPayments", testFundingRowsApartFromPayments},
	{"Lifecycle", testFundingLifecycle},
	{"SettledRowKeepsOnlyLastDigits", testSettledSourceRowKeepsOnlyLastDigits},
	{"SourceOwnership", testFundingSourceOwnership},
	{"ObserveSources", testObserveSources},
	{"RecoverSourcesInFlight", testRecoverSourcesInFlight},
	{"Reopens", testFundingLedgerReopens},
	{"RestoreSuspectsFundingRows", testRestoreSuspectsFundingRows},
	{"PruneSources", testPruneSources},
}

func testFundingLoaderKinds(t *testing.T, be Backend) {
	d := open(t, be)
	if _, err := d.BeginBatch(payment.FileMeta{Kind: "mystery", Name: "m.csv", SHA256: "m"}); !errors.Is(err, state.ErrWrongKind) {
		t.Fatalf("unknown kind: %v, want ErrWrongKind", err)
	}
	l, err := d.BeginBatch(payment.FileMeta{Kind: payment.KindSources, Name: "s.csv", SHA256: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Add(2, pay("1111000001", 1)); !errors.Is(err, state.ErrWrongKind) || !strings.Contains(err.Error(), "AddSource") {
		t.Fatalf("payment into a funding-source batch: %v", err)
	}
	fl := sourceLoader(t, l)
	if err := fl.AddSource(2, verifyReq("src-1")); !errors.Is(err, state.ErrWrongKind) {
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
	if err := sourceLoader(t, lv).AddSource(2, srcReq(2)); !errors.Is(err, state.ErrWrongKind) {
		t.Fatalf("funding source into a verification batch: %v", err)
	}
	if err := sourceLoader(t, lv).AddSource(2, verifyReq("src-1")); err != nil {
		t.Fatal(err)
	}
	if _, err := lv.Commit(1, 0); err != nil {
		t.Fatal(err)
	}

	lp, _ := d.BeginBatch(payment.FileMeta{Name: "p.csv", SHA256: "p"})
	if err := sourceLoader(t, lp).AddSource(2, srcReq(3)); !errors.Is(err, state.ErrWrongKind) {
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
	d.invariants()
}

func testFundingLoadVisibleOnlyAfterCommit(t *testing.T, be Backend) {
	d := open(t, be) // chunks of 3
	l, _ := d.BeginBatch(payment.FileMeta{Kind: payment.KindSources, Name: "a.csv", SHA256: "a"})
	for i := range 5 {
		if err := sourceLoader(t, l).AddSource(i+2, srcReq(i+1)); err != nil {
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
		sourceLoader(t, lr).AddSource(i+2, srcReq(i+1))
		sourceLoader(t, la).AddSource(i+2, srcReq(i+1))
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
		sourceLoader(t, lc).AddSource(i+2, srcReq(i+1))
	}
	d.reopen()
	if _, err := d.TakeOver(); err != nil { // the next leader discards what was loading
		t.Fatal(err)
	}
	for _, id := range []uint64{rb.ID, la.Batch().ID, lc.Batch().ID} {
		if got := srcKeys(t, func(fn func(*funding.Row) (bool, error)) error { return d.SourceRows(id, fn) }); len(got) != 0 {
			t.Fatalf("batch %d left rows %v", id, got)
		}
	}
	if got := srcKeys(t, d.OpenSourceRows); len(got) != 5 {
		t.Fatalf("open rows after reopen %v", got)
	}
	d.invariants()
}

func testFundingRowsApartFromPayments(t *testing.T, be Backend) {
	d := open(t, be)
	pb := load(t, d.DB, "pay.csv", 3)
	sb := loadSources(t, d.DB, "src.csv", payment.KindSources, srcReq(1), srcReq(2))
	d.Send(payment.RowKey{Batch: pb.ID, Line: 2})
	d.Created(payment.RowKey{Batch: pb.ID, Line: 2}, payment.CheckResult{CheckID: "chk-1", Status: "in_process"})
	submitSource(t, d.DB, payment.RowKey{Batch: sb.ID, Line: 2}, "src-1", funding.StatusPending)

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
	d.invariants()
}

func testFundingLifecycle(t *testing.T, be Backend) {
	d := open(t, be)
	tok := funding.Request{Method: funding.Processor, UserID: "u-9", ProcessorToken: "processor-sandbox-secret"}
	b := loadSources(t, d.DB, "src.csv", payment.KindSources, srcReq(1), tok, srcReq(3))
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
	r, err = d.Initiated(k, d.clock.Now(), "")
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
	submitSource(t, d.DB, k4, "src-4", funding.StatusPending)
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
	d.invariants()
}

// testSettledSourceRowKeepsOnlyLastDigits: as for a payment row, the full
// account number stays in the ledger only while the row has no result;
// then only the digits a report may show remain, also after a reopen.
func testSettledSourceRowKeepsOnlyLastDigits(t *testing.T, be Backend) {
	d := open(t, be)
	b := loadSources(t, d.DB, "keep.csv", payment.KindSources,
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
	d.reopen()
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

func testFundingSourceOwnership(t *testing.T, be Backend) {
	d := open(t, be)
	b := loadSources(t, d.DB, "src.csv", payment.KindSources, srcReq(1), srcReq(2))
	ka, kb := payment.RowKey{Batch: b.ID, Line: 2}, payment.RowKey{Batch: b.ID, Line: 3}
	submitSource(t, d.DB, ka, "src-1", funding.StatusPending)

	d.SendSource(kb, nil)
	if _, err := d.SourceCreated(kb, funding.Result{SourceID: "src-1", Status: funding.StatusPending}); !errors.Is(err, payment.ErrCheckOwned) {
		t.Fatalf("a source owned by another row: %v, want ErrCheckOwned", err)
	}
	if r, _ := d.SourceRow(kb); r.State != payment.InFlight || r.SourceID != "" {
		t.Fatalf("the refused row changed: %+v", r)
	}
	bb, _ := d.Batch(b.ID)
	if bb.Counts[payment.InFlight] != 1 || bb.Counts[payment.Submitted] != 1 {
		t.Fatalf("counts after a refusal %v", bb.Counts)
	}
	owners, err := d.SourceOwners([]string{"src-1", "src-x"})
	if err != nil || !reflect.DeepEqual(owners, map[string]payment.RowKey{"src-1": ka}) {
		t.Fatalf("owners %v %v", owners, err)
	}

	// Two verifications of src-1 (a second file, say) both settle, and
	// neither takes the source from the row that created it.
	v := loadSources(t, d.DB, "verify.csv", payment.KindVerifications, verifyReq("src-1"), verifyReq("src-1"))
	for line := uint32(2); line <= 3; line++ {
		kv := payment.RowKey{Batch: v.ID, Line: line}
		d.SendSource(kv, nil)
		r, err := d.SourceCreated(kv, funding.Result{SourceID: "src-1", Status: funding.StatusVerified})
		if err != nil || r.State != payment.Submitted || r.Status != funding.StatusVerified {
			t.Fatalf("verification %s: %+v %v", kv, r, err)
		}
	}
	if owners, _ := d.SourceOwners([]string{"src-1"}); owners["src-1"] != ka {
		t.Fatalf("a verification took the source: %v", owners)
	}
	// The verifications are not tracked: their status is verified.
	if got := srcKeys(t, d.TrackedSourceRows); !reflect.DeepEqual(got, []payment.RowKey{ka}) {
		t.Fatalf("tracked %v", got)
	}
	rep := d.invariants()
	if rep.Sources != 1 || rep.SourceRows != 4 {
		t.Fatalf("report: %d sources, %d funding rows", rep.Sources, rep.SourceRows)
	}
}

func testObserveSources(t *testing.T, be Backend) {
	d := open(t, be)
	b := loadSources(t, d.DB, "src.csv", payment.KindSources, srcReq(1), srcReq(2), srcReq(3), srcReq(4))
	k := func(line uint32) payment.RowKey { return payment.RowKey{Batch: b.ID, Line: line} }
	submitSource(t, d.DB, k(2), "src-2", funding.StatusPending)
	submitSource(t, d.DB, k(3), "src-3", funding.StatusUnverified)
	submitSource(t, d.DB, k(4), "src-4", funding.StatusPending)
	d.SendSource(k(5), nil)

	if got, err := d.ObserveSources(nil, d.clock.Now()); err != nil || len(got) != 0 {
		t.Fatalf("no observations: %v %v", got, err)
	}
	at := time.Date(2026, 5, 2, 8, 0, 0, 0, time.FixedZone("x", 3600))
	changed, err := d.ObserveSources([]funding.Observation{
		{Key: k(2), Status: funding.StatusVerified},
		{Key: k(3), Status: funding.StatusVerified}, // unverified is not tracked: kept
		{Key: k(4), Status: funding.StatusPending},  // seen again: no step
		{Key: k(5), Status: funding.StatusVerified}, // no source yet
	}, at)
	if err != nil || len(changed) != 1 || changed[k(2)] == nil {
		t.Fatalf("changed %v %v", changed, err)
	}
	r := changed[k(2)]
	last := r.History[len(r.History)-1]
	if r.Status != funding.StatusVerified || !r.StatusSeenAt.Equal(at) || r.StatusSeenAt.Location() != time.UTC ||
		last.Via != payment.Observe || last.CheckStatus != "verified" || last.State != payment.Submitted {
		t.Fatalf("observed row %+v, last step %+v", r, last)
	}
	if r3, _ := d.SourceRow(k(3)); r3.Status != funding.StatusUnverified || len(r3.History) != 3 {
		t.Fatalf("an untracked status changed: %+v", r3)
	}
	if r4, _ := d.SourceRow(k(4)); len(r4.History) != 3 {
		t.Fatalf("a status seen again added a step: %+v", r4.History)
	}
	// Once verified, the row keeps it.
	if changed, _ := d.ObserveSources([]funding.Observation{{Key: k(2), Status: funding.StatusDeleted}}, at); len(changed) != 0 {
		t.Fatalf("a verified row changed: %v", changed)
	}
	if got := srcKeys(t, d.TrackedSourceRows); !reflect.DeepEqual(got, []payment.RowKey{k(4)}) {
		t.Fatalf("tracked %v", got)
	}
	if _, err := d.ObserveSources([]funding.Observation{{Key: k(99), Status: funding.StatusVerified}}, at); !errors.Is(err, payment.ErrNotFound) {
		t.Fatalf("unknown row: %v", err)
	}
	d.invariants()
}

func testRecoverSourcesInFlight(t *testing.T, be Backend) {
	d := open(t, be)
	pb := load(t, d.DB, "pay.csv", 2)
	b := loadSources(t, d.DB, "src.csv", payment.KindSources, srcReq(1), srcReq(2), srcReq(3))
	k := func(line uint32) payment.RowKey { return payment.RowKey{Batch: b.ID, Line: line} }
	d.SendSource(k(2), nil)
	d.SendSource(k(3), nil)
	d.CustomerFound(k(3), "u-3", "")
	d.Send(payment.RowKey{Batch: pb.ID, Line: 2})
	d.reopen()
	n, err := d.RecoverSourcesInFlight()
	if err != nil || n != 2 {
		t.Fatalf("RecoverSourcesInFlight = %d, %v", n, err)
	}
	for _, line := range []uint32{2, 3} {
		r, _ := d.SourceRow(k(line))
		if r.State != payment.InDoubt || r.History[len(r.History)-1].Via != payment.Doubt || r.Request.Account == "" {
			t.Fatalf("recovered row %+v: must be in doubt and keep its account", r)
		}
	}
	if r, _ := d.SourceRow(k(3)); r.UserID != "u-3" {
		t.Fatalf("the customer found was lost: %+v", r)
	}
	if r, _ := d.Row(payment.RowKey{Batch: pb.ID, Line: 2}); r.State != payment.InFlight {
		t.Fatalf("RecoverSourcesInFlight moved a payment row: %s", r.State)
	}
	if n, err := d.RecoverInFlight(); err != nil || n != 1 {
		t.Fatalf("RecoverInFlight = %d, %v: it must see only the payment row", n, err)
	}
	if n, _ := d.RecoverSourcesInFlight(); n != 0 {
		t.Fatalf("a second recovery found %d", n)
	}
	bb, _ := d.Batch(b.ID)
	if bb.Counts[payment.InDoubt] != 2 || bb.Counts[payment.Pending] != 1 {
		t.Fatalf("counts %v", bb.Counts)
	}
	d.invariants()
}

func testFundingLedgerReopens(t *testing.T, be Backend) {
	d := open(t, be)
	pb := load(t, d.DB, "pay.csv", 2)
	b := loadSources(t, d.DB, "src.csv", payment.KindSources, srcReq(1), srcReq(2), srcReq(3))
	v := loadSources(t, d.DB, "v.csv", payment.KindVerifications, verifyReq("src-1"))
	k := func(line uint32) payment.RowKey { return payment.RowKey{Batch: b.ID, Line: line} }
	submitSource(t, d.DB, k(2), "src-1", funding.StatusPending)
	d.Initiated(k(2), time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), "")
	d.SendSource(k(3), nil)
	d.DoubtSource(k(3), "timeout")
	submitSource(t, d.DB, payment.RowKey{Batch: v.ID, Line: 2}, "src-1", funding.StatusVerified)

	type view struct {
		Rows            []*funding.Row
		Open, Tracked   []payment.RowKey
		Owners          map[string]payment.RowKey
		Batches         []payment.Batch
		PayOpen, PayAll []payment.RowKey
	}
	look := func() view {
		var w view
		for _, id := range []uint64{b.ID, v.ID} {
			d.SourceRows(id, func(r *funding.Row) (bool, error) { w.Rows = append(w.Rows, r); return true, nil })
		}
		w.Open, w.Tracked = srcKeys(t, d.OpenSourceRows), srcKeys(t, d.TrackedSourceRows)
		w.Owners, _ = d.SourceOwners([]string{"src-1"})
		w.Batches, _ = d.Batches()
		w.PayOpen = payKeys(t, d.OpenRows)
		w.PayAll = payKeys(t, func(fn func(*payment.Row) (bool, error)) error { return d.Rows(pb.ID, fn) })
		return w
	}
	before := look()
	d.reopen()
	after := look()
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("reopened ledger differs:\nbefore %+v\nafter  %+v", before, after)
	}
	if len(after.Rows) != 4 || len(after.Open) != 2 || len(after.Tracked) != 1 || after.Owners["src-1"] != k(2) ||
		after.Batches[1].Kind != payment.KindSources || after.Batches[2].Kind != payment.KindVerifications || len(after.PayOpen) != 2 {
		t.Fatalf("reopened view %+v", after)
	}
	d.invariants()
}
