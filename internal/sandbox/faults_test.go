package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

func TestDropStoresCheck(t *testing.T) {
	h := newHarness(t, Options{DropRate: 1})
	body, _ := json.Marshal(with(map[string]any{"label": "dropped"}))
	_, err := h.try(context.Background(), http.MethodPost, "/v1/check/create", keyA, typeJSON, string(body))
	if err == nil {
		t.Fatal("create answered although DropRate is 1")
	}
	r := h.get("/v1/check/list?label=dropped", keyA)
	wantStatus(t, r, http.StatusOK)
	if len(r.data()) != 1 || r.data()[0].(map[string]any)["status"] != statusInProcess {
		t.Fatalf("the dropped create did not store its check: %s", r.raw)
	}
	if st := h.srv.Stats(); st.Drops != 1 || st.Creates != 1 || st.Checks != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestDropWithoutHijacker(t *testing.T) {
	srv := New(Options{DropRate: 1})
	body, _ := json.Marshal(validCheck())
	req := newRequest(http.MethodPost, "/v1/check/create", "sk_test_x", typeJSON, body)
	defer func() {
		if p := recover(); p != http.ErrAbortHandler {
			t.Fatalf("recovered %v, want http.ErrAbortHandler", p)
		}
		if got := srv.KeyStats("sk_test_x").Checks; got != 1 {
			t.Fatalf("checks %d", got)
		}
	}()
	srv.ServeHTTP(&discardWriter{}, req)
}

func TestErrorRateHasNoEffect(t *testing.T) {
	h := newHarness(t, Options{ErrorRate: 1, Seed: 7})
	seen := map[int]int{}
	for range 20 {
		r := h.post("/v1/check/create", keyA, validCheck())
		seen[r.status]++
		if r.body["error"] != true {
			t.Fatalf("injected error without envelope: %s", r.raw)
		}
		if r.status == http.StatusServiceUnavailable && r.header.Get("Retry-After") == "" {
			t.Errorf("503 without Retry-After")
		}
	}
	if seen[500] == 0 || seen[503] == 0 || seen[500]+seen[503] != 20 {
		t.Errorf("statuses %v, want both 500 and 503 only", seen)
	}
	if got := h.srv.KeyStats(keyA).Checks; got != 0 {
		t.Errorf("injected errors stored %d checks", got)
	}
	if st := h.srv.Stats(); st.InjectedErrors != 20 || st.Creates != 0 {
		t.Errorf("stats %+v", st)
	}
	wantStatus(t, h.get("/_sandbox/clock", keyA), http.StatusOK)
}

// faultRun makes n creates against a fresh server and records what each
// met: its status, or -1 for a dropped answer.
func faultRun(t *testing.T, seed int64, n int) []int {
	h := newHarness(t, Options{ErrorRate: 0.3, DropRate: 0.3, Seed: seed})
	body, _ := json.Marshal(validCheck())
	out := make([]int, n)
	for i := range out {
		r, err := h.try(context.Background(), http.MethodPost, "/v1/check/create", keyA, typeJSON, string(body))
		if err != nil {
			out[i] = -1
			continue
		}
		out[i] = r.status
	}
	return out
}

func TestFaultsReproducibleBySeed(t *testing.T) {
	a, b, c := faultRun(t, 42, 60), faultRun(t, 42, 60), faultRun(t, 43, 60)
	kinds := map[int]bool{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, request %d: %d vs %d", i, a[i], b[i])
		}
		kinds[a[i]] = true
	}
	if len(kinds) != 4 {
		t.Errorf("want 200, 500, 503 and drops in 60 requests, got %v", kinds)
	}
	same := true
	for i := range a {
		same = same && a[i] == c[i]
	}
	if same {
		t.Errorf("seeds 42 and 43 gave the same faults")
	}
}

func TestRateLimit(t *testing.T) {
	h := newHarness(t, Options{RateLimit: 2})
	for range 2 {
		wantStatus(t, h.get("/v1/check/list", keyA), http.StatusOK)
	}
	r := h.get("/v1/check/list", keyA)
	wantStatus(t, r, http.StatusTooManyRequests)
	if r.header.Get("Retry-After") != "1" || r.body["error"] != true {
		t.Errorf("429 answer %v %s", r.header, r.raw)
	}
	wantStatus(t, h.get("/v1/check/list", keyB), http.StatusOK)
	wantStatus(t, h.get("/_sandbox/clock", keyA), http.StatusOK)
	h.clock.Add(time.Second)
	wantStatus(t, h.get("/v1/check/list", keyA), http.StatusOK)
	if st := h.srv.Stats(); st.RateLimited != 1 {
		t.Errorf("stats %+v", st)
	}

	slow := newHarness(t, Options{RateLimit: 0.1})
	wantStatus(t, slow.get("/v1/check/list", keyA), http.StatusOK)
	r = slow.get("/v1/check/list", keyA)
	wantStatus(t, r, http.StatusTooManyRequests)
	if got, _ := strconv.Atoi(r.header.Get("Retry-After")); got != 10 {
		t.Errorf("Retry-After %q, want 10", r.header.Get("Retry-After"))
	}
}

func TestLatencyHonoursCancellation(t *testing.T) {
	h := newHarness(t, Options{Latency: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	body, _ := json.Marshal(validCheck())
	go func() {
		_, err := h.try(ctx, http.MethodPost, "/v1/check/create", keyA, typeJSON, string(body))
		done <- err
	}()
	eventually(t, "the request to reach the server", func() bool { return h.srv.Stats().Requests == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("client error %v", err)
	}
	eventually(t, "the server to abandon the request", func() bool { return h.srv.Stats().Cancelled == 1 })
	if st := h.srv.Stats(); st.Creates != 0 {
		t.Errorf("a cancelled request created a check")
	}

	quick := newHarness(t, Options{Latency: time.Millisecond})
	wantStatus(t, quick.post("/v1/check/create", keyA, validCheck()), http.StatusOK)
}
