package jobs

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/metrics"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/reconcile"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/webhook"
)

// TestReconcileWithWebhooks wires webhook.listen through to reconcile: the
// first run lists in full and records it; the next lists nothing and
// reports a check created outside batchd from the event the ledger
// recorded of it (a funding source's event is not a check's). The daemon's
// line and metrics carry the calls.
func TestReconcileWithWebhooks(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		clk := clocktest.New(clocktest.Monday)
		srv := httptest.NewServer(sandbox.New(sandbox.Options{Keys: []sandbox.Key{{Value: key}}, Now: clk.Now}))
		t.Cleanup(srv.Close)
		c := config.Default()
		c.StateDir = t.TempDir()
		c.API.BaseURL, c.API.Mode, c.API.Rate = srv.URL, config.ModeTest, 200
		c.Webhook.Listen = "127.0.0.1:0"
		c.SetAPIKey(key)
		env := openEnv(t, backend, c, clk.Now)
		ctx := context.Background()
		api, _ := echeck.New(apiwire.Options{BaseURL: srv.URL, Key: key})
		outside, err := api.CreateCheck(ctx, echeck.CheckRequest{Amount: 999, Memo: "by hand", Name: "Someone",
			Email: "s@example.com", BankRouting: "999900001", BankAccount: "1111000016", Label: "manual"})
		if err != nil {
			t.Fatal(err)
		}
		m := metrics.New()
		s := Scheduled{Env: env, Metrics: m}
		line, err := s.Reconcile(ctx)
		if err != nil || !strings.Contains(line, "1 unknown") || !strings.Contains(line, "API calls 1 (minimum 1), full walk: no full walk recorded yet") {
			t.Fatalf("first run: %q %v", line, err)
		}

		db := env.DB
		for _, ev := range []webhook.Event{
			{ID: "ev-check", Name: "check.created", Kind: webhook.KindCheck, CheckID: outside.CheckID, CheckStatus: payment.StatusInProcess, At: clk.Now()},
			{ID: "ev-source", Name: "funding-source.verified", Kind: webhook.KindSource, SourceID: "src-not-ours"},
		} {
			if _, err := db.Record(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
		sum, err := env.Reconcile(ctx, nil)
		if err != nil || sum.Plan != reconcile.PlanFetch || sum.Calls != 0 || sum.Unknown != 1 {
			t.Fatalf("second run: %+v %v", sum, err)
		}
		line, err = s.Reconcile(ctx)
		if err != nil || !strings.Contains(line, "API calls 0 (minimum 0), fetch: every row is final") {
			t.Fatalf("daemon line %q %v", line, err)
		}
		body := scrapeMetrics(t, m)
		for _, want := range []string{"batchd_reconcile_api_calls 0", "batchd_reconcile_api_calls_total 1", "batchd_reconcile_api_calls_minimum 0"} {
			if !strings.Contains(body, want+"\n") {
				t.Errorf("metrics lack %q", want)
			}
		}
		// A window named by the caller is listed in full.
		w := sum.Window
		if sum, err := env.Reconcile(ctx, &w); err != nil || sum.Plan != reconcile.PlanFullWalk || sum.PagesRead != 1 {
			t.Fatalf("explicit window: %+v %v", sum, err)
		}
	})
}

func scrapeMetrics(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}
