package sandbox

import (
	"net/http"
	"testing"
)

// TestControlEndpointsReadJSONWhateverTheContentType: the /_sandbox
// control endpoints, typed by hand, read a JSON body sent with no
// Content-Type, with curl -d's form type or as text, and still read a
// form; the service's own endpoints keep its rule (a form type is a form).
func TestControlEndpointsReadJSONWhateverTheContentType(t *testing.T) {
	h := newHarness(t, Options{})
	for _, ct := range []string{"", typeForm, "text/plain", typeJSON} {
		if r := h.send(http.MethodPost, "/_sandbox/clock", keyA, ct, `{"advance_days": 1}`); r.status != http.StatusOK {
			t.Errorf("clock, Content-Type %q: %d %s", ct, r.status, r.raw)
		}
	}
	if r := h.send(http.MethodPost, "/_sandbox/clock", keyA, typeForm, "advance_days=1"); r.status != http.StatusOK {
		t.Errorf("clock, a form: %d %s", r.status, r.raw)
	}
	if r := h.get("/_sandbox/clock", keyA); str(r.body, "now") != "2026-03-07 10:00:00" {
		t.Errorf("after five days: %v", r.body)
	}
	if r := h.send(http.MethodPost, ach("/_sandbox/processor/token/revoke"), keyA, typeForm, `{"processor_token": "none"}`); r.status == http.StatusBadRequest {
		t.Errorf("ACH control endpoint read the JSON as a form: %d %s", r.status, r.raw)
	}
	if r := h.send(http.MethodPost, "/v1/check/create", keyA, typeForm, `{"amount": 1}`); r.status != http.StatusBadRequest {
		t.Errorf("the API's own endpoint took JSON labelled a form: %d %s", r.status, r.raw)
	}
}
