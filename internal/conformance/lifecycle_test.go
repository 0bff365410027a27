package conformance

import (
	"net/http"
	"slices"
	"testing"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/sandbox"
)

// TestLifecycle drives checks through their statuses (public-api-notes:
// in_process → printed or failed → deposited; void by delete) with the
// sandbox clock and deposit action, and checks that only an in_process
// check can be edited or voided (402, Permanent).
func TestLifecycle(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		c := e.client(keyA)
		ctx := t.Context()
		mk := func(label, acct string) *echeck.Check {
			r := validRequest(label)
			r.BankAccount = acct
			return create(t, c, r)
		}
		pass := mk("pass", account(16))           // Risk Pass
		risky := mk("risky", account(1))          // Risk Risky
		fail := mk("fail", account(2))            // Risk Fail
		other := mk("other", "123456789")         // not fixture data: Risk Fail
		voided := mk("voided", account(20))       // deleted while in_process
		early := mk("deposit-early", account(22)) // deposited while in_process
		all := []*echeck.Check{pass, risky, fail, other, voided, early}
		for _, ch := range all {
			if ch.Status != "in_process" {
				t.Fatalf("new check %s: status %q, want in_process", ch.Label, ch.Status)
			}
		}

		// About two business days of processing: one day on, nothing moved.
		e.advance(keyA, 1)
		for _, ch := range all {
			wantStatus(t, c, ch.CheckID, "in_process")
		}

		if err := c.DeleteCheck(ctx, voided.CheckID); err != nil {
			t.Fatalf("DeleteCheck: %v", err)
		}
		wantStatus(t, c, voided.CheckID, "void")
		if d := e.deposit(keyA, early.CheckID); !slices.Contains(stringsOf(d.json["deposited"]), early.CheckID) {
			t.Errorf("deposit of an in_process check: %s", d.body)
		}
		wantStatus(t, c, early.CheckID, "deposited")

		// A week on, processing is over whatever the weekday.
		e.advance(keyA, 7)
		want := map[string]string{
			pass.CheckID: "printed", risky.CheckID: "printed", fail.CheckID: "failed",
			other.CheckID: "failed", voided.CheckID: "void", early.CheckID: "deposited",
		}
		for id, s := range want {
			wantStatus(t, c, id, s)
		}
		listed := listByLabel(t, c, "fail")
		if len(listed) != 1 || listed[0].Status != "failed" {
			t.Errorf("list shows %+v, want the failed check as failed", listed)
		}

		d := e.deposit(keyA, pass.CheckID, fail.CheckID)
		if !slices.Contains(stringsOf(d.json["deposited"]), pass.CheckID) {
			t.Errorf("deposit of a printed check: %s", d.body)
		}
		want[pass.CheckID] = "deposited"
		for id, s := range want {
			wantStatus(t, c, id, s) // a failed check is final: not deposited
		}

		// Only an in_process check can be edited or voided.
		for _, ch := range []*echeck.Check{pass, risky, fail, voided, early} {
			t.Run("refused after "+want[ch.CheckID]+" "+ch.Label, func(t *testing.T) {
				ed := validRequest(ch.Label)
				ed.Number, ed.BankAccount, ed.Amount = ch.Number, account(16), 999
				_, err := c.EditCheck(ctx, ch.CheckID, ed)
				apiErr(t, err, http.StatusPaymentRequired, apiwire.Permanent, "")
				err = c.DeleteCheck(ctx, ch.CheckID)
				apiErr(t, err, http.StatusPaymentRequired, apiwire.Permanent, "")
				got := get(t, c, ch.CheckID)
				if got.Status != want[ch.CheckID] || got.Amount != ch.Amount {
					t.Errorf("after refused edit/delete: status %q amount %s, want %q %s",
						got.Status, got.Amount, want[ch.CheckID], ch.Amount)
				}
			})
		}
	})
}

// stringsOf reads a JSON array of strings.
func stringsOf(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
