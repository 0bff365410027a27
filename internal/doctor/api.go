package doctor

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/ach"
	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/echeck"
)

// dateRecorder is an http.RoundTripper that keeps the Date header of the
// last response, for the clock check.
type dateRecorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	date string
}

func (d *dateRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := d.next.RoundTrip(r)
	if err == nil {
		d.mu.Lock()
		d.date = resp.Header.Get("Date")
		d.mu.Unlock()
	}
	return resp, err
}

func (d *dateRecorder) last() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.date
}

// API makes one cheap read with the configured key (the first check of
// the list, one entry), and compares this host's clock with the Date
// header of the service's answer (an answer refusing the key has one
// too). It returns the "api" result and the "clock" result.
func API(ctx context.Context, cfg *config.Config, o Options) (api, clock Result) {
	o = o.normalize()
	rec := &dateRecorder{next: http.DefaultTransport}
	c, err := echeck.New(apiwire.Options{BaseURL: cfg.API.BaseURL, Key: cfg.APIKey(), Timeout: cfg.API.Timeout.Std(),
		HTTPClient: &http.Client{Transport: rec}})
	if err != nil {
		r := fail("api", "cannot make a client: "+err.Error(), "correct api.base_url and api.key_file")
		return r, warn("clock", "not compared: no answer from the service", "")
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	_, err = c.ListChecks(ctx, echeck.ListParams{Limit: 1})
	sent := o.Now()
	return apiResult(cfg, err), clockResult(rec.last(), sent, o.MaxSkew)
}

func apiResult(cfg *config.Config, err error) Result {
	if err == nil {
		return ok("api", fmt.Sprintf("%s accepts the %s key (a check list read)", cfg.API.BaseURL, cfg.API.Mode))
	}
	if apiwire.ClassOf(err) == apiwire.Fatal {
		return fail("api", "the service refused the API key: "+err.Error(),
			fmt.Sprintf("put a valid %s key (sk_%s_…) from the service's dashboard in api.key_file; api.mode %s must match it",
				cfg.API.Mode, cfg.API.Mode, cfg.API.Mode))
	}
	return fail("api", err.Error(), "check api.base_url, DNS and the network path (proxy, firewall) to the service")
}

// clockResult compares now with the service's Date header.
func clockResult(date string, now time.Time, maxSkew time.Duration) Result {
	if date == "" {
		return warn("clock", "not compared: the service sent no answer with a Date header", "")
	}
	t, err := http.ParseTime(date)
	if err != nil {
		return warn("clock", fmt.Sprintf("not compared: the service's Date header %q is unreadable", date), "")
	}
	// Date has whole seconds: a second of difference is its rounding.
	skew := now.Sub(t)
	d := skew.Abs().Truncate(time.Second)
	if d <= maxSkew {
		return ok("clock", fmt.Sprintf("within %s of the service's (Date header)", max(d, time.Second)))
	}
	way := "ahead of"
	if skew < 0 {
		way = "behind"
	}
	return warn("clock", fmt.Sprintf("this host's clock is %s %s the service's (more than %s): dates and send-by deadlines would be judged wrong", d, way, maxSkew),
		"synchronise the clock: timedatectl set-ntp true (or start chronyd / ntpd)")
}

// Webhook compares the webhook URL registered for the API key (GET
// /webhooks) with webhook.url and the secret; it never registers one
// (batchd run does, at start). URLs are shown without their last path
// segment, the secret.
func Webhook(ctx context.Context, cfg *config.Config, timeout time.Duration) Result {
	if !cfg.Webhook.Enabled() {
		return ok("webhook", "not configured (webhook.listen is empty); reconcile pages the check list")
	}
	c, err := ach.New(apiwire.Options{BaseURL: cfg.ACHBaseURL(), Key: cfg.APIKey(), Timeout: cfg.API.Timeout.Std()})
	if err != nil {
		return fail("webhook", "cannot make a client: "+err.Error(), "correct ach.base_url or api.base_url")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	reg, err := c.WebhookStatus(ctx)
	if err != nil {
		return fail("webhook", "cannot read the registration: "+err.Error(), "check the api result above; the key must be allowed to read /webhooks")
	}
	want := cfg.WebhookURL()
	switch {
	case reg.URL == "":
		return warn("webhook", "no URL is registered for this key", "start batchd (batchd run registers "+masked(want)+"), then run batchd doctor again")
	case reg.URL != want:
		return warn("webhook", "another URL is registered for this key: "+masked(reg.URL)+", not "+masked(want),
			"if no other installation uses this key, start batchd: it registers its own URL; otherwise give each installation its own key")
	case reg.Disabled:
		return warn("webhook", masked(want)+" is registered but the service disabled deliveries after failures",
			"check that "+cfg.Webhook.URL+" reaches webhook.listen through the proxy, then restart batchd (it registers again)")
	}
	return ok("webhook", masked(want)+" is registered and enabled")
}

// masked is a webhook URL without its last path segment, which for
// batchd's own URL is the secret.
func masked(u string) string {
	u = strings.TrimRight(u, "/")
	if i := strings.LastIndexByte(u, '/'); i > len("https://") {
		return u[:i] + "/…"
	}
	return u
}
