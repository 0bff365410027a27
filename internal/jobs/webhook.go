package jobs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"golang.org/x/time/rate"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/webhook"
)

// WebhookHandler is the receiver of the service's deliveries, recording
// each event in the ledger before it answers. observe (may be nil) gets
// each request's outcome, and onFinal (may be nil) each check an event
// moved to a final status, for the metrics.
func (e *Env) WebhookHandler(observe func(outcome string), onFinal func(map[payment.Status]int)) (http.Handler, error) {
	c := e.Cfg
	var store webhook.Store = e.DB
	if onFinal != nil {
		store = finalCounter{db: e.DB, onFinal: onFinal}
	}
	return webhook.New(webhook.Options{
		Secret: c.WebhookSecret(), Key: c.APIKey(), Path: c.Webhook.Path,
		Rate: rate.Limit(c.Webhook.Rate), Burst: max(1, int(math.Ceil(2*c.Webhook.Rate))),
		Store: store, Logger: e.Log, Observe: observe, Now: e.now,
	})
}

// finalCounter is the ledger as the receiver's store, telling onFinal of
// each check an event moved to a final status: with webhooks on, most
// checks end through an event, and reconcile, which counts the ends it
// records, then never sees them change.
type finalCounter struct {
	db      state.EventLedger
	onFinal func(map[payment.Status]int)
}

func (f finalCounter) Record(ctx context.Context, e webhook.Event) (bool, error) {
	dup, final, err := f.db.RecordEvent(ctx, e)
	if err == nil && final != "" {
		f.onFinal(map[payment.Status]int{final: 1})
	}
	return dup, err
}

// RegisterWebhook makes the service deliver to publicURL (webhook.url,
// as loaded at start or reloaded by SIGHUP) followed by the running
// receiver's secret: it reads the URL registered for the API key and
// registers batchd's own when it differs (or when the service disabled
// deliveries after failures). The service keeps one URL per key, so
// registering replaces any other, which the log says. It returns a line
// for the job's log.
func (e *Env) RegisterWebhook(ctx context.Context, publicURL string) (string, error) {
	c := e.Cfg
	if !c.Webhook.Enabled() {
		return "webhooks disabled (webhook.listen is empty)", nil
	}
	want := strings.TrimRight(publicURL, "/") + "/" + c.WebhookSecret()
	reg, err := e.ACH.WebhookStatus(ctx)
	if err != nil {
		return "", fmt.Errorf("read the registered webhook URL: %w", err)
	}
	current, shown := reg.URL, maskedHookURL(want)
	if current == want && !reg.Disabled {
		return "webhook URL registered: " + shown, nil
	}
	if reg.Disabled {
		e.Log.Warn("the service had disabled webhook deliveries after failed deliveries; registering again; reconcile reads what was missed",
			"url", maskedHookURL(current))
	}
	if current != "" && current != want {
		e.Log.Warn("replacing the webhook URL registered for this API key: the service keeps one URL per key, so the other receiver gets no more events",
			"previous", maskedHookURL(current), "new", shown)
	}
	if _, err := e.ACH.RegisterWebhook(ctx, want); err != nil {
		return "", fmt.Errorf("register the webhook URL %s: %w", shown, err)
	}
	e.Log.Info("webhook URL registered", "url", shown)
	return "webhook URL registered now: " + shown, nil
}

// maskedHookURL shows a webhook URL without its last path segment, which
// for batchd's own URL is the secret.
func maskedHookURL(u string) string {
	u = strings.TrimRight(u, "/")
	if i := strings.LastIndexByte(u, '/'); i > len("https://") {
		return u[:i] + "/…"
	}
	return u
}

// Webhook returns the scheduled check of the webhook registration for
// publicURL (webhook.url of the configuration the job was built from): at
// start, on SIGHUP and every hour, so that a changed webhook.url, a URL
// another installation registered, or deliveries the service disabled are
// noticed and fixed.
//
// It warns when publicURL's path does not end in webhook.path (see
// config.WebhookURLWarning): the job is built at start and on each
// SIGHUP, so the warning comes with every configuration that has it.
func (s Scheduled) Webhook(publicURL string) func(context.Context) (string, error) {
	if w := s.Env.Cfg.WebhookURLWarning(publicURL); w != "" {
		s.Env.Log.Warn("webhook.url cannot reach the receiver: " + w)
	}
	return func(ctx context.Context) (string, error) { return s.webhook(ctx, publicURL) }
}

func (s Scheduled) webhook(ctx context.Context, publicURL string) (string, error) {
	line, err := s.Env.RegisterWebhook(ctx, publicURL)
	if err != nil { // a success clears nothing: it proves less than a submit does
		s.note(err)
	}
	n, perr := s.Env.PruneEvents()
	if n > 0 {
		line += fmt.Sprintf("; %d events older than %d days forgotten", n, EventKeepDays)
	}
	return line, errors.Join(err, perr)
}

// EventKeepDays is how long the ledger remembers a webhook event, to
// recognise it when the service delivers it again: far longer than any
// retry schedule. An event forgotten and delivered again changes nothing,
// since a status only moves forward.
const EventKeepDays = 30

// PruneEvents forgets webhook events received more than EventKeepDays ago.
func (e *Env) PruneEvents() (int, error) {
	return e.DB.PruneEvents(e.now().AddDate(0, 0, -EventKeepDays))
}
