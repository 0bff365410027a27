package sandbox

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestWebhookRetry checks that a delivery is tried again after answers
// that are not 2xx, and ends at the first 2xx.
func TestWebhookRetry(t *testing.T) {
	h := newHarness(t, fastHooks(Options{WebhookTries: 4}))
	rc := newReceiver(t, func(n int) int {
		return []int{http.StatusInternalServerError, http.StatusNotFound, http.StatusOK, http.StatusOK}[n]
	})
	h.hook(keyA, rc.url)
	c := h.create(keyA, nil)
	h.idle()
	wantEvents(t, rc, []string{"check.created " + str(c, "check_id")})
	st := h.srv.Stats()
	if st.WebhookAttempts != 3 || st.WebhooksSent != 1 || st.WebhooksFailed != 0 || rc.requests() != 3 {
		t.Errorf("stats %+v, %d requests; want 3 tries, 1 sent", st, rc.requests())
	}
	wantBalanced(t, st)
}

// TestWebhookDisable checks that WebhookMaxFailures failed deliveries in
// a row disable the endpoint (GET /webhooks says so, no event is queued
// any more), that a success in between resets the count, and that
// registering again enables it.
func TestWebhookDisable(t *testing.T) {
	h := newHarness(t, fastHooks(Options{WebhookMaxFailures: 2, WebhookTries: 2}))
	var healthy atomic.Bool
	rc := newReceiver(t, func(int) int {
		if healthy.Load() {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	h.hook(keyA, rc.url)
	endpoint := func() (string, bool) {
		r := h.get(ach("/webhooks"), keyA)
		wantStatus(t, r, http.StatusOK)
		return str(r.body, "webhook_url"), r.body["disabled"] == true
	}

	h.create(keyA, nil) // fails: 1 in a row
	h.idle()
	healthy.Store(true)
	h.create(keyA, nil) // succeeds: 0 in a row
	h.idle()
	healthy.Store(false)
	h.create(keyA, nil) // fails: 1
	h.idle()
	if _, off := endpoint(); off {
		t.Fatal("disabled although a success came between the failures")
	}
	h.create(keyA, nil) // fails: 2, disabled
	h.idle()
	u, off := endpoint()
	if !off || u != rc.url {
		t.Fatalf("after 2 failures in a row: url %q disabled %v", u, off)
	}
	st := h.srv.Stats()
	if st.WebhookEvents != 4 || st.WebhooksFailed != 3 || st.WebhooksSent != 1 || st.WebhookAttempts != 7 {
		t.Errorf("stats %+v", st)
	}
	h.create(keyA, nil) // no event for a disabled endpoint
	h.idle()
	if st := h.srv.Stats(); st.WebhookEvents != 4 {
		t.Errorf("event queued for a disabled endpoint: %+v", st)
	}

	healthy.Store(true)
	h.hook(keyA, rc.url)
	if _, off := endpoint(); off {
		t.Fatal("still disabled after registering again")
	}
	c := h.create(keyA, nil)
	h.idle()
	ds := rc.deliveries()
	if len(ds) != 2 || str(ds[1].data, "check_id") != str(c, "check_id") {
		t.Errorf("after re-registering: %q", rc.events())
	}
	wantBalanced(t, h.srv.Stats())
}

// TestWebhookNoRedirect checks that a redirect is a failed try, never
// followed.
func TestWebhookNoRedirect(t *testing.T) {
	h := newHarness(t, fastHooks(Options{WebhookTries: 2}))
	target := newReceiver(t, nil)
	redirect := httptest.NewServer(http.RedirectHandler(target.url, http.StatusTemporaryRedirect))
	t.Cleanup(redirect.Close)
	h.hook(keyA, redirect.URL)
	h.create(keyA, nil)
	h.idle()
	if st := h.srv.Stats(); st.WebhooksFailed != 1 || st.WebhookAttempts != 2 || target.requests() != 0 {
		t.Errorf("stats %+v, target reached %d times", st, target.requests())
	}
}

// TestWebhookOtherKeys checks that each key's events go to its own URL
// with its own key.
func TestWebhookOtherKeys(t *testing.T) {
	h := newHarness(t, fastHooks(Options{}))
	ra, rb := newReceiver(t, nil), newReceiver(t, nil)
	h.hook(keyA, ra.url)
	h.hook(keyB, rb.url)
	ca, cb := h.create(keyA, nil), h.create(keyB, nil)
	h.idle()
	wantEvents(t, ra, []string{"check.created " + str(ca, "check_id")})
	wantEvents(t, rb, []string{"check.created " + str(cb, "check_id")})
	wantHeaders(t, rb.deliveries(), keyB, typeJSON)
}

// TestWebhookClose checks that Close aborts a POST in flight, discards
// what waits (queued or held back), waits for its goroutines, and that
// no event is delivered afterwards.
func TestWebhookClose(t *testing.T) {
	h := newHarness(t, fastHooks(Options{WebhookReorder: 1}))
	h.srv.hooks.hold = time.Hour // before any event; only WebhooksIdle or Close release
	arrived := make(chan struct{}, 10)
	aborted := make(chan struct{}, 10)
	block := blockingReceiver(t, arrived, aborted)
	h.hook(keyA, block.URL)
	h.create(keyA, nil) // held, then queued behind the next
	h.create(keyA, nil) // in flight
	h.create(keyA, nil) // held
	waitChan(t, arrived, "the first POST")

	closed := make(chan struct{})
	go func() { _ = h.srv.Close(); close(closed) }()
	waitChan(t, closed, "Close")
	waitChan(t, aborted, "the aborted POST")
	h.idle()
	st := h.srv.Stats()
	if st.WebhookEvents != 3 || st.WebhooksDiscarded != 3 || st.WebhooksSent != 0 {
		t.Errorf("stats %+v, want 3 events discarded", st)
	}
	wantBalanced(t, st)

	h.create(keyA, nil) // served, but not delivered
	h.idle()
	if st := h.srv.Stats(); st.WebhooksDiscarded != 4 || st.WebhookAttempts != 1 {
		t.Errorf("after Close: %+v", st)
	}
	if err := h.srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// blockingReceiver is an endpoint that never answers: it reports each
// request on arrived and, once the sender gives up, on aborted (if not
// nil). It lets go of its requests when the test ends.
func blockingReceiver(t *testing.T, arrived, aborted chan<- struct{}) *httptest.Server {
	done := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that net/http notices the sender hanging up
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
			if aborted != nil {
				aborted <- struct{}{}
			}
		case <-done:
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(done) })
	return ts
}

// waitChan waits for a value on ch, failing after 10 s.
func waitChan[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestWebhooksIdleContext checks that WebhooksIdle gives up with its
// context while a delivery hangs.
func TestWebhooksIdleContext(t *testing.T) {
	h := newHarness(t, fastHooks(Options{}))
	arrived := make(chan struct{}, 1)
	block := blockingReceiver(t, arrived, nil)
	h.hook(keyA, block.URL)
	h.create(keyA, nil)
	waitChan(t, arrived, "the POST")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.srv.WebhooksIdle(ctx); err != context.Canceled {
		t.Errorf("WebhooksIdle = %v, want context.Canceled", err)
	}
}
