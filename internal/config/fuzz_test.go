package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary YAML to Parse. It must never panic; a Config it
// accepts must validate again; and neither an error nor the printed Config
// may contain the API key unless the input itself spelled it out.
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile(filepath.Join("..", "..", "configs", "batchd.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	seeds := []string{
		string(example),
		minimal,
		"",
		"---\n",
		"- a\n",
		"api: [1, 2]\n",
		minimal + "  burst: ten\n  mode: prod\n  key: x\n",
		minimal + "  key_file: ${CREDENTIALS_DIRECTORY}/api_key\n",
		minimal + "  mode: x${BATCHD_API_KEY}\n",
		"x: &a [*a]\n" + minimal,
		"a: &x {b: 1}\napi:\n  <<: *x\n",
		minimal + "schedule:\n  ingest: \"TZ=UTC\"\n  submit: \"@every -1s\"\n  reconcile: \"CRON_TZ=\"\n",
		minimal + "ingest:\n  pattern: \"[\"\n  ignore_columns: [[a], {b: c}, ~]\n",
		minimal + "sftp:\n  address: \"[::1\"\n",
		"? [a]\n: b\n",
		"!!binary api: x\n",
		minimal + "---\n" + minimal,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	creds := f.TempDir()
	writeFile(f, creds, "api_key", testKey+"\n")
	env := envOf(EnvAPIKey, testKey, "CREDENTIALS_DIRECTORY", creds, "A", "1")
	secret := []byte(testKey[len("sk_test_"):])

	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "fuzz.yaml", env)
		spelled := bytes.Contains(data, secret)
		if err != nil {
			if cfg != nil {
				t.Fatal("Parse returned both a Config and an error")
			}
			if !spelled {
				assertNoSecret(t, "error", err.Error(), string(secret))
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted Config fails Validate: %v", err)
		}
		if !spelled {
			assertNoSecret(t, "%+v", fmt.Sprintf("%+v %#v", cfg, *cfg), string(secret))
		}
	})
}
