package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAPIKeySources(t *testing.T) {
	dir := t.TempDir()
	keyFile := writeFile(t, dir, "api_key", "\n  "+testKey+"  \r\n")
	liveFile := writeFile(t, dir, "live_key", liveKey)
	tests := []struct {
		name string
		yaml string
		env  Env
		want string
	}{
		{"key file, trimmed", minimal + "  key_file: " + keyFile + "\n", nil, testKey},
		{"key file via credentials dir", minimal + "  key_file: ${CREDENTIALS_DIRECTORY}/api_key\n",
			envOf("CREDENTIALS_DIRECTORY", dir), testKey},
		{"env when key_file unset", minimal, envOf(EnvAPIKey, " "+testKey+"\n"), testKey},
		{"env when key_file empty", minimal + "  key_file: \"\"\n", envOf(EnvAPIKey, testKey), testKey},
		{"key file wins over env", minimal + "  key_file: " + keyFile + "\n", envOf(EnvAPIKey, liveKey), testKey},
		{"live key in live mode", minimal + "  mode: live\n  key_file: " + liveFile + "\n", nil, liveKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.yaml), "f.yaml", tt.env)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if cfg.APIKey() != tt.want {
				t.Errorf("APIKey() is %s, want %s", redactForTest(cfg.APIKey()), redactForTest(tt.want))
			}
		})
	}
}

func redactForTest(k string) string { return NewSecret(k).String() }

func TestAPIKeyErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope")
	empty := writeFile(t, dir, "empty", " \n\t\n")
	twoLines := writeFile(t, dir, "two", testKey+"\n"+liveKey+"\n")
	noPrefix := writeFile(t, dir, "noprefix", "pk_test_abcdef0123456789")
	testFile := writeFile(t, dir, "test_key", testKey)
	liveFile := writeFile(t, dir, "live_key", liveKey)
	big := writeFile(t, dir, "big", testKey+strings.Repeat("x", maxKeyFileBytes))

	tests := []struct {
		name     string
		yaml     string
		env      Env
		key      string
		line     int
		contains []string
		is       error
	}{
		{"missing key file", minimal + "  key_file: " + missing + "\n", keyEnv(), "api.key_file", 3,
			[]string{"api.key_file", missing, "cannot open"}, fs.ErrNotExist},
		{"key file is a directory", minimal + "  key_file: " + dir + "\n", nil, "api.key_file", 3,
			[]string{"api.key_file", dir}, nil},
		{"empty key file", minimal + "  key_file: " + empty + "\n", nil, "api.key_file", 3,
			[]string{"api.key_file", empty, "empty"}, nil},
		{"two keys in file", minimal + "  key_file: " + twoLines + "\n", nil, "api.key_file", 3,
			[]string{"not an API key"}, nil},
		{"key without prefix", minimal + "  key_file: " + noPrefix + "\n", nil, "api.key_file", 3,
			[]string{"neither sk_test_ nor sk_live_"}, nil},
		{"huge key file", minimal + "  key_file: " + big + "\n", nil, "api.key_file", 3,
			[]string{"larger than"}, nil},
		{"relative key file", minimal + "  key_file: api_key\n", nil, "api.key_file", 3,
			[]string{"absolute path"}, nil},
		{"no key at all", minimal, nil, "api.key_file", 1,
			[]string{"no API key", "api.key_file", EnvAPIKey}, nil},
		{"empty env key", minimal, envOf(EnvAPIKey, "  "), "api.key_file", 1,
			[]string{"no API key"}, nil},
		{"env key without prefix", minimal, envOf(EnvAPIKey, "hunter2hunter2"), "api.key_file", 1,
			[]string{EnvAPIKey, "neither sk_test_ nor sk_live_"}, nil},
		{"live mode, test key", minimal + "  mode: live\n  key_file: " + testFile + "\n", nil, "api.mode", 3,
			[]string{`api.mode is "live" but the API key is a test key (sk_test_…)`}, nil},
		{"test mode, live key", minimal + "  mode: test\n  key_file: " + liveFile + "\n", nil, "api.mode", 3,
			[]string{`api.mode is "test" but the API key is a live key (sk_live_…)`}, nil},
		{"live mode by default test mode env key", minimal + "  mode: live\n", keyEnv(), "api.mode", 3,
			[]string{`api.mode is "live"`}, nil},
		{"test mode by default, live env key", minimal, envOf(EnvAPIKey, liveKey), "api.mode", 1,
			[]string{`api.mode is "test"`}, nil},
		{"key pasted as key_file", minimal + "  key_file: /run/" + liveKey + "\n", nil, "api.key_file", 3,
			[]string{"api.key_file: holds what looks like an API key"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "f.yaml", tt.env)
			fe := findKey(t, err, tt.key)
			if fe.Line != tt.line {
				t.Errorf("line = %d, want %d (%v)", fe.Line, tt.line, fe)
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error lacks %q:\n%v", s, err)
				}
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(err, %v) is false: %v", tt.is, err)
			}
			assertNoSecret(t, "error", err.Error(), testKey, liveKey, "hunter2", "pk_test_abcdef")
			if got := len(fieldErrors(t, err)); got != 1 {
				t.Errorf("%d findings, want exactly 1:\n%v", got, err)
			}
		})
	}
}

