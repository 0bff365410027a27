package webhook

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/metrics"
)

// recordingHandler is a slog.Handler that keeps every record, so that a
// test counts log lines.
type recordingHandler struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

// refusedLines returns the "webhook: refused" records and the sum of their
// "refused" counts.
func (h *recordingHandler) refusedLines() (lines, total int, outcomes []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.recs {
		if r.Message != "webhook: refused" {
			continue
		}
		lines++
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "refused":
				total += int(a.Value.Int64())
			case "outcome":
				outcomes = append(outcomes, a.Value.String())
			}
			return true
		})
	}
	return lines, total, outcomes
}

// TestWebhookRefusalsLoggedOncePerMinute: 2,000 wrong-secret requests,
// 100 ms apart on the test clock (200 s in all), give one line a minute
// (4), whose counts add up to 2,000, and a counter of 2,000.
func TestWebhookRefusalsLoggedOncePerMinute(t *testing.T) {
	clock := clocktest.New(clocktest.Monday)
	rec := &recordingHandler{}
	m := metrics.New()
	f := newFixture(t, func(o *Options) {
		o.Logger = slog.New(rec)
		o.Now = clock.Now
		o.Observe = m.WebhookDelivery
	})
	for i := range 2000 {
		w := f.do(http.MethodPost, "/webhook/wrong-secret-0123456789abcdef", jsonCT, changed)
		if w.Code != http.StatusUnauthorized {
			t.Fatalf("request %d: status %d, want 401", i, w.Code)
		}
		clock.Advance(100 * time.Millisecond)
	}
	lines, total, _ := rec.refusedLines()
	if lines < 1 || lines > 4 {
		t.Errorf("%d log lines for 2,000 refusals over 200 s, want at most one a minute (4)", lines)
	}
	if got := counter(t, m, "unauthorized"); got != 2000 {
		t.Errorf("batchd_webhook_deliveries_total{outcome=unauthorized} = %v, want 2000", got)
	}
	// The lines count every refusal up to the last line; the ones after
	// it are told by the next line, whenever it comes.
	if total < 2000-600 || total > 2000 {
		t.Errorf("the lines count %d refusals, want all but the last minute's of 2,000", total)
	}
	// A minute later, the next refusal's line counts the ones in between.
	clock.Advance(time.Minute)
	f.do(http.MethodPost, "/webhook/wrong-secret-0123456789abcdef", jsonCT, changed)
	if _, total, _ = rec.refusedLines(); total != 2001 {
		t.Errorf("after one more refusal a minute later the lines count %d refusals, want 2001", total)
	}
}

// TestWebhookRefusalsPerOutcome: each outcome has its own minute, so a
// flood of one does not hide the first of another.
func TestWebhookRefusalsPerOutcome(t *testing.T) {
	clock := clocktest.New(clocktest.Monday)
	rec := &recordingHandler{}
	f := newFixture(t, func(o *Options) { o.Logger = slog.New(rec); o.Now = clock.Now })
	for range 50 {
		f.do(http.MethodPost, "/webhook/wrong-secret-0123456789abcdef", jsonCT, changed)
		f.do(http.MethodPost, "/nowhere", jsonCT, changed)
		f.do(http.MethodGet, hookPath, jsonCT, changed)
	}
	lines, total, outcomes := rec.refusedLines()
	if lines != 3 || total != 3 {
		t.Errorf("%d lines counting %d refusals (%v), want 3 lines counting 3", lines, total, outcomes)
	}
	if got := strings.Join(outcomes, ","); got != "unauthorized,not_found,bad_method" {
		t.Errorf("outcomes logged %s", got)
	}
}

// TestWebhookWrongPath: a delivery whose path ends in the secret but is
// not under Path (webhook.url's path does not reach webhook.path) is a
// 404 counted as wrong_path and logged at WARN with the fix; a stranger's
// 404 is not_found. Neither line holds the secret.
func TestWebhookWrongPath(t *testing.T) {
	rec := &recordingHandler{}
	m := metrics.New()
	f := newFixture(t, func(o *Options) { o.Logger = slog.New(rec); o.Observe = m.WebhookDelivery })
	for _, p := range []string{"/hooks/" + testSecret, "/" + testSecret, "/api/webhook/" + testSecret} {
		wantStatus(t, f.do(http.MethodPost, p, jsonCT, changed), http.StatusNotFound)
	}
	wantStatus(t, f.do(http.MethodPost, "/wp-login.php", jsonCT, changed), http.StatusNotFound)
	wantStatus(t, f.do(http.MethodPost, "/hooks/"+testSecret+"x", jsonCT, changed), http.StatusNotFound)
	if got := counter(t, m, "wrong_path"); got != 3 {
		t.Errorf("wrong_path counted %v, want 3", got)
	}
	if got := counter(t, m, "not_found"); got != 2 {
		t.Errorf("not_found counted %v, want 2", got)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var warned bool
	for _, r := range rec.recs {
		var line strings.Builder
		line.WriteString(r.Message)
		r.Attrs(func(a slog.Attr) bool { line.WriteString(" " + a.String()); return true })
		if strings.Contains(line.String(), testSecret) {
			t.Errorf("a log line holds the secret: %s", line.String())
		}
		if r.Level == slog.LevelWarn && strings.Contains(line.String(), "wrong_path") && strings.Contains(line.String(), "webhook.path") {
			warned = true
		}
	}
	if !warned {
		t.Error("no WARN line names wrong_path and webhook.path")
	}
	wantStored(t, f.store, 0, 0)
}

func counter(t *testing.T, m *metrics.Metrics, outcome string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "batchd_webhook_deliveries_total" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return mt.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
