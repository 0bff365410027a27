package statetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// A ledger that went back in time behind batchd's back (state's
// rewind.go): the first write refuses it, before any create could leave,
// and the takeover applies the restore rules. A file's older copy is
// refused when it is opened (the marker); a database's at its first write.
var rewindCases = []testCase{
	{"OriginChanged", func(t *testing.T, be Backend) { testRewind(t, be, false) }},
	{"CountBelowWatermarkAtCommit", func(t *testing.T, be Backend) { testRewind(t, be, true) }},
}

// sendWindow is the send window of the rewind cases' ledgers.
const sendWindow = 10 * time.Second

func testRewind(t *testing.T, be Backend, inPlace bool) {
	d := open(t, be, func(o *state.Options) { o.SendWindow = sendWindow })
	b := load(t, d.DB, "pay.csv", 5)
	k := func(line uint32) payment.RowKey { return key(b, line) }
	submit(t, d.DB, k(2), "chk-2", payment.StatusInProcess)
	d.Send(k(3)) // in flight in the older copy
	// Onboarding's rows call the service too: a customer and source to
	// create, and micro-deposits to verify.
	sb := loadSources(t, d.DB, "src.csv", payment.KindSources, srcReq(1))
	vb := loadSources(t, d.DB, "v.csv", payment.KindVerifications, verifyReq("src-9"))
	older := d.l.Older(t, d.DB)

	// Lost with the rewind: row 4 paid, row 5 sent.
	d.clock.Add(time.Minute)
	submit(t, d.DB, k(4), "chk-4", payment.StatusInProcess)
	d.Send(k(5))
	oldInstance := d.Instance()

	d.clock.Add(time.Minute)
	db, err := d.l.PutBack(t, d.DB, older, inPlace, d.opts)
	if err != nil {
		// A file: the marker says the copy is older than the ledger last
		// used, and it is never opened.
		if !errors.Is(err, state.ErrUnusable) || !strings.Contains(err.Error(), "older") {
			t.Fatalf("the ledger's older copy: %v; want it refused as older (state.ErrUnusable)", err)
		}
		return
	}
	d.DB = db

	// The first write is refused and changes nothing: row 4 shows
	// pending in the older copy, and its create must not leave.
	_, err = d.Send(k(4))
	var rwErr *state.RewindError
	if !errors.Is(err, state.ErrRewound) || !errors.As(err, &rwErr) {
		t.Fatalf("Send of a row the rewind showed pending: %v; want it refused (state.ErrRewound)", err)
	}
	if r := row(t, d.DB, k(4)); r.State != payment.Pending {
		t.Fatalf("row 4 is %s after the refused Send; want it unchanged (pending)", r.State)
	}
	if inPlace && (rwErr.Rewind.Seen <= rwErr.Rewind.Writes || rwErr.Rewind.Was != rwErr.Rewind.Now) {
		t.Fatalf("rewind in place %+v: want the count below the one seen, the origin unchanged", rwErr.Rewind)
	}
	if !inPlace && rwErr.Rewind.Was == rwErr.Rewind.Now {
		t.Fatalf("rewind to another database %+v: want the origin changed", rwErr.Rewind)
	}
	if _, err := d.Doubt(k(3), "timeout"); !errors.Is(err, state.ErrRewound) {
		t.Fatalf("a second write before the takeover: %v; want it refused too", err)
	}
	if _, err := d.SendSource(key(sb, 2), nil); !errors.Is(err, state.ErrRewound) {
		t.Fatalf("an onboarding row's intent before the takeover: %v; want it refused too", err)
	}

	rep, err := d.TakeOver()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rewind == nil || rep.Rewind.InDoubt != 6 || rep.Rewind.PreviousInstance != oldInstance {
		t.Fatalf("TakeOver = %+v (rewind %+v); want the rewind with its 6 rows without (4 payments, 2 onboarding rows) a check put in doubt", rep, rep.Rewind)
	}
	now := d.clock.Now()
	for line := uint32(3); line <= 6; line++ {
		r := row(t, d.DB, k(line))
		if r.State != payment.InDoubt || r.SendBy.Before(now.Add(sendWindow)) {
			t.Fatalf("row %d after the takeover: %s, send by %v; want in doubt, not released before %v (a create its lost intent allowed may still leave)",
				line, r.State, r.SendBy, now.Add(sendWindow))
		}
	}
	for _, kk := range []payment.RowKey{key(sb, 2), key(vb, 2)} {
		if r := sourceRow(t, d.DB, kk); r.State != payment.InDoubt || r.SendBy.Before(now.Add(sendWindow)) {
			t.Fatalf("onboarding row %s after the takeover: %s, send by %v; want in doubt, not released before %v", kk, r.State, r.SendBy, now.Add(sendWindow))
		}
	}
	if r := row(t, d.DB, k(2)); r.State != payment.Submitted || r.CheckID != "chk-2" {
		t.Fatalf("row 2 %s %q; want its check kept", r.State, r.CheckID)
	}
	if d.Instance() == oldInstance {
		t.Fatal("the ledger kept its instance: a new batch's labels could be a lost batch's")
	}
	if m, err := d.Restored(); err != nil || m == nil || !strings.Contains(m.From, "went back in time") {
		t.Fatalf("restored mark %+v, %v; want it set, naming the rewind", m, err)
	}
	// Work resumes: a new batch is sent, and the next takeover finds
	// nothing to do.
	nb := load(t, d.DB, "after.csv", 1)
	if _, err := d.Send(key(nb, 2)); err != nil {
		t.Fatalf("Send after the restore rules: %v", err)
	}
	if rep, err := d.TakeOver(); err != nil || rep.Rewind != nil {
		t.Fatalf("a second TakeOver = %+v, %v; want no rewind", rep, err)
	}
	d.invariants()
}