// TestKeyNeverPrinted formats a loaded Config every way a program might
// and checks that the key is in none of them.
func TestKeyNeverPrinted(t *testing.T) {
	cfg, err := Parse([]byte(minimal), "f.yaml", keyEnv())
	if err != nil {
		t.Fatal(err)
	}
	type holder struct {
		cfg Config // unexported: fmt cannot call methods through it
		Cfg *Config
	}
	outputs := map[string]string{
		"%v":         fmt.Sprintf("%v", cfg),
		"%+v":        fmt.Sprintf("%+v", cfg),
		"%#v":        fmt.Sprintf("%#v", cfg),
		"%+v value":  fmt.Sprintf("%+v", *cfg),
		"%#v value":  fmt.Sprintf("%#v", *cfg),
		"%+v holder": fmt.Sprintf("%+v", holder{*cfg, cfg}),
		"%#v holder": fmt.Sprintf("%#v", holder{*cfg, cfg}),
		"%q secret":  fmt.Sprintf("%q %x %s %v %#v", cfg.apiKey, cfg.apiKey, cfg.apiKey, cfg.apiKey, cfg.apiKey),
	}
	j, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	outputs["json"] = string(j)
	for name, h := range map[string]func(*bytes.Buffer) slog.Handler{
		"slog text": func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		"slog json": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
	} {
		var buf bytes.Buffer
		log := slog.New(h(&buf))
		log.Info("cfg", "config", cfg, "value", *cfg, "api", cfg.API, "key", cfg.apiKey)
		outputs[name] = buf.String()
	}
	for name, out := range outputs {
		assertNoSecret(t, name, out, testKey)
		if strings.Contains(out, testKey[len("sk_test_"):]) {
			t.Errorf("%s reveals the key's body: %s", name, out)
		}
	}
}

func TestLoadReadsFile(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "batchd.yaml", minimal)
	cfg, err := Load(p, keyEnv())
	if err != nil || cfg.API.BaseURL != "https://api.example.com" {
		t.Fatalf("Load = %+v, %v", cfg, err)
	}
	_, err = Load(filepath.Join(dir, "absent.yaml"), keyEnv())
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "absent.yaml") {
		t.Errorf("Load of a missing file: %v", err)
	}
	bad := writeFile(t, dir, "bad.yaml", minimal+"  rte: 1\n")
	_, err = Load(bad, keyEnv())
	if fe := findKey(t, err, "api.rte"); fe.File != bad {
		t.Errorf("finding names file %q, want %q", fe.File, bad)
	}
}
