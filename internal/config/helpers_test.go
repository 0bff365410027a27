package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	testKey = "sk_test_4eC39HqLyjWDarjtT1zdp7dcQ"
	liveKey = "sk_live_9zXq81mNpRtVbWc2LkJh5GfdS"
)

// minimal is the smallest file that validates (with a key in the env).
const minimal = "api:\n  base_url: https://api.example.com\n"

// envOf builds an Env from name, value pairs.
func envOf(kv ...string) Env {
	m := make(map[string]string)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return MapEnv(m)
}

// keyEnv is an environment holding a test key and nothing else.
func keyEnv() Env { return envOf(EnvAPIKey, testKey) }

// fieldErrors flattens a joined error into its findings.
func fieldErrors(t *testing.T, err error) []*FieldError {
	t.Helper()
	var out []*FieldError
	var walk func(error)
	walk = func(e error) {
		var fe *FieldError
		if multi, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range multi.Unwrap() {
				walk(x)
			}
		} else if errors.As(e, &fe) {
			out = append(out, fe)
		} else {
			t.Errorf("finding is not a *FieldError: %T %v", e, e)
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

// findKey returns the finding for key, failing the test when there is none.
func findKey(t *testing.T, err error, key string) *FieldError {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want a finding for %s", key)
	}
	for _, fe := range fieldErrors(t, err) {
		if fe.Key == key {
			return fe
		}
	}
	t.Fatalf("no finding for key %s in:\n%v", key, err)
	return nil
}

// writeFile writes content to name in dir and returns the path.
func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// assertNoSecret fails when s contains any of the secrets.
func assertNoSecret(t testing.TB, what, s string, secrets ...string) {
	t.Helper()
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			t.Errorf("%s reveals a secret: %s", what, s)
		}
	}
}
