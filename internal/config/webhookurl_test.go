package config

import (
	"strings"
	"testing"
)

// TestWebhookURLWarning: a webhook.url whose path does not end in
// webhook.path (deliveries would be answered 404) gets a warning naming
// both values and the fix; one that fits, or a receiver that is off, gets
// none; a secret pasted into the URL is masked.
func TestWebhookURLWarning(t *testing.T) {
	const secret = "s3cr3t-path_segment-0123"
	cfg := Default()
	cfg.Webhook.Listen = "127.0.0.1:9465"
	cfg.SetWebhookSecret(secret)
	for _, ok := range []string{
		"https://h.example/webhook", "https://h.example/webhook/", "https://h.example/batchd/webhook",
	} {
		if w := cfg.WebhookURLWarning(ok); w != "" {
			t.Errorf("%s: unexpected warning %q", ok, w)
		}
	}
	for _, bad := range []string{"https://h.example/hooks", "https://h.example", "https://h.example/mywebhook", "https://h.example/webhook/" + secret + "/x"} {
		w := cfg.WebhookURLWarning(bad)
		for _, want := range []string{"webhook.url", "webhook.path", `"/webhook"`, "404", "wrong_path"} {
			if !strings.Contains(w, want) {
				t.Errorf("%s: warning %q does not say %q", bad, w, want)
			}
		}
		if strings.Contains(w, secret) {
			t.Errorf("%s: the warning quotes the secret: %q", bad, w)
		}
	}
	if w := cfg.WebhookURLWarning("https://h.example/hooks"); !strings.Contains(w, `"https://h.example/hooks"`) || !strings.Contains(w, `"/hooks"`) {
		t.Errorf("warning does not name the URL and its path: %q", w)
	}
	cfg.Webhook.Path = "/"
	if w := cfg.WebhookURLWarning("https://h.example/anything"); w != "" {
		t.Errorf("webhook.path / fits every URL, got %q", w)
	}
	off := Default()
	if w := off.WebhookURLWarning("https://h.example/hooks"); w != "" {
		t.Errorf("webhooks off: %q", w)
	}
}

// TestAdminSettings: admin.hosts entries must be what a Host header
// carries; admin.token_file must be absolute and is read like a secret.
func TestAdminSettings(t *testing.T) {
	dir := t.TempDir()
	tok := writeFile(t, dir, "token", testToken+"\n")
	cfg, err := Parse([]byte(minimal+"admin:\n  hosts: [batchd.internal, \"proxy.example:8443\", 10.0.0.5, \"[::1]:9464\"]\n  token_file: "+tok+"\n"), "f.yaml", keyEnv())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AdminToken() != testToken || len(cfg.Admin.Hosts) != 4 {
		t.Errorf("token read %v, hosts %v", cfg.AdminToken() == testToken, cfg.Admin.Hosts)
	}
	for _, bad := range []string{"https://proxy.example", "proxy.example/admin", "proxy.example:99999", "", "a b"} {
		_, err := Parse([]byte(minimal+"admin:\n  hosts: [\""+bad+"\"]\n"), "f.yaml", keyEnv())
		if fe := findKey(t, err, "admin.hosts[0]"); !strings.Contains(fe.Msg, "host") {
			t.Errorf("%q: %v", bad, fe)
		}
	}
	_, err = Parse([]byte(minimal+"admin:\n  token_file: token\n"), "f.yaml", keyEnv())
	findKey(t, err, "admin.token_file")
	short := writeFile(t, dir, "short", "abc")
	_, err = Parse([]byte(minimal+"admin:\n  token_file: "+short+"\n"), "f.yaml", keyEnv())
	if fe := findKey(t, err, "admin.token_file"); !strings.Contains(fe.Msg, "16 to 128") {
		t.Errorf("short token: %v", fe)
	}
}
