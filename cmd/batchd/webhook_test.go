package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/testsshd"
)

// Issue 13's acceptance test, as processes: `batchd run` with its webhook
// receiver and the sandbox delivering to it. A file is submitted; the
// sandbox deposits some checks and voids one, and /v1/status shows those
// statuses within seconds with no reconcile run. Then the sandbox drops,
// duplicates and reorders deliveries while more checks move, and batchd is
// SIGKILLed once in the middle of it; after the next reconcile the ledger
// holds exactly the sandbox's statuses. It runs against the exact and the
// quirky sandbox.
//
// It runs on PostgreSQL too (the exact sandbox: the quirks are the API's,
// not the ledger's): there the daemon leads through the ledger's lease,
// and the process started after the SIGKILL is a standby, its receiver
// recording events, until the killed one's lease runs out.
func TestWebhooksProcess(t *testing.T) {
	for _, quirks := range []bool{false, true} {
		t.Run(map[bool]string{false: "exact", true: "quirks"}[quirks], func(t *testing.T) { webhooksProcess(t, ledgertest.Bbolt, quirks) })
	}
	t.Run("postgres", func(t *testing.T) { webhooksProcess(t, ledgertest.Postgres, false) })
}

func webhooksProcess(t *testing.T, backend string, quirks bool) {
	const key, rows = "sk_test_webhooks_0123456789abcdef", 40
	const secret = "hook-secret_0123456789abcdef"
	sshd := testsshd.Start(t)
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		os.MkdirAll(filepath.Join(sshd.Root, d), 0o755)
	}
	args := []string{"--key", key, "--seed", "11"}
	if quirks {
		args = append(args, "--quirks")
	}
	sbx, sbxLog := startSandboxLogged(t, args...)
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "hook-secret")
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
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
admin: {listen: %s}
webhook: {listen: %s, url: "http://%s/webhook", secret_file: %s}
%s`, filepath.Join(dir, "state"), sbx, sshd.Addr, sshd.User, sshd.IdentityFile, sshd.KnownHosts,
		sshd.Root, sshd.Root, sshd.Root, sshd.Root, admin, hook, hook, secretFile, ledgerYAML(t, backend, dir)))
	if err := os.WriteFile(filepath.Join(sshd.Root, "inbox", "payroll.csv"), []byte(paymentFile(rows)), 0o644); err != nil {
		t.Fatal(err)
	}

	d := startDaemon(t, cfg, key)
	base := "http://" + admin
	eventually(t, "batchd's URL registered at the sandbox", 20*time.Second, func() bool {
		return sandboxHook(t, sbx, key) == "http://"+hook+"/webhook/"+secret
	})
	var st struct {
		Rows   map[string]int `json:"rows"`
		Checks map[string]int `json:"checks"`
	}
	eventually(t, "every row submitted", 60*time.Second, func() bool {
		code, err := getJSON(base+"/v1/status", &st)
		return err == nil && code == 200 && st.Rows["submitted"] == rows
	})
	api := client(t, sbx, key)
	checks := allChecks(t, api)
	ids := make([]string, len(checks))
	for i, c := range checks {
		ids[i] = c.CheckID
	}

	// Clean deliveries: ten deposits and a void show without a reconcile.
	sandboxPost(t, sbx, key, "/_sandbox/deposit", map[string]any{"check_ids": ids[:10]})
	if err := api.DeleteCheck(context.Background(), ids[10]); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deposits and the void in /v1/status", 15*time.Second, func() bool {
		code, err := getJSON(base+"/v1/status", &st)
		return err == nil && code == 200 && st.Checks["deposited"] == 10 && st.Checks["void"] == 1
	})
	// The final outcomes are counted as the events recorded them.
	eventually(t, "the deposits and the void counted", 15*time.Second, func() bool {
		m := getText(base + "/metrics")
		return metricValue(m, `batchd_checks_final_total{status="deposited"}`) == 10 && metricValue(m, `batchd_checks_final_total{status="void"}`) == 1
	})
	if strings.Contains(d.logs.String(), `"msg":"job finished","job":"reconcile"`) {
		t.Fatal("a reconcile ran: the statuses must come from the webhooks alone")
	}

	// A delivery with a wrong secret is refused and changes nothing.
	forged := `{"event":"check.changed","data":{"check_id":"` + ids[35] + `","status":"deposited"}}`
	resp, err := http.Post("http://"+hook+"/webhook/not-the-secret-0123456789", "application/json", strings.NewReader(forged))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong secret: %d, want 401", resp.StatusCode)
	}

	// A first reconcile walks the whole window once; the one at the end
	// then reads only the checks not final.
	if err := d.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := <-d.done; err != nil {
		t.Fatalf("batchd run stop: %v", err)
	}
	if code, out, errOut := runBatchd(t, key, "reconcile", "--config", cfg); code != 0 || !strings.Contains(out, "full walk") {
		t.Fatalf("first reconcile: exit %d\n%s%s", code, out, errOut)
	}
	d = startDaemon(t, cfg, key)
	eventually(t, "the receiver back", 20*time.Second, func() bool {
		code, err := getJSON(base+"/v1/status", &st)
		return err == nil && code == 200
	})

	// Untidy deliveries, and a SIGKILL in the middle of them.
	sandboxPost(t, sbx, key, "/_sandbox/webhooks/faults", map[string]any{"drop_rate": 0.3, "dup_rate": 0.3, "reorder_rate": 0.3})
	sandboxPost(t, sbx, key, "/_sandbox/deposit", map[string]any{"check_ids": ids[11:20]})
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-d.done
	sandboxPost(t, sbx, key, "/_sandbox/deposit", map[string]any{"check_ids": ids[20:30]})
	if err := api.DeleteCheck(context.Background(), ids[30]); err != nil {
		t.Fatal(err)
	}
	d = startDaemon(t, cfg, key)
	eventually(t, "the receiver back", 20*time.Second, func() bool {
		code, err := getJSON(base+"/v1/status", &st)
		return err == nil && code == 200
	})
	// The sandbox retries what the dead process never answered.
	eventually(t, "deliveries recorded after the restart", 20*time.Second, func() bool {
		return metricValue(getText(base+"/metrics"), `batchd_webhook_deliveries_total{outcome="recorded"}`) > 0 // at 0 from start
	})
	// On a shared ledger the process started after the SIGKILL is a
	// standby until the killed one's lease runs out; only a leader
	// registers the URL.
	awaitLeading(t, base, backend)
	// SIGHUP registers a changed webhook.url at once.
	moved := strings.Replace(string(mustRead(t, cfg)), `url: "http://`+hook+`/webhook"`, `url: "http://`+hook+`/moved"`, 1)
	if err := os.WriteFile(cfg, []byte(moved), 0o600); err != nil {
		t.Fatal(err)
	}
	d.cmd.Process.Signal(syscall.SIGHUP)
	eventually(t, "the new URL registered after SIGHUP", 20*time.Second, func() bool {
		return sandboxHook(t, sbx, key) == "http://"+hook+"/moved/"+secret
	})
	if err := d.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := <-d.done; err != nil {
		t.Fatalf("batchd run stop: %v", err)
	}

	for _, fault := range []string{"webhook drop", "webhook duplicate", "webhook reorder"} {
		if !strings.Contains(sbxLog.String(), `"fault":"`+fault+`"`) {
			t.Fatalf("the sandbox injected no %s: the test proves nothing about it", fault)
		}
	}
	before := ledgerStatuses(t, cfg)
	code, out, errOut := runBatchd(t, key, "reconcile", "--config", cfg)
	if code != 0 || strings.Contains(out, "full walk") {
		t.Fatalf("reconcile: exit %d (want 0, and no full walk)\n%s%s", code, out, errOut)
	}
	want := map[string]string{}
	for _, c := range allChecks(t, api) {
		want[c.CheckID] = string(c.Status)
	}
	got := ledgerStatuses(t, cfg)
	if len(got) != rows {
		t.Fatalf("the ledger has %d checks, want %d", len(got), rows)
	}
	if before[ids[35]] != "in_process" {
		t.Fatalf("the forged delivery changed check %s to %q", ids[35], before[ids[35]])
	}
	behind := 0
	for id, s := range want {
		if got[id] != s {
			t.Errorf("check %s: ledger %q, sandbox %q", id, got[id], s)
		}
		if before[id] != s {
			behind++
		}
	}
	t.Logf("before the reconcile the ledger was behind the sandbox on %d of %d checks; reconcile: %s", behind, rows, strings.TrimSpace(out))
	assertBackend(t, backend, filepath.Join(dir, "state"))
	assertNoSecrets(t, d.logs.String(), key, sshd.IdentityFile)
	if strings.Contains(d.logs.String(), secret) || strings.Contains(out+errOut, secret) {
		t.Fatal("the webhook secret in a log line")
	}
}

// awaitLeading waits until the daemon whose admin server is at base leads
// its ledger (always, on bbolt).
func awaitLeading(t *testing.T, base, backend string) {
	t.Helper()
	if backend == ledgertest.Bbolt {
		return
	}
	eventually(t, "the daemon leading the ledger", 20*time.Second, func() bool {
		var h struct {
			Role *struct {
				Leading bool `json:"leading"`
			} `json:"role"`
		}
		_, err := getJSON(base+"/healthz", &h)
		return err == nil && h.Role != nil && h.Role.Leading
	})
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sandboxHook reads the webhook URL registered for key.
func sandboxHook(t *testing.T, base, key string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/ach/v2/webhooks", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var ans struct {
		URL string `json:"webhook_url"`
	}
	json.NewDecoder(resp.Body).Decode(&ans)
	return ans.URL
}

// sandboxPost calls one of the sandbox's control endpoints.
func sandboxPost(t *testing.T, base, key, path string, body any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d", path, resp.StatusCode)
	}
}

// ledgerStatuses reads every check's status from the ledger of the
// configuration file cfg (batchd stopped).
func ledgerStatuses(t *testing.T, cfg string) map[string]string {
	t.Helper()
	db := openLedger(t, cfg)
	defer db.Close()
	bs, err := db.Batches()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, b := range bs {
		db.Rows(b.ID, func(r *payment.Row) (bool, error) {
			if r.CheckID != "" {
				out[r.CheckID] = string(r.CheckStatus)
			}
			return true, nil
		})
	}
	return out
}
