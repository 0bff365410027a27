package sandbox

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestACHDeprecation checks the 410 exactly from 2026-06-08 by the key's
// clock: an initiation of 2026-06-07 still verifies afterwards.
func TestACHDeprecation(t *testing.T) {
	h := newHarness(t, Options{Date: day(t, "2026-06-07")})
	if r := h.get("/_sandbox/clock", keyA); !strings.HasPrefix(str(r.body, "now"), "2026-06-07 10:00") {
		t.Fatalf("start date: %s", r.raw)
	}
	u := h.newUser(keyA)
	early, late, other := h.newSource(keyA, u, newAccount()), h.newSource(keyA, u, newAccount()), h.newSource(keyA, u, newAccount())
	r := h.initiate(keyA, early)
	wantStatus(t, r, http.StatusOK)
	if str(r.body, "status") != "Pending" || str(r.body, "message") != "Micro-deposits sent" || str(r.body, "funding_source_id") != early {
		t.Fatalf("initiate: %s", r.raw)
	}
	dep := h.deposits(keyA, early)

	h.setDay(keyA, "2026-06-08")
	wantACHError(t, h.initiate(keyA, late), http.StatusGone, deprecatedMessage)
	wantStatus(t, h.initiate(keyA, early), http.StatusOK) // initiated before: unaffected
	r = h.verify(keyA, early, dep[1], dep[0])             // either order
	wantStatus(t, r, http.StatusOK)
	if str(r.body, "status") != "Verified" || str(r.body, "funding_source_id") != early || h.source(keyA, early)["status"] != "Verified" {
		t.Fatalf("verify: %s", r.raw)
	}
	wantStatus(t, h.verify(keyA, early, dep[0], dep[1]), http.StatusOK) // verified again: harmless

	// Back a day, a new initiation works again; the clock is the key's.
	h.setDay(keyA, "2026-06-07")
	wantStatus(t, h.initiate(keyA, late), http.StatusOK)
	wantStatus(t, h.initiate(keyB, h.newSource(keyB, h.newUser(keyB), newAccount())), http.StatusOK)
	// advance_days reaches the day too.
	h.advance(keyA, 1)
	wantACHError(t, h.initiate(keyA, other), http.StatusGone, deprecatedMessage)
	// Far later, the earlier initiation still verifies.
	h.advance(keyA, 400)
	d := h.deposits(keyA, late)
	wantStatus(t, h.verify(keyA, late, d[0], d[1]), http.StatusOK)
}

func TestACHInitiateErrors(t *testing.T) {
	h := newHarness(t, Options{})
	u := h.newUser(keyA)
	src := h.newSource(keyA, u, newAccount())
	wantACHField(t, h.post(ach("/funding-source/initiate/verification"), keyA, map[string]any{}), "funding_source_id")
	wantACHError(t, h.initiate(keyB, src), http.StatusNotFound, "Funding source not found")
	// user_id is checked when sent; source_id is the public clients' name.
	start := func(body map[string]any) resp {
		return h.post(ach("/funding-source/initiate/verification"), keyA, body)
	}
	wantACHError(t, start(map[string]any{"user_id": h.newUser(keyA), "source_id": src}), http.StatusNotFound, "Funding source not found")
	wantACHError(t, start(map[string]any{"user_id": "nope", "source_id": src}), http.StatusNotFound, "Customer not found")
	wantStatus(t, start(map[string]any{"user_id": u, "source_id": src}), http.StatusOK)
	first := h.deposits(keyA, src)
	wantStatus(t, h.initiate(keyA, src), http.StatusOK)
	if h.deposits(keyA, src) != first {
		t.Fatal("a repeated initiation drew new deposits")
	}
	od := h.post(ach("/on-demand/funding-source"), keyA, map[string]any{"user_id": u, "routing_number": FixtureRouting, "account_number": "1111000008"})
	r := h.initiate(keyA, str(od.body, "funding_source_id"))
	wantStatus(t, r, http.StatusBadRequest)
	wantACHError(t, h.get(ach("/_sandbox/funding-source/"+str(od.body, "funding_source_id")+"/micro-deposits"), keyA),
		http.StatusBadRequest, "Verification has not been initiated for this funding source")
	wantACHError(t, h.get(ach("/_sandbox/funding-source/nope/micro-deposits"), keyA), http.StatusNotFound, "Funding source not found")
}

// TestACHWrongAmounts checks that wrong tries are bounded at three.
func TestACHWrongAmounts(t *testing.T) {
	h := newHarness(t, Options{})
	u := h.newUser(keyA)
	src := h.newSource(keyA, u, newAccount())
	wantACHError(t, h.verify(keyA, src, "0.01", "0.02"), http.StatusBadRequest, "Verification has not been initiated for this funding source")
	wantStatus(t, h.initiate(keyA, src), http.StatusOK)
	d := h.deposits(keyA, src)
	for left := 2; left >= 0; left-- {
		want := fmt.Sprintf("The amounts do not match the micro-deposits (%d attempts left)", left)
		// The deposits differ, so the first twice is always wrong.
		wantACHError(t, h.verify(keyA, src, d[0], d[0]), http.StatusBadRequest, want)
	}
	if st := h.source(keyA, src)["status"]; st != "verification_failed" {
		t.Fatalf("status after 3 wrong tries: %v", st)
	}
	wantACHError(t, h.verify(keyA, src, d[0], d[1]), http.StatusBadRequest, "Too many failed verification attempts")
	wantStatus(t, h.initiate(keyA, src), http.StatusBadRequest)
}

