package sandbox

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// wantEvents fails unless the receiver got exactly want ("event id").
func wantEvents(t *testing.T, rc *receiver, want []string) {
	t.Helper()
	if got := rc.events(); !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
}

// wantHeaders checks what every delivery carries: the key as Bearer
// credential, the content type and a timestamp of the key's clock.
func wantHeaders(t *testing.T, ds []delivery, key, ctype string) {
	t.Helper()
	for i, d := range ds {
		if d.auth != "Bearer "+key || d.ctype != ctype {
			t.Errorf("delivery %d (%s): Authorization %q, Content-Type %q", i, d.event, d.auth, d.ctype)
		}
		if len(d.timestamp) != len(timeLayout) || !strings.HasPrefix(d.timestamp, "2026-03-0") {
			t.Errorf("delivery %d (%s): timestamp %q", i, d.event, d.timestamp)
		}
	}
}

// TestWebhookCheckEvents follows every change of a key's checks: create,
// edit, void, deposit and the clock's moves to printed and failed, each
// delivered with the check exactly as the API answers it.
func TestWebhookCheckEvents(t *testing.T) {
	h := newHarness(t, fastHooks(Options{}))
	rc := newReceiver(t, nil)
	h.hook(keyA, rc.url)

	a := h.create(keyA, nil)
	b := h.create(keyA, map[string]any{"bank_account": "1111000002"}) // risk Fail
	c := h.create(keyA, nil)
	d := h.create(keyA, nil)
	h.create(keyB, nil) // another key, no URL: no event
	edit := h.post("/v1/check/edit", keyA, with(map[string]any{"check_id": a["check_id"], "number": a["number"], "memo": "Invoice 1b"}))
	wantStatus(t, edit, http.StatusOK)
	wantStatus(t, h.send(http.MethodDelete, "/v1/check/"+c["check_id"].(string), keyA, typeJSON, ""), http.StatusOK)
	wantStatus(t, h.post("/_sandbox/deposit", keyA, map[string]any{"check_ids": []any{a["check_id"]}}), http.StatusOK)
	h.advance(keyA, 3) // Monday → Thursday: b fails, d is printed
	h.idle()

	id := func(m map[string]any) string { return m["check_id"].(string) }
	wantEvents(t, rc, []string{
		"check.created " + id(a), "check.created " + id(b), "check.created " + id(c), "check.created " + id(d),
		"check.changed " + id(a), "check.deleted " + id(c), "check.changed " + id(a),
		"check.changed " + id(b), "check.changed " + id(d),
	})
	ds := rc.deliveries()
	wantHeaders(t, ds, keyA, typeJSON)
	for i, want := range []map[string]any{a, b, c, d, edit.check()} {
		if !reflect.DeepEqual(ds[i].data, want) {
			t.Errorf("%s data:\n got %v\nwant %v", ds[i].event, ds[i].data, want)
		}
	}
	for i, st := range map[int]string{4: statusInProcess, 5: statusVoid, 6: statusDeposited, 7: statusFailed, 8: statusPrinted} {
		if got := str(ds[i].data, "status"); got != st {
			t.Errorf("%s #%d: status %q, want %q", ds[i].event, i, got, st)
		}
	}
	if ds[0].timestamp != "2026-03-02 10:00:00" || ds[8].timestamp != "2026-03-05 10:00:00" {
		t.Errorf("timestamps %q, %q: want the key's clock", ds[0].timestamp, ds[8].timestamp)
	}
	if r := h.get("/v1/check/"+id(d), keyA); !reflect.DeepEqual(r.check(), ds[8].data) {
		t.Errorf("printed event data %v differs from GET %v", ds[8].data, r.check())
	}
	st := h.srv.Stats()
	if st.WebhookEvents != 9 || st.WebhooksSent != 9 || st.WebhookAttempts != 9 {
		t.Errorf("stats %+v, want 9 events sent in 9 POSTs", st)
	}
	wantBalanced(t, st)
}

// TestWebhookLinkPayEvent checks that a check a payer creates through a
// payment link is announced too.
func TestWebhookLinkPayEvent(t *testing.T) {
	h := newHarness(t, fastHooks(Options{}))
	rc := newReceiver(t, nil)
	h.hook(keyA, rc.url)
	r := h.post("/v1/paymentlink/create", keyA, map[string]any{"amount": "5.00", "memo": "Dues"})
	wantStatus(t, r, http.StatusOK)
	tok := str(obj(r.body, "checkout_link"), "checkout_token")
	p := h.post("/_sandbox/paymentlink/pay", keyA, with(map[string]any{"checkout_token": tok, "amount": nil, "memo": nil}))
	wantStatus(t, p, http.StatusOK)
	h.idle()
	wantEvents(t, rc, []string{"check.created " + str(p.check(), "check_id")})
	if got := rc.deliveries()[0].data; !reflect.DeepEqual(got, p.check()) || str(got, "link_id") != tok {
		t.Errorf("data %v, want %v", got, p.check())
	}
}

