package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/logattr"
	"github.com/batchd/batchd/internal/sandbox"
)

// keyList collects repeated --key flags.
type keyList []sandbox.Key

func (k *keyList) String() string { return fmt.Sprintf("%d keys", len(*k)) }

func (k *keyList) Set(v string) error {
	key, err := sandbox.ParseKey(v)
	if err != nil {
		return err
	}
	*k = append(*k, key)
	return nil
}

// rateFlag is a probability given as a fraction from 0 to 1, or as true
// (1) or false (0).
type rateFlag float64

func (r *rateFlag) String() string { return strconv.FormatFloat(float64(*r), 'g', -1, 64) }

func (r *rateFlag) Set(v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		*r = 1
		return nil
	case "false":
		*r = 0
		return nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(f >= 0 && f <= 1) {
		return errors.New("must be true, false or a fraction between 0 and 1")
	}
	*r = rateFlag(f)
	return nil
}

func runSandbox(ctx context.Context, env *environ, args []string) error {
	fs := newFlags(env, "sandbox", "[--listen 127.0.0.1:8080] [--key sk_test_…] [--quirks] [--date YYYY-MM-DD] [--tz ZONE] "+
		"[--legacy-processor NAME] [--max-funding-sources N] [--webhook-form] [--webhook-max-failures N] [fault flags]")
	listen := fs.String("listen", "127.0.0.1:8080", "address to serve on (port 0 picks a free port)")
	var keys keyList
	fs.Var(&keys, "key", "accepted API key, repeatable; `sk_test_x`, sk_test_x:basic (no fund-confirmation plan) "+
		"or sk_test_x:inactive (/ach/v2 answers 403 App inactive). Default: any sk_test_ key")
	rateLimit := fs.Float64("rate-limit", 0, "requests per second per key; the excess gets 429 with Retry-After (0 = unlimited)")
	latency := fs.Duration("latency", 0, "delay added to every request")
	errorRate := fs.Float64("error-rate", 0, "fraction of /v1 and /ach/v2 requests (all but /_sandbox controls) answered 500 or 503 with no effect")
	dropRate := fs.Float64("drop-rate", 0, "fraction of calls that take effect and then close the connection with no answer: check create, edit and void, "+
		"payment-link create and status change, tokenization, ACH customer and funding-source creates (and bank info, left unanswered)")
	seed := fs.Int64("seed", 1, "seed of the fault generator and of ACH micro-deposit amounts, to replay a run")
	quirks := fs.Bool("quirks", false, "answer like a less tidy service: numbers without leading zeros, label filter by substring in any case, "+
		"float amounts (0.5700000000000001), paging numbers as numbers or strings, accounts masked 1......016, an edit without phone keeps it, "+
		"the payment-link list refuses search")
	date := fs.String("date", "", "start every key's sandbox clock on this `YYYY-MM-DD` day, or that many days from today (+3, -1) (micro-deposit initiation is 410 from 2026-06-08)")
	tz := fs.String("tz", "UTC", "the service's time zone, an IANA `ZONE` such as America/New_York: check dates and the list's from_date/to_date are its days")
	legacy := fs.String("legacy-processor", "", "processor `NAME` the ACH API accepts at processor-token exchange besides svcach (default: none)")
	maxSources := fs.Int("max-funding-sources", sandbox.DefaultMaxFundingSources, "funding sources an ACH customer may hold, deleted ones not counted")
	hookForm := fs.Bool("webhook-form", false, "send eCheck webhook events (check.*) form-encoded, event=…&data=<check JSON>&timestamp=…, instead of JSON")
	hookFailures := fs.Int("webhook-max-failures", sandbox.DefaultWebhookMaxFailures,
		"failed webhook deliveries in a row after which a key's endpoint is disabled until its URL is registered again")
	hookDrop := fs.Float64("webhook-drop-rate", 0, "fraction of webhook events never sent")
	hookDup := fs.Float64("webhook-dup-rate", 0, "fraction of webhook events sent twice")
	var hookReorder rateFlag
	fs.Var(&hookReorder, "webhook-reorder", "`RATE` of webhook events held back and sent after the key's next event: "+
		"a fraction, true (1: every pair swapped) or false (0)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	loc, err := time.LoadLocation(*tz)
	if err != nil || *tz == "" || strings.EqualFold(*tz, "Local") {
		fmt.Fprintf(env.stderr, "batchd sandbox: --tz %q is not a time zone name; use an IANA name such as UTC or America/New_York\n", *tz)
		return errUsage
	}
	// The sandbox serves on the real clock: its days count from today.
	start, days, err := parseStartDate(*date, serviceToday(time.Now(), loc))
	if err != nil {
		fmt.Fprintf(env.stderr, "batchd sandbox: --date %v\n", err)
		return errUsage
	}
	if *maxSources < 1 {
		fmt.Fprintln(env.stderr, "batchd sandbox: --max-funding-sources must be at least 1")
		return errUsage
	}
	if *hookFailures < 1 {
		fmt.Fprintln(env.stderr, "batchd sandbox: --webhook-max-failures must be at least 1")
		return errUsage
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"error-rate", *errorRate}, {"drop-rate", *dropRate}, {"webhook-drop-rate", *hookDrop}, {"webhook-dup-rate", *hookDup}} {
		if !(f.v >= 0 && f.v <= 1) {
			fmt.Fprintf(env.stderr, "batchd sandbox: --%s must be between 0 and 1\n", f.name)
			return errUsage
		}
	}
	log := newLogger(env.stderr, "info", "auto")
	srv := sandbox.New(sandbox.Options{
		Keys: keys, RateLimit: *rateLimit, Latency: *latency,
		ErrorRate: *errorRate, DropRate: *dropRate, Seed: *seed, Quirks: *quirks, Logger: log,
		Date: start, StartDays: days, Location: loc, LegacyProcessor: *legacy, MaxFundingSources: *maxSources,
		WebhookForm: *hookForm, WebhookMaxFailures: *hookFailures,
		WebhookDropRate: *hookDrop, WebhookDupRate: *hookDup, WebhookReorder: float64(hookReorder),
	})
	// Webhook deliveries stop (and are waited for) however serving ends.
	defer srv.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *listen, err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	// The first line on stdout is the URL, so scripts and tests can read
	// the port when --listen asked for port 0.
	fmt.Fprintf(env.stdout, "http://%s\n", ln.Addr())
	log.Info("sandbox serving the eCheck API (/v1) and ACH API (/ach/v2) test mode", "url", "http://"+ln.Addr().String(),
		"keys", len(keys), "rate_limit", *rateLimit, logattr.Duration("latency", *latency), "error_rate", *errorRate,
		"drop_rate", *dropRate, "seed", *seed, "quirks", *quirks, "date", *date, "tz", loc.String(),
		"legacy_processor", *legacy, "max_funding_sources", *maxSources,
		"webhook_form", *hookForm, "webhook_max_failures", *hookFailures,
		"webhook_drop_rate", *hookDrop, "webhook_dup_rate", *hookDup, "webhook_reorder", float64(hookReorder))

	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	case sig := <-env.signals:
		log.Info("stopping sandbox", "signal", strings.ToUpper(sig.String()))
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// maxStartDays bounds --date to a century either side of today, as the
// sandbox bounds a key's clock.
const maxStartDays = 36500

// parseStartDate reads --date: "" for none; a YYYY-MM-DD day (start);
// or a signed count of days from today ("+3", "-1": days), so that a
// rehearsal or a test runs the service's clock ahead of or behind
// batchd's by a fixed distance, whatever the day. today is the service's
// day (a UTC midnight); either form must lie within maxStartDays of it.
// The error words the rule for the usage message.
func parseStartDate(s string, today time.Time) (start time.Time, days int, err error) {
	if s == "" {
		return time.Time{}, 0, nil
	}
	if s[0] == '+' || s[0] == '-' {
		n, err := strconv.Atoi(s)
		if err != nil || n > maxStartDays || n < -maxStartDays {
			return time.Time{}, 0, fmt.Errorf("%q must be a date YYYY-MM-DD or a count of days from today within %d, such as +3 or -1", s, maxStartDays)
		}
		return time.Time{}, n, nil
	}
	d, err := time.Parse("2006-01-02", s)
	if err != nil || len(s) != len("2006-01-02") {
		return time.Time{}, 0, errors.New("must be a date YYYY-MM-DD or a count of days from today such as +3 or -1")
	}
	if n := d.Sub(today) / (24 * time.Hour); n > maxStartDays || n < -maxStartDays {
		return time.Time{}, 0, fmt.Errorf("must be within %d days of today", maxStartDays)
	}
	return d, 0, nil
}

// serviceToday is the real clock's day in loc, as a UTC midnight: the day
// a --date is bounded around.
func serviceToday(now time.Time, loc *time.Location) time.Time {
	y, m, d := now.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
