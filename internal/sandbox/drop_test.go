package sandbox

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// lost sends a request that DropRate must leave unanswered.
func (h *harness) lost(method, path string, body any) {
	h.t.Helper()
	b := ""
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		b = string(raw)
	}
	if r, err := h.try(context.Background(), method, path, keyA, typeJSON, b); err == nil {
		h.t.Fatalf("%s %s answered %d although DropRate is 1: %s", method, path, r.status, r.raw)
	}
}

// onlyLink is the key's one payment link, found through the list.
func (h *harness) onlyLink() map[string]any {
	h.t.Helper()
	d := h.get("/v1/paymentlink/list", keyA).data()
	if len(d) != 1 {
		h.t.Fatalf("%d payment links, want 1", len(d))
	}
	return d[0].(map[string]any)
}

// TestDropAppliesEveryChange checks that each lossy endpoint does its
// work and then loses the answer, that a read goes unanswered, and that a
// refused request is still answered.
func TestDropAppliesEveryChange(t *testing.T) {
	h := newHarness(t, Options{DropRate: 1})
	h.lost(http.MethodPost, "/v1/check/create", with(map[string]any{"label": "d1"}))
	ids := dataIDs(h.get("/v1/check/list?label=d1", keyA))
	if len(ids) != 1 {
		t.Fatalf("the dropped create stored %d checks", len(ids))
	}
	id := ids[0]
	number := h.get("/v1/check/"+id, keyA).check()["number"]

	h.lost(http.MethodPost, "/v1/check/edit", with(map[string]any{"check_id": id, "number": number, "amount": "77.70", "label": "d1"}))
	if got := h.get("/v1/check/"+id, keyA).check()["amount"].(json.Number).String(); got != "77.70" {
		t.Errorf("after a dropped edit the amount is %s, want the edit's 77.70", got)
	}
	h.lost(http.MethodDelete, "/v1/check/"+id, nil)
	if got := h.status(keyA, id); got != statusVoid {
		t.Errorf("after a dropped void the check is %s, want void", got)
	}
	refused := h.send(http.MethodDelete, "/v1/check/"+id, keyA, typeJSON, "")
	wantStatus(t, refused, http.StatusPaymentRequired)

	h.lost(http.MethodPost, "/v1/paymentlink/create", map[string]any{"amount": "9.00", "memo": "dropped link"})
	l := h.onlyLink()
	if l["memo"] != "dropped link" || l["status"] != linkActive {
		t.Fatalf("the dropped link create stored %v", l)
	}
	h.lost(http.MethodDelete, "/v1/paymentlink/changestatus/"+l["checkout_token"].(string), nil)
	if got := h.onlyLink()["status"]; got != linkInactive {
		t.Errorf("after a dropped status change the link is %v, want inactive", got)
	}

	h.lost(http.MethodPost, "/v1/account/tokenization", map[string]any{"first_name": "A", "last_name": "B",
		"bank_account": "1111000016", "bank_routing": FixtureRouting, "store": "shop"})
	if got := h.srv.KeyStats(keyA).Tokens; got != 1 {
		t.Errorf("the dropped tokenization stored %d tokens, want 1", got)
	}
	h.lost(http.MethodGet, "/v1/check/bankinfo?bank_routing="+FixtureRouting, nil)
	wantField(t, h.get("/v1/check/bankinfo?bank_routing=12", keyA), "bank_routing")

	if st := h.srv.Stats(); st.Drops != 7 || st.Creates != 1 {
		t.Errorf("stats %+v, want 7 drops and 1 create", st)
	}
}

// answered repeats a request until ErrorRate lets it through.
func (h *harness) answered(method, path string, body any) resp {
	h.t.Helper()
	for range 200 {
		b, _ := json.Marshal(body)
		if body == nil {
			b = nil
		}
		r := h.send(method, path, keyA, typeJSON, string(b))
		if r.status != http.StatusInternalServerError && r.status != http.StatusServiceUnavailable {
			return r
		}
	}
	h.t.Fatalf("%s %s: refused 200 times", method, path)
	return resp{}
}

