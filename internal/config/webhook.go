package config

import (
	"fmt"
	"net/url"
	"strings"
)

// WebhookConfig is the webhook section: the receiver of the service's
// event deliveries (issue: the service tells batchd what changed). An
// empty Listen disables it; reconcile then pages as it always did.
type WebhookConfig struct {
	// Listen is the receiver's host:port, its own listener (never the
	// admin one). It speaks plain HTTP: put a TLS reverse proxy before it.
	Listen string `yaml:"listen"`
	// Path is the receiver's base path: it serves POST <path>/<secret>.
	Path string `yaml:"path"`
	// URL is the public https address that reaches Path through the
	// proxy, without the secret; batchd registers URL + "/" + secret with
	// the service (one URL per API key).
	URL string `yaml:"url"`
	// SecretFile holds the path secret (16 to 128 characters of letters,
	// digits, "-" and "_"), like api.key_file: never in the YAML.
	SecretFile string `yaml:"secret_file"`
	// Rate is the deliveries per second the receiver accepts (burst twice
	// that); more are answered 429, which the service retries.
	Rate float64 `yaml:"rate"`
}

// Enabled reports whether the receiver is configured.
func (w WebhookConfig) Enabled() bool { return w.Listen != "" }

// WebhookSecret returns the path secret; "" when webhooks are disabled.
// Never log it.
func (c *Config) WebhookSecret() string { return c.webhookSecret.Reveal() }

// SetWebhookSecret sets the secret of a Config built in code (tests).
func (c *Config) SetWebhookSecret(s string) { c.webhookSecret = NewSecret(s) }

// WebhookURL is the address batchd registers: webhook.url, the secret
// appended as the last path segment.
func (c *Config) WebhookURL() string {
	if c.Webhook.URL == "" {
		return ""
	}
	return strings.TrimRight(c.Webhook.URL, "/") + "/" + c.WebhookSecret()
}

func (c *Config) validateWebhook(f *findings) {
	w := c.Webhook
	if w.Rate <= 0 {
		f.add(0, "webhook.rate", "webhook.rate: must be above 0 deliveries per second, got %v", w.Rate)
	}
	if !strings.HasPrefix(w.Path, "/") || strings.ContainsAny(w.Path, "?#% ") || strings.HasSuffix(w.Path, "/") && w.Path != "/" {
		f.add(0, "webhook.path", "webhook.path: must be an absolute path such as /webhook, got %s", showValue(w.Path))
	}
	if !w.Enabled() {
		return
	}
	checkHostPort(f, "webhook.listen", w.Listen, true)
	if w.Listen == c.Admin.Listen {
		f.add(0, "webhook.listen", "webhook.listen: must differ from admin.listen: the receiver has its own listener")
	}
	checkAbsPath(f, "webhook.secret_file", w.SecretFile, true)
	if w.URL == "" {
		f.add(0, "webhook.url", "webhook.url: required when webhook.listen is set: the public https address the service posts to")
		return
	}
	u, err := url.Parse(w.URL)
	switch {
	case err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		f.add(0, "webhook.url", "webhook.url: want an https URL without user, query or fragment, got %s", showValue(w.URL))
	case u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname())):
		f.add(0, "webhook.url", "webhook.url: must be https (http only to a loopback host, for the sandbox), got %s", showValue(w.URL))
	}
}

// loadWebhookSecret reads webhook.secret_file when webhooks are enabled.
// No finding quotes the secret.
func (c *Config) loadWebhookSecret(env Env) *FieldError {
	if !c.Webhook.Enabled() || c.Webhook.SecretFile == "" {
		return nil
	}
	return tokenFile("webhook.secret_file").load(&c.webhookSecret, c.Webhook.SecretFile, env)
}

// tokenFile is a file holding a random token (the webhook path secret,
// the admin bearer token), named by key.
func tokenFile(key string) secretText {
	return secretText{key: key, limit: maxKeyFileBytes, problem: tokenProblem}
}

// tokenProblem refuses a token too short to guess at, too long, or
// holding what a URL or a header cannot carry as it is; an empty one is
// too short. The words never quote it.
func tokenProblem(s string) string {
	if len(s) < 16 || len(s) > 128 {
		return fmt.Sprintf("the secret must be 16 to 128 characters, it has %d; make one with: head -c 24 /dev/urandom | base64 | tr '+/' '-_'", len(s))
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return "the secret may hold only letters, digits, - and _ (it goes into a URL or a header as it is)"
		}
	}
	return ""
}

// WebhookURLWarning explains why deliveries to publicURL (webhook.url)
// would miss the receiver: the receiver serves only
// webhook.path/<secret>, so a URL whose path does not end in webhook.path
// is answered 404 unless a proxy rewrites the path. It is a warning, not
// an error, because such a proxy is legitimate. "" when the path fits or
// webhooks are off. A URL segment equal to the secret is masked.
func (c *Config) WebhookURLWarning(publicURL string) string {
	if !c.Webhook.Enabled() || publicURL == "" {
		return ""
	}
	u, err := url.Parse(publicURL)
	if err != nil {
		return ""
	}
	have, want := strings.TrimRight(u.Path, "/"), strings.TrimRight(c.Webhook.Path, "/")
	if want == "" || have == want || strings.HasSuffix(have, want) {
		return ""
	}
	shown := publicURL
	if s := c.WebhookSecret(); s != "" {
		shown = strings.ReplaceAll(shown, s, "…")
		have = strings.ReplaceAll(have, s, "…")
	}
	return fmt.Sprintf("webhook.url %s has the path %s, which does not end in webhook.path %s: the receiver serves only "+
		"webhook.path/<secret>, so unless a proxy rewrites the path every delivery is answered 404 "+
		"(batchd_webhook_deliveries_total{outcome=\"wrong_path\"}); end webhook.url's path in %s, or set webhook.path to %s",
		showValue(shown), showValue(orSlash(have)), showValue(c.Webhook.Path), c.Webhook.Path, showValue(orSlash(have)))
}

func orSlash(p string) string {
	if p == "" {
		return "/"
	}
	return p
}
