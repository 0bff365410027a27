package sandbox

import (
	"net/http"
	"reflect"
	"testing"
	"time"
)

// createN creates n checks for keyA and returns their ids in order.
func (h *harness) createN(n int) []string {
	h.t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = str(h.create(keyA, nil), "check_id")
	}
	return ids
}

// createdOrder is the index in ids of each check.created received.
func createdOrder(t *testing.T, rc *receiver, ids []string) []int {
	t.Helper()
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		index[id] = i
	}
	var out []int
	for _, d := range rc.deliveries() {
		i, ok := index[str(d.data, "check_id")]
		if !ok || d.event != eventCheckCreated {
			t.Fatalf("unexpected delivery %s %v", d.event, d.data)
		}
		out = append(out, i)
	}
	return out
}

// TestWebhookDropDup checks WebhookDropRate and WebhookDupRate against
// the seeded generator: the events dropped and doubled are exactly those
// newHookRNG(Seed) picks, drawn in event order, and the rest arrive in
// order, a duplicate right after its original.
func TestWebhookDropDup(t *testing.T) {
	const n, seed, drop, dup = 80, 7, 0.3, 0.25
	h := newHarness(t, fastHooks(Options{Seed: seed, WebhookDropRate: drop, WebhookDupRate: dup}))
	rc := newReceiver(t, nil)
	h.hook(keyA, rc.url)
	ids := h.createN(n)
	h.idle()

	rng := newHookRNG(seed)
	var want []int
	var dropped, doubled int64
	for i := range n {
		if rng.Float64() < drop {
			dropped++
			continue
		}
		want = append(want, i)
		if rng.Float64() < dup {
			doubled++
			want = append(want, i)
		}
	}
	if got := createdOrder(t, rc, ids); !reflect.DeepEqual(got, want) {
		t.Errorf("deliveries:\n got %v\nwant %v", got, want)
	}
	st := h.srv.Stats()
	if st.WebhookEvents != n || st.WebhooksDropped != dropped || st.WebhooksDuplicated != doubled ||
		st.WebhooksSent != int64(len(want)) || dropped == 0 || doubled == 0 {
		t.Errorf("stats %+v; want %d dropped, %d doubled, %d sent", st, dropped, doubled, len(want))
	}
	wantBalanced(t, st)
}

// TestWebhookReorder checks WebhookReorder: a held event goes out right
// after the key's next one, and the last one held is released by
// WebhooksIdle. At rate 1 every pair is swapped.
func TestWebhookReorder(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		seed int64
	}{{1, 1}, {0.4, 3}} {
		h := newHarness(t, fastHooks(Options{Seed: tc.seed, WebhookReorder: tc.rate}))
		h.srv.hooks.hold = time.Hour // before any event: only a successor or WebhooksIdle releases
		rc := newReceiver(t, nil)
		h.hook(keyA, rc.url)
		const n = 41
		ids := h.createN(n)
		h.idle()

		rng := newHookRNG(tc.seed)
		var want []int
		held, reordered := -1, int64(0)
		for i := range n {
			switch {
			case held >= 0:
				want = append(want, i, held)
				held = -1
			case rng.Float64() < tc.rate:
				held = i
				reordered++
			default:
				want = append(want, i)
			}
		}
		if held >= 0 {
			want = append(want, held)
		}
		if got := createdOrder(t, rc, ids); !reflect.DeepEqual(got, want) {
			t.Errorf("rate %v: deliveries:\n got %v\nwant %v", tc.rate, got, want)
		}
		st := h.srv.Stats()
		if st.WebhooksReordered != reordered || st.WebhooksSent != n || reordered == 0 {
			t.Errorf("rate %v: stats %+v, want %d reordered", tc.rate, st, reordered)
		}
		if tc.rate == 1 && reordered != (n+1)/2 {
			t.Errorf("rate 1: %d reordered, want %d", reordered, (n+1)/2)
		}
		wantBalanced(t, st)
	}
}

// TestWebhookHoldTimer checks that an event held back with no successor
// is sent once the hold time passes, without WebhooksIdle's help.
func TestWebhookHoldTimer(t *testing.T) {
	h := newHarness(t, fastHooks(Options{WebhookReorder: 1}))
	h.srv.hooks.hold = time.Millisecond
	rc := newReceiver(t, nil)
	h.hook(keyA, rc.url)
	c := h.create(keyA, nil)
	h.srv.hooks.mu.Lock()
	idle := h.srv.hooks.idle
	h.srv.hooks.mu.Unlock()
	waitChan(t, idle, "the held event")
	wantEvents(t, rc, []string{"check.created " + str(c, "check_id")})
}

// TestWebhookFaultsApart checks that webhook faults draw from their own
// generator: a seeded run of requests meets the same injected errors
// whether or not its webhook deliveries meet faults.
func TestWebhookFaultsApart(t *testing.T) {
	run := func(rate float64) []int {
		h := newHarness(t, fastHooks(Options{Seed: 11, ErrorRate: 0.4,
			WebhookDropRate: rate, WebhookDupRate: rate, WebhookReorder: rate}))
		h.srv.hooks.hold = time.Hour
		rc := newReceiver(t, nil)
		var codes []int
		for {
			r := h.post(ach("/webhooks"), keyA, map[string]any{"url": rc.url})
			codes = append(codes, r.status)
			if r.status == http.StatusOK {
				break
			}
		}
		for range 30 {
			codes = append(codes, h.post("/v1/check/create", keyA, validCheck()).status)
		}
		h.idle()
		if st := h.srv.Stats(); st.WebhookEvents == 0 || (rate > 0 && st.WebhooksDropped == 0) {
			t.Errorf("rate %v: stats %+v", rate, st)
		}
		return codes
	}
	faulty, clean := run(0.5), run(0)
	if !reflect.DeepEqual(faulty, clean) {
		t.Errorf("injected errors differ:\n with webhook faults %v\n without            %v", faulty, clean)
	}
}