// TestACHVerifyForms checks the amount spellings: an array of numbers or
// strings, amount1/amount2, and form encoding; malformed amounts are 400
// and do not count as a try.
func TestACHVerifyForms(t *testing.T) {
	h := newHarness(t, Options{Seed: 3})
	u := h.newUser(keyA)
	forms := []func(id string, d [2]string) resp{
		func(id string, d [2]string) resp { return h.verify(keyA, id, d[0], d[1]) },
		func(id string, d [2]string) resp {
			return h.send(http.MethodPost, ach("/funding-source/verify"), keyA, typeJSON,
				`{"funding_source_id":"`+id+`","amounts":[`+d[0]+`,`+d[1]+`]}`)
		},
		func(id string, d [2]string) resp {
			return h.post(ach("/funding-source/verify"), keyA, map[string]any{"source_id": id, "amount1": d[0], "amount2": d[1]})
		},
		func(id string, d [2]string) resp {
			return h.send(http.MethodPost, ach("/funding-source/verify"), keyA, typeForm,
				"source_id="+id+"&amounts[]="+d[0]+"&amounts[]="+d[1])
		},
		func(id string, d [2]string) resp {
			return h.send(http.MethodPost, ach("/funding-source/verify"), keyA, typeForm, "source_id="+id+"&amount1="+d[0]+"&amount2="+d[1]+"0")
		},
	}
	for i, form := range forms {
		src := h.newSource(keyA, u, newAccount())
		wantStatus(t, h.initiate(keyA, src), http.StatusOK)
		d := h.deposits(keyA, src)
		for _, bad := range []resp{h.verify(keyA, src), h.verify(keyA, src, d[0]), h.verify(keyA, src, "1e-2", d[1]),
			h.verify(keyA, src, true, false), h.verify(keyA, src, "-0.01", d[1]), h.verify(keyA, src, "0.001", d[1])} {
			wantACHField(t, bad, "amounts")
		}
		r := form(src, d)
		if r.status != http.StatusOK || h.source(keyA, src)["status"] != "Verified" {
			t.Fatalf("form %d: %s", i, r.raw)
		}
	}
	wantACHField(t, h.post(ach("/funding-source/verify"), keyA, map[string]any{"amounts": []string{"0.01", "0.02"}}), "funding_source_id")
}

// TestACHMicroDepositsSeeded checks that the amounts come from the seed:
// two distinct amounts of 0.01 to 0.99, the same for the same seed.
func TestACHMicroDepositsSeeded(t *testing.T) {
	draw := func(seed int64) [][2]string {
		h := newHarness(t, Options{Seed: seed})
		u := h.newUser(keyA)
		var out [][2]string
		for range 4 {
			src := h.newSource(keyA, u, newAccount())
			wantStatus(t, h.initiate(keyA, src), http.StatusOK)
			d := h.deposits(keyA, src)
			for _, a := range d {
				if len(a) != 4 || !strings.HasPrefix(a, "0.") || a == "0.00" {
					t.Fatalf("amount %s", a)
				}
			}
			if d[0] == d[1] {
				t.Fatalf("equal deposits %v", d)
			}
			out = append(out, d)
		}
		return out
	}
	a, b, c := draw(11), draw(11), draw(12)
	if strings.Join(flatten(a), ",") != strings.Join(flatten(b), ",") {
		t.Fatalf("same seed, other amounts: %v %v", a, b)
	}
	if strings.Join(flatten(a), ",") == strings.Join(flatten(c), ",") {
		t.Fatalf("seeds 11 and 12 draw the same amounts %v", a)
	}
}

func flatten(ds [][2]string) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d[0], d[1])
	}
	return out
}

func TestACHClockDate(t *testing.T) {
	h := newHarness(t, Options{})
	h.setDay(keyA, "2027-01-31")
	if r := h.get(ach("/_sandbox/clock"), keyA); str(r.body, "now") != "2027-01-31 10:00:00" {
		t.Fatalf("ACH clock alias: %s", r.raw)
	}
	if r := h.get("/_sandbox/clock", keyB); str(r.body, "now") != "2026-03-02 10:00:00" {
		t.Fatalf("other key moved: %s", r.raw)
	}
	wantStatus(t, h.post(ach("/_sandbox/clock"), keyA, map[string]any{"date": "2026-03-01"}), http.StatusOK)
	if r := h.get("/_sandbox/clock", keyA); str(r.body, "now") != "2026-03-01 10:00:00" {
		t.Fatalf("clock set back: %s", r.raw)
	}
	for _, body := range []map[string]any{{"date": "2026-3-1"}, {"date": "3000-01-01"}, {"date": "2026-03-01", "advance_days": 1}, {}} {
		r := h.post("/_sandbox/clock", keyA, body)
		wantStatus(t, r, http.StatusBadRequest)
	}
}
