package onboard

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/ach"
	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/sandbox"
)

// TestEachMethod: on demand (a fixture account is Verified, another
// Unverified with a next step), micro-deposits (Pending, deposits sent),
// a processor token (verified), and a row naming an existing customer by
// user_id; rows of one email share one customer.
func TestEachMethod(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, friday, sandbox.Options{})
		ctx := context.Background()
		known, err := r.api.CreateUser(ctx, ach.UserRequest{FirstName: "Known", LastName: "Customer", Email: "known@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		ann, bob := customer("ann"), customer("bob")
		annUpper := ann
		annUpper.Email = "  ANN@Example.com "
		b := r.load(payment.KindSources, "sources.csv",
			onDemand(ann, fixtureRouting, fixtureAccount(1)),
			onDemand(annUpper, otherRouting, "5550001"),
			micro(bob, "5550002"),
			processor(bob, r.token(funding.ProcessorName, fixtureAccount(2))),
			funding.Request{Method: funding.OnDemand, UserID: known.ID, Routing: fixtureRouting, Account: fixtureAccount(3)},
		)
		sum := mustRun(t, r.runner(Options{}))
		if sum.Customers != 2 || sum.Created != 5 || sum.Rejected != 0 || sum.Initiated != 1 || sum.Attempts != 5 {
			t.Errorf("summary %+v", sum)
		}
		rows := r.rows(b.ID)
		want := []struct {
			status funding.Status
			step   string
		}{
			{funding.StatusVerified, ""},
			{funding.StatusUnverified, StepUnverified},
			{funding.StatusPending, ""},
			{funding.StatusVerified, ""},
			{funding.StatusVerified, ""},
		}
		for i, row := range rows {
			if row.State != payment.Submitted || row.Status != want[i].status || row.NextStep != want[i].step || row.SourceID == "" {
				t.Errorf("line %d: %s %s step %q source %q (error %q)", row.Key.Line, row.State, row.Status, row.NextStep, row.SourceID, row.Error)
			}
		}
		if rows[0].UserID == "" || rows[1].UserID != rows[0].UserID {
			t.Errorf("rows of one email have customers %q and %q", rows[0].UserID, rows[1].UserID)
		}
		if rows[2].UserID != rows[3].UserID || rows[2].UserID == rows[0].UserID {
			t.Errorf("bob's rows have customers %q and %q", rows[2].UserID, rows[3].UserID)
		}
		if rows[4].UserID != known.ID {
			t.Errorf("user_id row has customer %q, want %q", rows[4].UserID, known.ID)
		}
		if rows[2].Initiated.IsZero() || NextStep(rows[2]) != StepSendVerification {
			t.Errorf("micro-deposit row: initiated %v, next step %q", rows[2].Initiated, NextStep(rows[2]))
		}
		if rows[3].Request.ProcessorToken != "" {
			t.Error("the ledger kept a processor token after the row was settled")
		}
		if rows[0].BankName == "" || rows[0].LastFour != "0001" {
			t.Errorf("on-demand row: bank %q last four %q", rows[0].BankName, rows[0].LastFour)
		}
		// A later file with ann's email reuses her customer: no second create.
		b2 := r.load(payment.KindSources, "more.csv", onDemand(ann, fixtureRouting, fixtureAccount(4)))
		sum = mustRun(t, r.runner(Options{}))
		if sum.Customers != 0 || sum.Created != 1 {
			t.Errorf("second run %+v", sum)
		}
		if got := r.rows(b2.ID)[0].UserID; got != rows[0].UserID {
			t.Errorf("later row of ann has customer %q, want %q", got, rows[0].UserID)
		}
		st := r.sb.Stats()
		if st.Customers != 3 || st.FundingSources != 6 {
			t.Errorf("the service holds %d customers and %d sources, want 3 and 6", st.Customers, st.FundingSources)
		}
	})
}

