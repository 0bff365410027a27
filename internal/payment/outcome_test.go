package payment

import (
	"testing"
	"time"
)

// Every status has the outcome the reports sum it under; a status
// batchd does not know is never counted as paid or as not paid.
func TestStatusOutcome(t *testing.T) {
	for s, want := range map[Status]Outcome{
		StatusDeposited: OutcomePaid,
		StatusInProcess: OutcomeOnItsWay, StatusInReview: OutcomeOnItsWay, StatusPrinted: OutcomeOnItsWay,
		StatusFailed: OutcomeNotPaid, StatusVoid: OutcomeNotPaid, StatusDeleted: OutcomeNotPaid,
		StatusUnknown: OutcomeOnItsWay, "processed": OutcomeOnItsWay, "": OutcomeOnItsWay,
	} {
		if got := s.Outcome(); got != want {
			t.Errorf("%q.Outcome() = %s, want %s", s, got, want)
		}
	}
	// A final status is paid or not paid; one that is not final is on its way.
	for s := range known {
		if s.Final() == (s.Outcome() == OutcomeOnItsWay) {
			t.Errorf("%s: final %v but outcome %s", s, s.Final(), s.Outcome())
		}
	}
}

func TestRowOutcome(t *testing.T) {
	for _, c := range []struct {
		row  Row
		want Outcome
	}{
		{Row{State: Submitted, CheckStatus: StatusDeposited}, OutcomePaid},
		{Row{State: Submitted, CheckStatus: StatusFailed}, OutcomeNotPaid},
		{Row{State: Submitted, CheckStatus: StatusPrinted}, OutcomeOnItsWay},
		{Row{State: Rejected}, OutcomeNotPaid},
		{Row{State: Pending}, OutcomeOnItsWay},
		{Row{State: Held}, OutcomeOnItsWay},
		{Row{State: InDoubt}, OutcomeOnItsWay},
	} {
		if got := c.row.Outcome(); got != c.want {
			t.Errorf("%s/%s: %s, want %s", c.row.State, c.row.CheckStatus, got, c.want)
		}
	}
}

// StatusSince is the first step in the current status, not the last
// time the status was seen; a void is batchd's only when batchd wrote it.
func TestStatusSinceAndVoidedByBatchd(t *testing.T) {
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	r := Row{State: Submitted, CheckStatus: StatusFailed, StatusSeenAt: t0.Add(72 * time.Hour), History: []Step{
		{At: t0, State: Pending},
		{At: t0.Add(time.Hour), State: Submitted, CheckStatus: StatusInProcess, Via: Create},
		{At: t0.Add(48 * time.Hour), State: Submitted, CheckStatus: StatusFailed, Via: Observe},
		{At: t0.Add(72 * time.Hour), State: Submitted, CheckStatus: StatusFailed, Via: Observe, Note: "heard again"},
	}}
	if got := r.StatusSince(); !got.Equal(t0.Add(48 * time.Hour)) {
		t.Fatalf("StatusSince = %v", got)
	}
	if _, ok := r.VoidedByBatchd(); ok {
		t.Fatal("a failed check is not voided by batchd")
	}
	r.CheckStatus = StatusVoid
	r.History[2] = Step{At: t0.Add(2 * time.Hour), State: Submitted, CheckStatus: StatusVoid, Via: Observe}
	if _, ok := r.VoidedByBatchd(); ok {
		t.Fatal("a void reconcile saw was made elsewhere")
	}
	r.History[2].Note = VoidedByBatchdNote + "risk result Fail is in submit.void_on_risk"
	if why, ok := r.VoidedByBatchd(); !ok || why != "risk result Fail is in submit.void_on_risk" {
		t.Fatalf("VoidedByBatchd = %q, %v", why, ok)
	}
	if (&Row{CheckStatus: StatusVoid, StatusSeenAt: t0}).StatusSince() != t0 {
		t.Fatal("without history StatusSince is StatusSeenAt")
	}
}
