package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// delivery is one webhook POST a receiver got, decoded.
type delivery struct {
	auth, ctype string
	raw         []byte
	event       string
	data        map[string]any
	timestamp   string
}

// receiver is a webhook endpoint that records every POST. answer, when
// set, gives the status of the n-th request (from 0); otherwise 200.
type receiver struct {
	t      testing.TB
	url    string
	answer func(n int) int

	mu   sync.Mutex
	got  []delivery // answered 2xx, in arrival order
	hits int        // requests, whatever the answer
}

// newReceiver starts a receiver; it is closed when the test ends.
func newReceiver(t testing.TB, answer func(n int) int) *receiver {
	t.Helper()
	rc := &receiver{t: t, answer: answer}
	ts := httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(ts.Close)
	rc.url = ts.URL + "/hook?secret=s3cr3t"
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	n := rc.hits
	rc.hits++
	rc.mu.Unlock()
	status := http.StatusOK
	if rc.answer != nil {
		status = rc.answer(n)
	}
	if status/100 == 2 {
		d, err := decodeDelivery(r, raw)
		if err != nil {
			rc.t.Errorf("webhook body %q: %v", raw, err)
		}
		rc.mu.Lock()
		rc.got = append(rc.got, d)
		rc.mu.Unlock()
	}
	w.WriteHeader(status)
}

// decodeDelivery reads a JSON or form-encoded webhook body.
func decodeDelivery(r *http.Request, raw []byte) (delivery, error) {
	d := delivery{auth: r.Header.Get("Authorization"), ctype: r.Header.Get("Content-Type"), raw: raw}
	var data []byte
	if d.ctype == typeForm {
		v, err := url.ParseQuery(string(raw))
		if err != nil {
			return d, err
		}
		d.event, d.timestamp, data = v.Get("event"), v.Get("timestamp"), []byte(v.Get("data"))
	} else {
		var b struct {
			Event     string          `json:"event"`
			Data      json.RawMessage `json:"data"`
			Timestamp string          `json:"timestamp"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return d, err
		}
		d.event, d.timestamp, data = b.Event, b.Timestamp, b.Data
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return d, dec.Decode(&d.data)
}

// deliveries is a copy of what the receiver accepted.
func (rc *receiver) deliveries() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.got...)
}

// requests is how many POSTs reached the receiver.
func (rc *receiver) requests() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.hits
}

// events lists the event names received, with the id of each one's data.
func (rc *receiver) events() []string {
	var out []string
	for _, d := range rc.deliveries() {
		id := str(d.data, "check_id")
		if id == "" {
			id = str(d.data, "source_id")
		}
		out = append(out, d.event+" "+id)
	}
	return out
}

// fastHooks are webhook options for tests: retries 1ms apart.
func fastHooks(opts Options) Options {
	if opts.WebhookRetryWait == 0 {
		opts.WebhookRetryWait = time.Millisecond
	}
	if opts.WebhookTries == 0 {
		opts.WebhookTries = 3
	}
	return opts
}

// hook registers u as key's webhook URL.
func (h *harness) hook(key, u string) {
	h.t.Helper()
	r := h.post(ach("/webhooks"), key, map[string]any{"url": u})
	wantStatus(h.t, r, http.StatusOK)
}

// idle waits until every webhook delivery has ended.
func (h *harness) idle() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.srv.WebhooksIdle(ctx); err != nil {
		h.t.Fatalf("webhooks not idle: %v (stats %+v)", err, h.srv.Stats())
	}
}

// wantBalanced checks the accounting of Stats once idle: every event
// not dropped, and every duplicate, was sent, failed or discarded.
func wantBalanced(t testing.TB, st Stats) {
	t.Helper()
	if st.WebhookEvents-st.WebhooksDropped+st.WebhooksDuplicated != st.WebhooksSent+st.WebhooksFailed+st.WebhooksDiscarded {
		t.Errorf("stats do not balance: %+v", st)
	}
}
