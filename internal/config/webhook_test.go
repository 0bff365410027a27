package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWebhookSettings: the receiver is off by default; when on, its URL
// and secret file are required, the secret is read like the API key and
// never quoted, and the registered URL carries it as the last segment.
func TestWebhookSettings(t *testing.T) {
	cfg, err := Parse([]byte(minimal), "t.yaml", keyEnv())
	if err != nil || cfg.Webhook.Enabled() || cfg.WebhookURL() != "" {
		t.Fatalf("default: %v %+v", err, cfg.Webhook)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "secret")
	os.WriteFile(good, []byte("  s3cr3t-path_segment-0123\n"), 0o600)
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("abc"), 0o600)
	slash := filepath.Join(dir, "slash")
	os.WriteFile(slash, []byte("abcdefgh/ijklmnopqrstu"), 0o600)

	on := func(extra string) string {
		return minimal + "webhook:\n  listen: 127.0.0.1:9465\n" + extra
	}
	cfg, err = Parse([]byte(on("  url: https://hooks.example.com/batchd/\n  secret_file: "+good+"\n")), "t.yaml", keyEnv())
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.WebhookURL(); got != "https://hooks.example.com/batchd/s3cr3t-path_segment-0123" {
		t.Fatalf("WebhookURL %q", got)
	}
	for name, c := range map[string]struct{ yaml, key, want string }{
		"no url":          {on("  secret_file: " + good + "\n"), "webhook.url", "required"},
		"no secret file":  {on("  url: https://h.example/x\n"), "webhook.secret_file", "required"},
		"http url":        {on("  url: http://h.example/x\n  secret_file: " + good + "\n"), "webhook.url", "https"},
		"short secret":    {on("  url: https://h.example/x\n  secret_file: " + short + "\n"), "webhook.secret_file", "16 to 128"},
		"slash in secret": {on("  url: https://h.example/x\n  secret_file: " + slash + "\n"), "webhook.secret_file", "letters, digits"},
		"admin listener":  {minimal + "admin:\n  listen: 127.0.0.1:9465\nwebhook:\n  listen: 127.0.0.1:9465\n  url: https://h.example/x\n  secret_file: " + good + "\n", "webhook.listen", "differ"},
		"bad path":        {minimal + "webhook:\n  path: hook\n", "webhook.path", "absolute path"},
	} {
		_, err := Parse([]byte(c.yaml), "t.yaml", keyEnv())
		found := false
		for _, fe := range fieldErrors(t, err) {
			if fe.Key == c.key && strings.Contains(fe.Error(), c.want) {
				found = true
			}
			if strings.Contains(fe.Error(), "abcdefgh") {
				t.Errorf("%s: the secret is quoted: %v", name, fe)
			}
		}
		if !found {
			t.Errorf("%s: want a finding on %s with %q, got %v", name, c.key, c.want, err)
		}
	}
}
