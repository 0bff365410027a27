package ach

import (
	"context"
	"errors"
	"net/url"

	"github.com/batchd/batchd/internal/apiwire"
)

// RegisterWebhook sets the key's one webhook URL (spec 2.6), replacing any
// earlier one, and returns the URL the service registered. Registering
// the same URL twice leaves the same state, so a lost answer is
// Retryable.
func (c *Client) RegisterWebhook(ctx context.Context, hookURL string) (string, error) {
	k := apiwire.Call{Op: OpWebhookRegister, Method: "POST", Path: "/webhooks", Body: map[string]string{"url": hookURL}}
	if u, err := url.Parse(hookURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		// The URL is not quoted: its last segment is usually a secret.
		return "", c.core.Refuse(k, "not sent", errors.New("the webhook URL is not an absolute http(s) URL"))
	}
	a, err := c.core.Do(ctx, k)
	if err != nil {
		return "", err
	}
	f := fields{m: a.Object}
	got := f.strictStr("webhook_url", "url")
	if f.err != nil {
		return "", c.core.BadAnswer(k, a.Status, f.err)
	}
	return got, nil
}

// WebhookRegistration is the key's webhook registration as the service
// shows it.
type WebhookRegistration struct {
	URL string // "" when none is registered
	// Disabled is true when the service stopped delivering after too many
	// failed deliveries (public clients describe it); registering the URL
	// again enables it.
	Disabled bool
}

// Webhook returns the key's registered webhook URL, "" when none, so that
// batchd can tell whether its URL is registered before it registers.
func (c *Client) Webhook(ctx context.Context) (string, error) {
	r, err := c.WebhookStatus(ctx)
	return r.URL, err
}

// WebhookStatus reads the key's registration, with whether the service
// disabled deliveries.
func (c *Client) WebhookStatus(ctx context.Context) (WebhookRegistration, error) {
	k := apiwire.Call{Op: OpWebhookGet, Method: "GET", Path: "/webhooks"}
	a, err := c.core.Do(ctx, k)
	if err != nil {
		return WebhookRegistration{}, err
	}
	f := fields{m: a.Object}
	got := WebhookRegistration{URL: f.strictStr("webhook_url", "url"), Disabled: f.boolean("disabled")}
	if f.err != nil {
		return WebhookRegistration{}, c.core.BadAnswer(k, a.Status, f.err)
	}
	return got, nil
}
