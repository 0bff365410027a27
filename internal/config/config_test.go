package config

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestMinimalFileGetsDefaults(t *testing.T) {
	for _, data := range []string{minimal, "# comment only\n" + minimal, "---\n" + minimal} {
		cfg, err := Parse([]byte(data), "min.yaml", keyEnv())
		if err != nil {
			t.Fatalf("Parse(%q): %v", data, err)
		}
		want := Default()
		want.API.BaseURL = "https://api.example.com"
		want.apiKey, want.loc = cfg.apiKey, cfg.loc
		if !reflect.DeepEqual(cfg, want) {
			t.Errorf("Parse(%q) =\n%+v\nwant\n%+v", data, cfg, want)
		}
		if cfg.APIKey() != testKey {
			t.Errorf("APIKey() is not the key from %s", EnvAPIKey)
		}
		if cfg.Location() != time.UTC {
			t.Errorf("Location() = %v, want UTC", cfg.Location())
		}
	}
}

func TestDefaultValues(t *testing.T) {
	d := Default()
	checks := []struct {
		name string
		got  any
		want any
	}{
		{"state_dir", d.StateDir, "/var/lib/batchd"},
		{"shutdown_timeout", d.ShutdownTimeout.Std(), 30 * time.Second},
		{"log.level", d.Log.Level, "info"},
		{"log.format", d.Log.Format, "auto"},
		{"api.mode", d.API.Mode, "test"},
		{"api.rate", d.API.Rate, 10.0},
		{"api.burst", d.API.Burst, 10},
		{"api.concurrency", d.API.Concurrency, 64},
		{"api.timeout", d.API.Timeout.Std(), 30 * time.Second},
		{"sftp.inbox", d.SFTP.Inbox, "/inbox"},
		{"sftp.dial_timeout", d.SFTP.DialTimeout.Std(), 10 * time.Second},
		{"sftp.keepalive", d.SFTP.Keepalive.Std(), 15 * time.Second},
		{"ingest.pattern", d.Ingest.Pattern, "*.csv, *.xlsx"},
		{"ingest.max_file_bytes", d.Ingest.MaxFileBytes, int64(256 << 20)},
		{"submit.resolve_after", d.Submit.ResolveAfter.Std(), 2 * time.Minute},
		{"submit.max_attempts", d.Submit.MaxAttempts, 10},
		{"reconcile.lookback_days", d.Reconcile.LookbackDays, 60},
		{"reconcile.full_walk_days", d.Reconcile.FullWalkDays, 7},
		{"reconcile.exception_days", d.Reconcile.ExceptionDays, 7},
		{"schedule.reconcile", d.Schedule.Reconcile, "0 6 * * *"},
		{"admin.listen", d.Admin.Listen, "127.0.0.1:9464"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("default %s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestExampleConfigLoads keeps configs/batchd.yaml honest: it loads with
// systemd-style credentials, it names every key, and every key it shows
// holds the default, except those it marks as examples.
func TestExampleConfigLoads(t *testing.T) {
	creds := t.TempDir()
	writeFile(t, creds, "api_key", testKey+"\n")
	writeFile(t, creds, "sftp_identity", "not parsed by config\n")
	path := filepath.Join("..", "..", "configs", "batchd.yaml")

	cfg, err := Load(path, envOf("CREDENTIALS_DIRECTORY", creds))
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	if cfg.APIKey() != testKey {
		t.Error("APIKey() is not the contents of $CREDENTIALS_DIRECTORY/api_key")
	}

	want := Default()
	want.API.BaseURL = "https://sandbox.echeck.example"
	want.API.KeyFile = filepath.Join(creds, "api_key")
	want.SFTP.Address = "sftp.example.com:22"
	want.SFTP.User = "batchd"
	want.SFTP.IdentityFile = filepath.Join(creds, "sftp_identity")
	want.SFTP.KnownHosts = "/etc/batchd/known_hosts"
	want.apiKey, want.loc = cfg.apiKey, cfg.loc
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("example differs from the defaults:\n got %+v\nwant %+v", cfg, want)
	}

	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tree map[string]any
	if err := yaml.Unmarshal(raw, &tree); err != nil {
		t.Fatal(err)
	}
	for _, key := range schemaKeys(reflect.TypeFor[Config](), "") {
		if !hasPath(tree, key) {
			t.Errorf("configs/batchd.yaml does not show key %s", key)
		}
	}
}

// schemaKeys lists the dotted paths of every leaf key of t.
func schemaKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name := joinPath(prefix, strings.Split(sf.Tag.Get("yaml"), ",")[0])
		if sf.Type.Kind() == reflect.Struct && sf.Type != durationType {
			keys = append(keys, schemaKeys(sf.Type, name)...)
		} else {
			keys = append(keys, name)
		}
	}
	return keys
}

func hasPath(tree map[string]any, key string) bool {
	head, rest, nested := strings.Cut(key, ".")
	v, ok := tree[head]
	if !ok || !nested {
		return ok
	}
	sub, ok := v.(map[string]any)
	return ok && hasPath(sub, rest)
}

func TestPath(t *testing.T) {
	env := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name string
		flag string
		env  map[string]string
		want string
	}{
		{"flag wins", "/a.yaml", map[string]string{EnvConfig: "/b.yaml"}, "/a.yaml"},
		{"env next", "", map[string]string{EnvConfig: "/b.yaml"}, "/b.yaml"},
		{"default last", "", nil, DefaultPath},
		{"empty env is unset", "", map[string]string{EnvConfig: ""}, DefaultPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Path(tt.flag, env(tt.env)); got != tt.want {
				t.Errorf("Path = %q, want %q", got, tt.want)
			}
		})
	}
	if got := Path("", nil); got != DefaultPath {
		t.Errorf("Path with nil getenv = %q", got)
	}
}

func TestLocation(t *testing.T) {
	cfg, err := Parse([]byte(minimal+"schedule:\n  timezone: America/New_York\n"), "tz.yaml", keyEnv())
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Location().String(); got != "America/New_York" {
		t.Errorf("Location() = %s", got)
	}
}

func TestDurationYAML(t *testing.T) {
	var v struct {
		D Duration `yaml:"d"`
	}
	if err := yaml.Unmarshal([]byte("d: 1m30s\n"), &v); err != nil {
		t.Fatal(err)
	}
	if v.D.Std() != 90*time.Second {
		t.Errorf("D = %v", v.D)
	}
	if err := yaml.Unmarshal([]byte("d: 90\n"), &v); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a bare number: err = %v, want a duration error naming line 1", err)
	}
	out, err := yaml.Marshal(v)
	if err != nil || string(out) != "d: 1m30s\n" {
		t.Errorf("Marshal = %q, %v", out, err)
	}
}

func TestLogValue(t *testing.T) {
	cfg, err := Parse([]byte(minimal), "log.yaml", keyEnv())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "config", cfg)
	out := buf.String()
	for _, want := range []string{`"rate":10`, `"timeout":"30s"`, `"base_url":"https://api.example.com"`, `"key":"sk_test_…(`, `"void_on_risk":[]`} {
		if !strings.Contains(out, want) {
			t.Errorf("log line lacks %s:\n%s", want, out)
		}
	}
	assertNoSecret(t, "slog JSON", out, testKey)
}

func BenchmarkParseExample(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "configs", "batchd.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	creds := b.TempDir()
	writeFile(b, creds, "api_key", testKey)
	env := envOf("CREDENTIALS_DIRECTORY", creds)
	for b.Loop() {
		if _, err := Parse(data, "batchd.yaml", env); err != nil {
			b.Fatal(err)
		}
	}
}
