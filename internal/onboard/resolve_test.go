package onboard

import (
	"context"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/ach"
	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/sandbox"
)

// The tests below stop a process mid-request: the row is marked in flight
// (and its customer recorded) in the ledger, the request's effect is made
// at the service directly, and the next run must find it, not repeat it.

// inFlight marks a pending row in flight as a process that then died.
func (r *rig) inFlight(k payment.RowKey, before []string, userID string) {
	r.t.Helper()
	if _, err := r.db.SendSource(k, before); err != nil {
		r.t.Fatal(err)
	}
	if userID != "" {
		if _, err := r.db.CustomerFound(k, userID, ""); err != nil {
			r.t.Fatal(err)
		}
	}
}

func lastNote(row *funding.Row) string {
	for i := len(row.History) - 1; i >= 0; i-- {
		if row.History[i].Note != "" {
			return row.History[i].Note
		}
	}
	return ""
}

// TestRecoveredAccountRow: a source created by a request whose process
// died is found among the customer's sources (routing and last four) and
// bound; no second source is created.
func TestRecoveredAccountRow(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, friday, sandbox.Options{})
		ctx := context.Background()
		u, err := r.api.CreateUser(ctx, ach.UserRequest{FirstName: "Rex", LastName: "T", Email: "rex@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		b := r.load(payment.KindSources, "rex.csv", funding.Request{Method: funding.OnDemand, UserID: u.ID,
			Routing: otherRouting, Account: "6660001"})
		k := payment.RowKey{Batch: b.ID, Line: 2}
		r.inFlight(k, nil, u.ID)
		made, err := r.api.CreateOnDemandFundingSource(ctx, ach.FundingSourceRequest{UserID: u.ID, Routing: otherRouting, Account: "6660001"})
		if err != nil {
			t.Fatal(err)
		}
		sum := mustRun(t, r.runner(Options{}))
		row := r.rows(b.ID)[0]
		if sum.Recovered != 1 || sum.Created != 1 || sum.Attempts != 0 || row.SourceID != made.ID ||
			!strings.Contains(lastNote(row), "after a lost answer") {
			t.Errorf("summary %+v, row source %s (made %s), note %q", sum, row.SourceID, made.ID, lastNote(row))
		}
		if n := r.sb.Stats().FundingSources; n != 1 {
			t.Errorf("the service holds %d sources", n)
		}
	})
}

// TestRecoveredProcessorRow: of a customer's verified sources, the one a
// lost token exchange made is the one not among the sources recorded
// before the token left.
func TestRecoveredProcessorRow(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, friday, sandbox.Options{})
		ctx := context.Background()
		u, err := r.api.CreateUser(ctx, ach.UserRequest{FirstName: "Sue", LastName: "T", Email: "sue@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		old, err := r.api.CreateProcessorFundingSource(ctx, "plaid", u.ID, r.token(funding.ProcessorName, fixtureAccount(14)))
		if err != nil {
			t.Fatal(err)
		}
		tok := r.token(funding.ProcessorName, fixtureAccount(15))
		b := r.load(payment.KindSources, "sue.csv", funding.Request{Method: funding.Processor, UserID: u.ID, ProcessorToken: tok})
		k := payment.RowKey{Batch: b.ID, Line: 2}
		r.inFlight(k, []string{old.ID}, u.ID)
		made, err := r.api.CreateProcessorFundingSource(ctx, "plaid", u.ID, tok)
		if err != nil {
			t.Fatal(err)
		}
		mustRun(t, r.runner(Options{}))
		if row := r.rows(b.ID)[0]; row.State != payment.Submitted || row.SourceID != made.ID {
			t.Errorf("row %s source %s; the exchange made %s, the customer had %s", row.State, row.SourceID, made.ID, old.ID)
		}
	})
}

// TestRecoveredVerifyRow: a verification that took effect is recorded
// without verifying again; one that did not is sent again.
func TestRecoveredVerifyRow(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, friday, sandbox.Options{})
		b := r.load(payment.KindSources, "micro.csv", micro(customer("tia"), "70700001"), micro(customer("uma"), "70700002"))
		mustRun(t, r.runner(Options{}))
		src := r.rows(b.ID)
		tia, uma := r.deposits(src[0].SourceID), r.deposits(src[1].SourceID)
		v := r.load(payment.KindVerifications, "verify.csv",
			funding.Request{Method: funding.Verify, SourceID: src[0].SourceID, Amounts: tia},
			funding.Request{Method: funding.Verify, SourceID: src[1].SourceID, Amounts: uma})
		r.inFlight(payment.RowKey{Batch: v.ID, Line: 2}, nil, "")
		r.inFlight(payment.RowKey{Batch: v.ID, Line: 3}, nil, "")
		if _, err := r.api.Verify(context.Background(), src[0].SourceID, tia[0], tia[1]); err != nil {
			t.Fatal(err)
		}
		sum := mustRun(t, r.runner(Options{}))
		// tia: one read, found verified. uma: one read, released, then sent:
		// a read and a verify.
		if sum.Recovered != 2 || sum.Verified != 2 || sum.Resent != 1 || sum.Calls != 4 {
			t.Errorf("summary %+v", sum)
		}
		for _, row := range r.rows(v.ID) {
			if row.State != payment.Submitted || row.Status != funding.StatusVerified {
				t.Errorf("line %d: %s %s (%q)", row.Key.Line, row.State, row.Status, row.Error)
			}
		}
	})
}

// TestRecoveredCustomerRow: a customer created by a request whose answer
// was lost is found by email and used; it is not created again.
func TestRecoveredCustomerRow(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, friday, sandbox.Options{})
		vic := customer("vic")
		b := r.load(payment.KindSources, "vic.csv", processor(vic, r.token(funding.ProcessorName, fixtureAccount(16))))
		r.inFlight(payment.RowKey{Batch: b.ID, Line: 2}, nil, "")
		u, err := r.api.CreateUser(context.Background(), ach.UserRequest{FirstName: vic.FirstName, LastName: vic.LastName, Email: vic.Email})
		if err != nil {
			t.Fatal(err)
		}
		sum := mustRun(t, r.runner(Options{}))
		row := r.rows(b.ID)[0]
		if sum.Customers != 0 || row.State != payment.Submitted || row.UserID != u.ID || r.sb.Stats().Customers != 1 {
			t.Errorf("summary %+v, row %s customer %s (want %s)", sum, row.State, row.UserID, u.ID)
		}
	})
}
