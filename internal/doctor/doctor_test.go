package doctor

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/config"
)

func TestClockResult(t *testing.T) {
	service := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	date := service.Format(http.TimeFormat)
	cases := []struct {
		name   string
		date   string
		now    time.Time
		status Status
		want   string
	}{
		{"in step", date, service.Add(800 * time.Millisecond), OK, "within 1s"},
		{"at the bound", date, service.Add(-2 * time.Minute), OK, "within 2m0s"},
		{"ahead", date, service.Add(5 * time.Minute), Warn, "5m0s ahead of"},
		{"behind", date, service.Add(-3 * time.Minute), Warn, "3m0s behind"},
		{"no header", "", service, Warn, "no answer with a Date header"},
		{"unreadable", "yesterday", service, Warn, "unreadable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := clockResult(c.date, c.now, DefaultMaxSkew)
			if r.Status != c.status || r.Check != "clock" || !strings.Contains(r.What, c.want) {
				t.Fatalf("%+v", r)
			}
			if r.Status == Warn && c.date == date && !strings.Contains(r.Fix, "ntp") {
				t.Fatalf("a skewed clock without the fix: %+v", r)
			}
		})
	}
}

func TestSplitFix(t *testing.T) {
	what, fix := splitFix("the file is readable by others (mode 0644); fix: chmod 600 /k")
	if what != "the file is readable by others (mode 0644)" || fix != "chmod 600 /k" {
		t.Fatalf("%q %q", what, fix)
	}
	if what, fix := splitFix("plain"); what != "plain" || fix != "" {
		t.Fatalf("%q %q", what, fix)
	}
}

func TestMaskedHidesTheSecretSegment(t *testing.T) {
	if got := masked("https://h.example/webhook/s3cretS3cretS3cret"); got != "https://h.example/webhook/…" {
		t.Fatal(got)
	}
}

// A configuration that does not load gives one result per finding and
// no other check: they all need it.
func TestRunStopsAtAConfigThatDoesNotLoad(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "api.key")
	os.WriteFile(key, []byte("sk_test_abcdefghijkl0123\n"), 0o600)
	os.Chmod(key, 0o640)
	cfg := filepath.Join(dir, "batchd.yaml")
	os.WriteFile(cfg, []byte("state_dir: "+dir+"\napi: {base_url: http://127.0.0.1:1, key_file: "+key+", rte: 3}\n"), 0o600)
	res := Run(t.Context(), cfg, config.Env(func(string) (string, bool) { return "", false }), Options{})
	if !Failed(res) {
		t.Fatalf("%+v", res)
	}
	var secrets, unknown bool
	for _, r := range res {
		switch {
		case r.Status != Fail:
			t.Fatalf("a check ran on a config that did not load: %+v", r)
		case r.Check == "secrets" && strings.Contains(r.What, "api.key_file") && r.Fix == "chmod 600 "+key:
			secrets = true
		case r.Check == "config" && strings.Contains(r.What, "api.rte") && strings.Contains(r.What, "line 2"):
			unknown = true
		}
	}
	if !secrets || !unknown {
		t.Fatalf("%+v", res)
	}
}

func TestSecretsNamesAMissingIdentity(t *testing.T) {
	cfg := config.Default()
	cfg.SFTP.Address = "127.0.0.1:22"
	cfg.SFTP.IdentityFile = filepath.Join(t.TempDir(), "id_ed25519")
	res := Secrets(cfg, config.Env(func(string) (string, bool) { return "", false }))
	var found bool
	for _, r := range res {
		if r.Status == Fail && strings.Contains(r.What, "sftp.identity_file") && strings.Contains(r.What, "does not exist") && r.Fix != "" {
			found = true
		}
	}
	if !found {
		t.Fatalf("%+v", res)
	}
}

func TestConfigUnreadable(t *testing.T) {
	_, res := Config("/nonexistent/batchd.yaml", func(p string) (*config.Config, error) {
		return config.Load(p, nil)
	})
	if len(res) != 1 || res[0].Status != Fail || res[0].Check != "config" || res[0].Fix == "" {
		t.Fatalf("%+v", res)
	}
}

func TestSFTPNamesAMissingKnownHosts(t *testing.T) {
	cfg := config.Default()
	cfg.SFTP.Address = "sftp.example.com"
	cfg.SFTP.KnownHosts = filepath.Join(t.TempDir(), "known_hosts")
	res := SFTP(t.Context(), cfg, time.Second)
	if len(res) != 1 || res[0].Status != Fail || res[0].Check != "sftp.known_hosts" ||
		!strings.Contains(res[0].What, "does not exist") || !strings.Contains(res[0].Fix, "ssh-keyscan -p 22 sftp.example.com > "+cfg.SFTP.KnownHosts) {
		t.Fatalf("%+v", res)
	}
}
