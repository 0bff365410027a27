package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/testsshd"
)

// Issue 17, item 7, as processes: secret files others may read are
// refused, refused webhook requests do not flood the log, and the admin
// server answers only its own Host, limits triggers and can require a
// token. Item 6: a webhook.url that misses webhook.path is warned about at
// start, and the deliveries it misroutes show in the metrics.

// TestSecretFileModeProcess: `batchd check` and `batchd run` with an API
// key file of mode 0644 exit non-zero, naming the key, the file, the mode
// and the chmod fix, without the key; at 0600 the key is accepted.
func TestSecretFileModeProcess(t *testing.T) {
	const key = "sk_test_modecheck_0123456789abcdef"
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "api_key")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(keyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, fmt.Sprintf("state_dir: %s\napi: {base_url: http://127.0.0.1:1, key_file: %s}\nadmin: {listen: %s}\n",
		filepath.Join(dir, "state"), keyFile, freePort(t)))
	for _, cmd := range []string{"check", "run"} {
		code, out, errOut := batchdRun(t, "", cmd, "--config", cfg)
		if code == 0 {
			t.Fatalf("batchd %s with a 0644 key file exited 0:\n%s%s", cmd, out, errOut)
		}
		for _, want := range []string{"api.key_file", keyFile, "mode 0644", "chmod 600 " + keyFile} {
			if !strings.Contains(errOut, want) {
				t.Errorf("batchd %s: stderr does not say %q:\n%s", cmd, want, errOut)
			}
		}
		if strings.Contains(out+errOut, key) {
			t.Errorf("batchd %s quoted the key", cmd)
		}
	}
	if err := os.Chmod(keyFile, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, out, errOut := batchdRun(t, "", "check", "--config", cfg); strings.Contains(out+errOut, "chmod 600") {
		t.Errorf("a 0600 key file is refused:\n%s%s", out, errOut)
	}
}

// TestSecretIdentityModeProcess: `batchd ingest` with an SSH identity
// file of mode 0640 exits non-zero naming sftp.identity_file, the file,
// the mode and the fix, and logs in to nothing.
func TestSecretIdentityModeProcess(t *testing.T) {
	const key = "sk_test_identity_0123456789abcdef"
	sshd := testsshd.Start(t)
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		os.MkdirAll(filepath.Join(sshd.Root, d), 0o755)
	}
	dir := t.TempDir()
	b, err := os.ReadFile(sshd.IdentityFile)
	if err != nil {
		t.Fatal(err)
	}
	ident := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(ident, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ident, 0o640); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
api: {base_url: http://127.0.0.1:1, mode: test}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s,
       inbox: %s/inbox, archive: %s/archive, failed: %s/failed, outbox: %s/outbox}
