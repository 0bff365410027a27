package sandbox

import (
	"net/http"
	"testing"
)

func TestACHDebitAndCredit(t *testing.T) {
	h := newHarness(t, Options{})
	u := h.newUser(keyA)
	pending := h.newSource(keyA, u, newAccount())
	unverified := str(h.post(ach("/on-demand/funding-source"), keyA, map[string]any{
		"user_id": u, "routing_number": "021000021", "account_number": newAccount()}).body, "funding_source_id")
	verified := str(obj(h.exchange(keyA, u, h.token(keyA, newAccount(), nil)).body, "funding_source"), "source_id")
	debit := func(id string) resp {
		return h.post(ach("/ach-debit"), keyA, map[string]any{"sender": id, "name": "Ada", "amount": "25.00", "description": "Rent", "label": "L"})
	}
	credit := func(id string) resp {
		return h.post(ach("/check/send"), keyA, map[string]any{"recipient": id, "name": "Ada", "amount": 12.5})
	}
	for _, id := range []string{pending, unverified} {
		wantACHError(t, debit(id), http.StatusPaymentRequired, "Funding source is not verified for debits")
	}
	for _, r := range []resp{debit(verified), credit(verified), credit(unverified)} {
		wantStatus(t, r, http.StatusOK)
		if len(str(r.body, "check_id")) != idLen {
			t.Fatalf("no check_id: %s", r.raw)
		}
	}
	wantStatus(t, credit(pending), http.StatusPaymentRequired)
	wantACHError(t, debit("nope"), http.StatusNotFound, "Funding source not found")
	wantACHError(t, h.post(ach("/ach-debit"), keyB, map[string]any{"sender": verified, "amount": "1.00"}), http.StatusNotFound, "Funding source not found")

	// A micro-deposit-verified source may be debited; a deleted one not.
	wantStatus(t, h.initiate(keyA, pending), http.StatusOK)
	d := h.deposits(keyA, pending)
	wantStatus(t, h.verify(keyA, pending, d[0], d[1]), http.StatusOK)
	wantStatus(t, debit(pending), http.StatusOK)
	wantStatus(t, h.post(ach("/funding-source/remove"), keyA, map[string]any{"user_id": u, "source_id": pending}), http.StatusOK)
	wantStatus(t, debit(pending), http.StatusPaymentRequired)

	for _, body := range []map[string]any{
		{"amount": "1.00"}, {"sender": verified}, {"sender": verified, "amount": "0"}, {"sender": verified, "amount": "1.001"},
		{"sender": verified, "amount": "1.00", "description": string(make([]byte, 129))},
	} {
		wantStatus(t, h.post(ach("/ach-debit"), keyA, body), http.StatusBadRequest)
	}
	wantACHField(t, h.post(ach("/check/send"), keyA, map[string]any{"amount": "1.00"}), "recipient")
}