// TestWebhookSourceEvents follows a customer's funding sources: added,
// made primary, verified, verification failed and deleted.
func TestWebhookSourceEvents(t *testing.T) {
	h := newHarness(t, fastHooks(Options{}))
	rc := newReceiver(t, nil)
	h.hook(keyA, rc.url)
	u := h.newUser(keyA)

	r := h.post(ach("/funding-source"), keyA, map[string]any{
		"user_id": u, "routing_number": FixtureRouting, "account_number": newAccount(), "account_type": "checking"})
	wantStatus(t, r, http.StatusOK)
	first := obj(r.body, "funding_source")
	s1 := str(first, "source_id")
	acct2 := newAccount()
	s2 := h.newSource(keyA, u, acct2)
	wantStatus(t, h.initiate(keyA, s2), http.StatusOK)
	dep := h.deposits(keyA, s2)
	wantStatus(t, h.verify(keyA, s2, dep[0], dep[1]), http.StatusOK)
	wantStatus(t, h.verify(keyA, s2, dep[0], dep[1]), http.StatusOK) // verified again: no event
	s3 := h.newSource(keyA, u, newAccount())
	wantStatus(t, h.initiate(keyA, s3), http.StatusOK)
	for range maxVerifyTries {
		wantStatus(t, h.verify(keyA, s3, "1.00", "2.00"), http.StatusBadRequest)
	}
	ex := h.exchange(keyA, u, h.token(keyA, newAccount(), nil))
	wantStatus(t, ex, http.StatusOK)
	s4 := str(obj(ex.body, "funding_source"), "source_id")
	wantStatus(t, h.post(ach("/funding-source/remove"), keyA, map[string]any{"user_id": u, "source_id": s1}), http.StatusOK)
	wantStatus(t, h.post(ach("/funding-source/remove"), keyA, map[string]any{"user_id": u, "source_id": s1}), http.StatusOK)
	wantStatus(t, h.post(ach("/accounts/delete"), keyA, map[string]any{"routing_number": FixtureRouting, "account_number": acct2}), http.StatusOK)
	h.idle()

	wantEvents(t, rc, []string{
		"funding-source.added " + s1, "funding-source.made-primary " + s1,
		"funding-source.added " + s2, "funding-source.verified " + s2,
		"funding-source.added " + s3, "funding-source.verification-failed " + s3,
		"funding-source.added " + s4, "funding-source.made-primary " + s4,
		"funding-source.deleted " + s1, "funding-source.deleted " + s2,
	})
	ds := rc.deliveries()
	wantHeaders(t, ds, keyA, typeJSON)
	if !reflect.DeepEqual(ds[0].data, first) {
		t.Errorf("added data:\n got %v\nwant %v", ds[0].data, first)
	}
	for i, want := range map[int]string{3: srcVerified, 5: srcVerificationFailed, 7: srcVerifiedProcessor, 8: srcDeleted} {
		if got := str(ds[i].data, "status"); got != want {
			t.Errorf("%s: status %q, want %q", ds[i].event, got, want)
		}
	}
	if ds[7].data["is_primary"] != true || ds[8].data["is_primary"] != false {
		t.Errorf("is_primary: made-primary %v, deleted %v", ds[7].data["is_primary"], ds[8].data["is_primary"])
	}
	if got := h.source(keyA, s2); !reflect.DeepEqual(got, ds[9].data) {
		t.Errorf("deleted data %v differs from GET %v", ds[9].data, got)
	}
	wantBalanced(t, h.srv.Stats())
}

// TestWebhookForm checks WebhookForm: eCheck events arrive form-encoded
// (event, data as JSON text, timestamp), in quirks mode rendered as the
// quirky API answers; funding-source events stay JSON.
func TestWebhookForm(t *testing.T) {
	h := newHarness(t, fastHooks(Options{WebhookForm: true, Quirks: true}))
	rc := newReceiver(t, nil)
	h.hook(keyA, rc.url)
	c := h.create(keyA, map[string]any{"amount": "0.57", "bank_account": "1111000016"})
	src := h.newSource(keyA, h.newUser(keyA), newAccount())
	h.idle()

	ds := rc.deliveries()
	if len(ds) != 3 {
		t.Fatalf("got %d deliveries, want 3: %q", len(ds), rc.events())
	}
	wantHeaders(t, ds[:1], keyA, typeForm)
	wantHeaders(t, ds[1:], keyA, typeJSON)
	if !strings.HasPrefix(string(ds[0].raw), "event=check.created&data=%7B") {
		t.Errorf("form body %q", ds[0].raw)
	}
	if !reflect.DeepEqual(ds[0].data, c) {
		t.Errorf("form data:\n got %v\nwant %v", ds[0].data, c)
	}
	if str(ds[1].data, "source_id") != src || ds[1].data["is_primary"] == nil {
		t.Errorf("source event data %v", ds[1].data)
	}
}