`, filepath.Join(dir, "state"), sshd.Addr, sshd.User, ident, sshd.KnownHosts, sshd.Root, sshd.Root, sshd.Root, sshd.Root))
	code, out, errOut := batchdRun(t, key, "ingest", "--config", cfg)
	if code == 0 {
		t.Fatalf("batchd ingest with a 0640 identity file exited 0:\n%s%s", out, errOut)
	}
	for _, want := range []string{"sftp.identity_file", ident, "mode 0640", "chmod 600 " + ident} {
		if !strings.Contains(out+errOut, want) {
			t.Errorf("stderr does not say %q:\n%s%s", want, out, errOut)
		}
	}
	if strings.Contains(out+errOut, "PRIVATE KEY") {
		t.Error("the output quotes the private key")
	}
}

// TestWebhookAndAdminHardeningProcess runs `batchd run` with a webhook.url
// whose path misses webhook.path, an admin token and an admin.hosts name:
// the start warns naming both values; the sandbox's deliveries, misrouted,
// are counted wrong_path; 2,000 wrong-secret requests give a few log lines
// and a counter of 2,000; a foreign Host gets 421 with nothing of the
// state; a trigger needs the token and is rate-limited.
func TestWebhookAndAdminHardeningProcess(t *testing.T) {
	const key, rows = "sk_test_hardening_0123456789abcdef", 3
	const secret, token = "hook-secret_0123456789abcdef", "admin-token_0123456789abcdef"
	sshd := testsshd.Start(t)
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		os.MkdirAll(filepath.Join(sshd.Root, d), 0o755)
	}
	sbx, _ := startSandboxLogged(t, "--key", key, "--seed", "17")
	dir := t.TempDir()
	secretFile, tokenFile := filepath.Join(dir, "hook-secret"), filepath.Join(dir, "admin-token")
	for f, v := range map[string]string{secretFile: secret, tokenFile: token} {
		if err := os.WriteFile(f, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	admin, hook := freePort(t), freePort(t)
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
shutdown_timeout: 10s
log: {format: json}
api: {base_url: %s, mode: test, rate: 100, burst: 10}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s,
       inbox: %s/inbox, archive: %s/archive, failed: %s/failed, outbox: %s/outbox}
ingest: {stable_for: 200ms}
submit: {resolve_after: 1s}
schedule: {timezone: UTC, ingest: "@every 1s", submit: "@every 1s", reconcile: "@every 1h"}
admin: {listen: %s, hosts: [batchd-admin.internal], token_file: %s}
webhook: {listen: %s, url: "http://%s/hooks", secret_file: %s}
`, filepath.Join(dir, "state"), sbx, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
		sshd.Root, sshd.Root, sshd.Root, sshd.Root, admin, tokenFile, hook, hook, secretFile))
	if err := os.WriteFile(filepath.Join(sshd.Root, "inbox", "payroll.csv"), []byte(paymentFile(rows)), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, cfg, key)
	base := "http://" + admin

	// Item 6: the warning at start names both values.
	eventually(t, "the webhook.url warning", 20*time.Second, func() bool {
		l := d.logs.String()
		return strings.Contains(l, "webhook.url cannot reach the receiver") && strings.Contains(l, `/hooks\"`) && strings.Contains(l, `webhook.path \"/webhook\"`)
	})
	// The sandbox delivers check.created for each check to
	// http://hook/hooks/<secret>: each is a 404 counted wrong_path.
	eventually(t, "misrouted deliveries counted wrong_path", 60*time.Second, func() bool {
		return metricValue(getText(base+"/metrics"), `batchd_webhook_deliveries_total{outcome="wrong_path"}`) >= rows
	})

	// Refused webhook requests: 2,000 wrong secrets, a few lines.
	began := time.Now()
	for i := range 2000 {
		resp, err := http.Post("http://"+hook+"/webhook/not-the-secret-0123456789", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong secret %d: %d, want 401", i, resp.StatusCode)
		}
	}
	if n := metricValue(getText(base+"/metrics"), `batchd_webhook_deliveries_total{outcome="unauthorized"}`); n != 2000 {
		t.Errorf("unauthorized counted %v, want 2000", n)
	}
	n := strings.Count(d.logs.String(), `"outcome":"unauthorized"`)
	if n > 3 {
		t.Errorf("%d log lines for 2,000 wrong-secret requests, want a few", n)
	}
	t.Logf("2,000 wrong-secret requests in %s: %d log line(s)", time.Since(began).Round(time.Millisecond), n)

	// A foreign Host: 421, nothing of the state.
	for _, p := range []string{"/v1/status", "/healthz", "/metrics"} {
		code, body := request(t, "GET", base+p, "attacker.example:"+strings.Split(admin, ":")[1], "")
		if code != http.StatusMisdirectedRequest || strings.Contains(body, "payroll") || strings.Contains(body, "ingest") {
			t.Errorf("GET %s with a foreign Host = %d %s, want 421 and nothing of the state", p, code, body)
		}
	}
	if code, _ := request(t, "GET", base+"/healthz", "batchd-admin.internal", ""); code == http.StatusMisdirectedRequest {
		t.Error("an admin.hosts name is refused")
	}

	// Triggers need the token, and are rate-limited per job.
	if code, _ := request(t, "POST", base+"/v1/jobs/reconcile", "", ""); code != http.StatusUnauthorized {
		t.Errorf("POST without the token = %d, want 401", code)
	}
	var codes []int
	for range 5 {
		code, _ := request(t, "POST", base+"/v1/jobs/reconcile", "", token)
		codes = append(codes, code)
	}
	if codes[0] != http.StatusAccepted && codes[0] != http.StatusConflict || codes[4] != http.StatusTooManyRequests {
		t.Errorf("5 triggers with the token: %v, want 202 (or 409) first and 429 past the burst", codes)
	}
	if !strings.Contains(d.logs.String(), `"msg":"admin: refused requests"`) {
		t.Error("no log line about the refused admin requests")
	}
	if strings.Contains(d.logs.String(), token) || strings.Contains(d.logs.String(), secret) {
		t.Error("the log holds the admin token or the webhook secret")
	}
}

// request sends one request with an optional Host and bearer token.
func request(t *testing.T, method, url, host, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