// TestCustomerFoundByEmail: a customer the service already has (created
// outside batchd) is found by email after its create is refused and
// used; a processor row then records that customer's sources before its
// token leaves, so a source the customer had is never taken for its own.
func TestCustomerFoundByEmail(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, friday, sandbox.Options{})
		ctx := context.Background()
		cy := customer("cy")
		u, err := r.api.CreateUser(ctx, ach.UserRequest{FirstName: "Cy", LastName: "Outside", Email: cy.Email})
		if err != nil {
			t.Fatal(err)
		}
		old, err := r.api.CreateOnDemandFundingSource(ctx, ach.FundingSourceRequest{UserID: u.ID, Routing: fixtureRouting, Account: fixtureAccount(5)})
		if err != nil {
			t.Fatal(err)
		}
		b := r.load(payment.KindSources, "cy.csv", processor(cy, r.token(funding.ProcessorName, fixtureAccount(6))))
		sum := mustRun(t, r.runner(Options{}))
		row := r.rows(b.ID)[0]
		if sum.Customers != 0 || row.State != payment.Submitted || row.UserID != u.ID {
			t.Fatalf("row %s customer %q (want %q), summary %+v", row.State, row.UserID, u.ID, sum)
		}
		if row.SourceID == old.ID || len(row.SourcesBefore) != 1 || row.SourcesBefore[0] != old.ID {
			t.Errorf("row has source %s and sources before %v; the customer's earlier source is %s", row.SourceID, row.SourcesBefore, old.ID)
		}
	})
}

// TestRefusals: a processor token issued for another processor, and an
// account another customer holds, are rejected with the service's words
// and a next step; a user_id the service does not know likewise.
func TestRefusals(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, friday, sandbox.Options{})
		dan, eve := customer("dan"), customer("eve")
		b := r.load(payment.KindSources, "refused.csv",
			processor(dan, r.token("legacyproc", fixtureAccount(7))),
			onDemand(dan, fixtureRouting, fixtureAccount(8)),
			onDemand(eve, fixtureRouting, fixtureAccount(8)),
			funding.Request{Method: funding.OnDemand, UserID: "00000000-0000-4000-8000-000000000000", Routing: fixtureRouting, Account: fixtureAccount(9)},
		)
		sum := mustRun(t, r.runner(Options{}))
		if sum.Rejected != 3 || sum.Created != 1 {
			t.Errorf("summary %+v", sum)
		}
		rows := r.rows(b.ID)
		check := func(row *funding.Row, step, words string) {
			t.Helper()
			if row.State != payment.Rejected || row.NextStep != step || !strings.Contains(strings.ToLower(row.Error), words) {
				t.Errorf("line %d: %s, error %q, next step %q", row.Key.Line, row.State, row.Error, row.NextStep)
			}
		}
		check(rows[0], StepInvalidToken, "invalid_processor_token")
		if rows[1].State != payment.Submitted {
			t.Errorf("line 3: %s (%q)", rows[1].State, rows[1].Error)
		}
		check(rows[2], StepAccountTaken, "associated with another user")
		check(rows[3], StepCustomerNotFound, "customer not found")
		if rows[0].Request.ProcessorToken != "" {
			t.Error("a rejected row kept its processor token")
		}
	})
}

// TestKeyRefused: a refused key stops the run at once with
// payment.ErrKeyRefused and leaves the row pending, not rejected.
func TestKeyRefused(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, friday, sandbox.Options{Keys: []sandbox.Key{{Value: testKey, Inactive: true}}})
		b := r.load(payment.KindSources, "key.csv", onDemand(customer("fay"), fixtureRouting, fixtureAccount(10)))
		_, err := r.runner(Options{}).Run(context.Background())
		if !errors.Is(err, payment.ErrKeyRefused) {
			t.Fatalf("run: %v, want the key refused", err)
		}
		if row := r.rows(b.ID)[0]; row.State != payment.Pending {
			t.Errorf("row is %s (%q)", row.State, row.Error)
		}
	})
}

// TestIncomplete: when the service fails everything, the row whose create
// may have been carried out stays in doubt (its lookup failed, so it is
// never resent), and the run says so instead of succeeding.
func TestIncomplete(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, friday, sandbox.Options{ErrorRate: 1, Seed: 5})
		b := r.load(payment.KindSources, "down.csv", onDemand(customer("wes"), fixtureRouting, fixtureAccount(17)))
		sum, err := r.runner(Options{Retry: retry.Policy{Base: time.Millisecond, Max: time.Millisecond, MaxAttempts: 2}}).Run(context.Background())
		if !errors.Is(err, ErrIncomplete) || !errors.Is(err, payment.ErrService) || sum.InDoubt != 1 {
			t.Fatalf("run: %v, summary %+v", err, sum)
		}
		if !strings.Contains(err.Error(), "1 in doubt") {
			t.Errorf("error %q does not say what is left", err)
		}
		if row := r.rows(b.ID)[0]; row.State != payment.InDoubt {
			t.Errorf("row is %s", row.State)
		}
	})
}
