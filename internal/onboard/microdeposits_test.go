package onboard

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/sandbox"
)

// TestMicroDepositsAroundTheDeprecation: before 2026-06-08 a micro-deposit
// row's deposits are sent; from that day the row says to use the
// bank-linking flow instead, whether batchd's clock knows it (no request
// is made) or only the service does (its 410).
func TestMicroDepositsAroundTheDeprecation(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		for _, c := range []struct {
			name          string
			runner, sbDay time.Time
			initiated     bool
		}{
			{"before", friday, friday, true},
			{"from the date, by batchd's clock", monday, friday, false},
			{"from the date, by the service's 410", friday, monday, false},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := newRig(t, backend, c.runner, sandbox.Options{Date: c.sbDay})
				b := r.load(payment.KindSources, "micro.csv", micro(customer("gus"), "88800001"))
				sum := mustRun(t, r.runner(Options{}))
				row := r.rows(b.ID)[0]
				if row.State != payment.Submitted || row.Status != funding.StatusPending {
					t.Fatalf("row %s %s (%q)", row.State, row.Status, row.Error)
				}
				if c.initiated {
					if row.Initiated.IsZero() || row.NextStep != "" || sum.Initiated != 1 || NextStep(row) != StepSendVerification {
						t.Errorf("initiated %v, next step %q, summary %+v", row.Initiated, row.NextStep, sum)
					}
					return
				}
				if !row.Initiated.IsZero() || row.NextStep != funding.BankLinkStep || sum.BankLink != 1 {
					t.Errorf("initiated %v, next step %q, summary %+v", row.Initiated, row.NextStep, sum)
				}
				// Neither way leaves deposits to verify at the service.
				_, err := r.api.Verify(context.Background(), row.SourceID, 1, 2)
				if err == nil {
					t.Error("a source whose verification was never initiated took a verify")
				}
			})
		}
		// By batchd's clock the deprecation costs no request: a customer and a
		// source, nothing more.
		r := newRig(t, backend, monday, sandbox.Options{})
		r.load(payment.KindSources, "micro.csv", micro(customer("hal"), "88800002"))
		if sum := mustRun(t, r.runner(Options{})); sum.Calls != 2 {
			t.Errorf("calls %d, want 2 (customer, source)", sum.Calls)
		}
	})
}

// TestVerificationRows: a verification file completes micro-deposit
// verification with the amounts from the bank statement, even after the
// deprecation date; a source already verified is recorded without a
// second verify, and wrong amounts are refused with what to do next.
func TestVerificationRows(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		r := newRig(t, backend, friday, sandbox.Options{})
		b := r.load(payment.KindSources, "micro.csv",
			micro(customer("ida"), "99900001"), micro(customer("jon"), "99900002"), micro(customer("kim"), "99900003"))
		mustRun(t, r.runner(Options{}))
		src := r.rows(b.ID)
		for _, row := range src {
			if row.Initiated.IsZero() {
				t.Fatalf("line %d not initiated (%q)", row.Key.Line, row.NextStep)
			}
		}
		// Monday: micro-deposits are deprecated, but these were initiated
		// before, so they can still be verified.
		r.clk.Advance(3 * 24 * time.Hour)
		ida, jon, kim := r.deposits(src[0].SourceID), r.deposits(src[1].SourceID), r.deposits(src[2].SourceID)
		// jon verified already (the hosted page, say).
		if _, err := r.api.Verify(context.Background(), src[1].SourceID, jon[0], jon[1]); err != nil {
			t.Fatal(err)
		}
		// The deposits are two distinct amounts: the same one twice is wrong.
		wrong := [2]money.Cents{kim[0], kim[0]}
		v := r.load(payment.KindVerifications, "verify.csv",
			funding.Request{Method: funding.Verify, SourceID: src[0].SourceID, Amounts: ida},
			funding.Request{Method: funding.Verify, SourceID: src[1].SourceID, Amounts: jon},
			funding.Request{Method: funding.Verify, SourceID: src[2].SourceID, Amounts: wrong},
		)
		sum := mustRun(t, r.runner(Options{}))
		// ida: read, verify; jon: read only; kim: read, verify, read again
		// for the next step.
		if sum.Verified != 2 || sum.Rejected != 1 || sum.Calls != 6 {
			t.Errorf("summary %+v", sum)
		}
		rows := r.rows(v.ID)
		for _, row := range rows[:2] {
			if row.State != payment.Submitted || row.Status != funding.StatusVerified || row.SourceID == "" {
				t.Errorf("line %d: %s %s (%q)", row.Key.Line, row.State, row.Status, row.Error)
			}
		}
		if note := rows[1].History[len(rows[1].History)-1].Note; !strings.Contains(note, "not verified again") {
			t.Errorf("jon's row: %q", note)
		}
		if rows[2].State != payment.Rejected || rows[2].NextStep != StepWrongAmounts || !strings.Contains(rows[2].Error, "do not match") {
			t.Errorf("kim's row: %s %q next %q", rows[2].State, rows[2].Error, rows[2].NextStep)
		}
		// The verified source may be verified by any number of rows; the
		// source's own row is not theirs to settle.
		if got := r.rows(b.ID)[0]; got.Status != funding.StatusPending {
			t.Errorf("ida's source row is %s before reconcile", got.Status)
		}
	})
}
