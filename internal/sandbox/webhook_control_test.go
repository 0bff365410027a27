package sandbox

import (
	"fmt"
	"net/http"
	"testing"
)

// TestWebhookFaultsAtRunTime: /_sandbox/webhooks/faults turns drops on and
// off while the sandbox runs, keeps a rate left out, and refuses a rate
// outside 0..1 without changing anything.
func TestWebhookFaultsAtRunTime(t *testing.T) {
	h := newHarness(t, fastHooks(Options{Seed: 3}))
	rc := newReceiver(t, nil)
	h.hook(keyA, rc.url)
	h.createN(5)
	h.idle()
	if n := len(rc.deliveries()); n != 5 {
		t.Fatalf("clean: %d deliveries, want 5", n)
	}

	r := h.post("/_sandbox/webhooks/faults", keyA, map[string]any{"drop_rate": 1, "dup_rate": "0.5"})
	wantStatus(t, r, http.StatusOK)
	if fmt.Sprintf("%v %v %v", r.body["drop_rate"], r.body["dup_rate"], r.body["reorder_rate"]) != "1 0.5 0" {
		t.Fatalf("answer %v", r.body)
	}
	h.createN(5)
	h.idle()
	if n := len(rc.deliveries()); n != 5 {
		t.Fatalf("dropping: %d deliveries, want still 5", n)
	}

	wantStatus(t, h.post("/_sandbox/webhooks/faults", keyA, map[string]any{"drop_rate": 1.5}), http.StatusBadRequest)
	r = h.post("/_sandbox/webhooks/faults", keyA, map[string]any{"drop_rate": 0, "dup_rate": 0})
	wantStatus(t, r, http.StatusOK)
	h.createN(3)
	h.idle()
	if n := len(rc.deliveries()); n != 8 {
		t.Fatalf("clean again: %d deliveries, want 8", n)
	}
	if st := h.srv.Stats(); st.WebhooksDropped != 5 {
		t.Fatalf("dropped %d, want 5", st.WebhooksDropped)
	}
}