// refusal tries an operation on fresh subjects until ErrorRate refuses
// it once (a try that gets through uses its subject up) and returns the
// refused try's subject.
func refusal(t *testing.T, what string, fresh func() string, try func(subject string) resp) string {
	t.Helper()
	for range 50 {
		subject := fresh()
		r := try(subject)
		if r.status == http.StatusInternalServerError || r.status == http.StatusServiceUnavailable {
			return subject
		}
		wantStatus(t, r, http.StatusOK)
	}
	t.Fatalf("%s was never refused", what)
	return ""
}

// TestErrorRateRefusesEveryChange checks that an injected 500 or 503 on
// each of these endpoints leaves the state as it was.
func TestErrorRateRefusesEveryChange(t *testing.T) {
	h := newHarness(t, Options{ErrorRate: 0.5, Seed: 5})
	newCheck := func() string {
		return h.answered(http.MethodPost, "/v1/check/create", validCheck()).check()["check_id"].(string)
	}
	getCheck := func(id string) map[string]any { return h.answered(http.MethodGet, "/v1/check/"+id, nil).check() }
	edit := func(id string) resp {
		return h.send(http.MethodPost, "/v1/check/edit", keyA, typeJSON, mustJSON(t,
			with(map[string]any{"check_id": id, "number": getCheck(id)["number"], "amount": "55.50"})))
	}
	if id := refusal(t, "edit", newCheck, edit); getCheck(id)["amount"].(json.Number).String() != "12.34" {
		t.Errorf("a refused edit changed the amount: %v", getCheck(id)["amount"])
	}
	void := func(id string) resp { return h.send(http.MethodDelete, "/v1/check/"+id, keyA, typeJSON, "") }
	if id := refusal(t, "void", newCheck, void); getCheck(id)["status"] != statusInProcess {
		t.Errorf("a refused void changed the status to %v", getCheck(id)["status"])
	}

	links := func() int { return h.srv.KeyStats(keyA).PaymentLinks }
	before := 0
	refusal(t, "link create", func() string { before = links(); return "" }, func(string) resp {
		return h.send(http.MethodPost, "/v1/paymentlink/create", keyA, typeJSON, `{"memo":"x"}`)
	})
	if links() != before {
		t.Errorf("a refused link create stored a link")
	}
	newLink := func() string {
		r := h.answered(http.MethodPost, "/v1/paymentlink/create", map[string]any{"memo": "cancel me"})
		return r.body["checkout_link"].(map[string]any)["checkout_token"].(string)
	}
	cancel := func(tok string) resp {
		return h.send(http.MethodDelete, "/v1/paymentlink/changestatus/"+tok, keyA, typeJSON, "")
	}
	tok := refusal(t, "link status change", newLink, cancel)
	for _, d := range h.answered(http.MethodGet, "/v1/paymentlink/list?limit=100", nil).data() {
		if l := d.(map[string]any); l["checkout_token"] == tok && l["status"] != linkActive {
			t.Errorf("a refused status change made the link %v", l["status"])
		}
	}

	tokens := func() int { return h.srv.KeyStats(keyA).Tokens }
	refusal(t, "tokenization", func() string { before = tokens(); return "" }, func(string) resp {
		return h.send(http.MethodPost, "/v1/account/tokenization", keyA, typeJSON, `{"first_name":"A","last_name":"B",`+
			`"bank_account":"1111000016","bank_routing":"`+FixtureRouting+`","store":"shop"}`)
	})
	if tokens() != before {
		t.Errorf("a refused tokenization stored a token")
	}
	refusal(t, "bank info", func() string { return "" }, func(string) resp {
		return h.get("/v1/check/bankinfo?bank_routing="+FixtureRouting, keyA)
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
