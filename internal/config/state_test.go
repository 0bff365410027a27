package config

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// password is in every DSN these tests use: no error may print it.
const password = "hunter2-Zq9"

var testDSN = "postgres://batchd:" + password + "@db.internal:5432/batchd"

// pgOff is the backup line a postgres configuration needed before
// backup.schedule's default followed the backend: still accepted.
const pgOff = "backup:\n  schedule: \"\"\n"

func TestStateDefaults(t *testing.T) {
	cfg, err := Parse([]byte(minimal), "min.yaml", keyEnv())
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.State
	if s.Backend != BackendBbolt || s.LeaseTTL.Std() != 15*time.Second || s.SendWindow != 0 || s.Window() != 5*time.Second {
		t.Fatalf("defaults %+v, window %s", s, s.Window())
	}
	if cfg.PostgresDSN() != "" {
		t.Fatal("a bbolt configuration has a DSN")
	}
	if (StateConfig{LeaseTTL: Duration(9 * time.Second), SendWindow: Duration(time.Second)}).Window() != time.Second {
		t.Fatal("a send_window set is not the window")
	}
}

// TestStateFindings: each bad state setting is refused under its own
// key, and no message prints the DSN or its password.
func TestStateFindings(t *testing.T) {
	dir := t.TempDir()
	open := writeFile(t, dir, "dsn-open", testDSN+"\n")
	if err := os.Chmod(open, 0o644); err != nil {
		t.Fatal(err)
	}
	notDSN := writeFile(t, dir, "dsn-word", password+"\n")
	empty := writeFile(t, dir, "dsn-empty", "\n")
	cases := []struct {
		name, yaml string
		env        Env
		key, want  string
	}{
		{"DSN in the YAML", "state:\n  postgres_dsn: " + testDSN + "\n", keyEnv(),
			"state.postgres_dsn", "state.postgres_dsn_file, or in $BATCHD_POSTGRES_DSN"},
		{"password in the YAML", "state:\n  password: " + password + "\n", keyEnv(),
			"state.password", "never reads the PostgreSQL DSN from the config file"},
		{"unknown backend", "state:\n  backend: mysql\n", keyEnv(), "state.backend", "must be bbolt or postgres"},
		{"short lease", "state:\n  lease_ttl: 2s\n", keyEnv(), "state.lease_ttl", "at least 3s"},
		{"wide send window", "state:\n  lease_ttl: 15s\n  send_window: 8s\n", keyEnv(), "state.send_window", "under half of state.lease_ttl"},
		{"send window at half", "state:\n  lease_ttl: 10s\n  send_window: 5s\n", keyEnv(), "state.send_window", "under half"},
		{"negative send window", "state:\n  send_window: -1s\n", keyEnv(), "state.send_window", "must not be negative"},
		{"no DSN", "state:\n  backend: postgres\n  account_keys_file: /etc/batchd/account-keys\n" + pgOff, keyEnv(), "state.postgres_dsn_file", "no DSN"},
		{"DSN where the file goes", "state:\n  backend: postgres\n  account_keys_file: /etc/batchd/account-keys\n  postgres_dsn_file: " + testDSN + "\n" + pgOff, keyEnv(),
			"state.postgres_dsn_file", "looks like a DSN (not shown)"},
		{"relative DSN file", "state:\n  backend: postgres\n  account_keys_file: /etc/batchd/account-keys\n  postgres_dsn_file: dsn.txt\n" + pgOff, keyEnv(),
			"state.postgres_dsn_file", "absolute path"},
		{"DSN file readable by others", "state:\n  backend: postgres\n  account_keys_file: /etc/batchd/account-keys\n  postgres_dsn_file: " + open + "\n" + pgOff, keyEnv(),
			"state.postgres_dsn_file", "chmod 600"},
		{"DSN file without a DSN", "state:\n  backend: postgres\n  account_keys_file: /etc/batchd/account-keys\n  postgres_dsn_file: " + notDSN + "\n" + pgOff, keyEnv(),
			"state.postgres_dsn_file", "not a PostgreSQL DSN"},
		{"empty DSN file", "state:\n  backend: postgres\n  account_keys_file: /etc/batchd/account-keys\n  postgres_dsn_file: " + empty + "\n" + pgOff, keyEnv(),
			"state.postgres_dsn_file", "the file is empty"},
		{"DSN env of two lines", "state:\n  backend: postgres\n  account_keys_file: /etc/batchd/account-keys\n" + pgOff, envOf(EnvAPIKey, testKey, EnvPostgresDSN, testDSN+"\nsslmode=disable"),
			"state.postgres_dsn_file", "$BATCHD_POSTGRES_DSN: it holds several lines"},
		{"DSN file with bbolt", "state:\n  postgres_dsn_file: /etc/batchd/dsn\n", keyEnv(),
			"state.postgres_dsn_file", "only with state.backend: postgres"},
		{"postgres without a key ring", "state:\n  backend: postgres\n" + pgOff, envOf(EnvAPIKey, testKey, EnvPostgresDSN, testDSN),
			"state.account_keys_file", "required with state.backend: postgres, so that no account number is stored in the clear"},
		{"relative key ring", "state:\n  backend: postgres\n  account_keys_file: keys\n" + pgOff, envOf(EnvAPIKey, testKey, EnvPostgresDSN, testDSN),
			"state.account_keys_file", "absolute path"},
		{"snapshots on postgres", "state:\n  backend: postgres\n  account_keys_file: /etc/batchd/account-keys\nbackup:\n  schedule: \"30 5 * * *\"\n", envOf(EnvAPIKey, testKey, EnvPostgresDSN, testDSN),
			"backup.schedule", "pg_dump"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(minimal+tc.yaml), "batchd.yaml", tc.env)
			fe := findKey(t, err, tc.key)
			if !strings.Contains(fe.Error(), tc.want) {
				t.Errorf("finding for %s: %q, want it to say %q", tc.key, fe.Error(), tc.want)
			}
			assertNoSecret(t, "the error", err.Error(), password, testDSN)
		})
	}
}

// TestBackupScheduleFollowsBackend: backup.schedule defaults to daily
// snapshots on bbolt and to none on postgres (batchd's snapshots are of
// the bbolt file), so a postgres configuration without a backup section
// starts; one the file sets is kept, and refused on postgres.
func TestBackupScheduleFollowsBackend(t *testing.T) {
	env := envOf(EnvAPIKey, testKey, EnvPostgresDSN, testDSN)
	for _, tc := range []struct{ name, yaml, want string }{
		{"bbolt", "", "30 5 * * *"},
		{"postgres", "state:\n  backend: postgres\n  account_keys_file: /etc/batchd/account-keys\n", ""},
		{"postgres, backup section without a schedule", "state:\n  backend: postgres\n  account_keys_file: /etc/batchd/account-keys\nbackup:\n  keep: 3\n", ""},
		{"postgres, schedule off", "state:\n  backend: postgres\n  account_keys_file: /etc/batchd/account-keys\n" + pgOff, ""},
		{"bbolt, schedule set", "backup:\n  schedule: \"0 4 * * *\"\n", "0 4 * * *"},
	} {
		cfg, err := Parse([]byte(minimal+tc.yaml), "batchd.yaml", env)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if cfg.Backup.Schedule != tc.want {
			t.Errorf("%s: backup.schedule %q, want %q", tc.name, cfg.Backup.Schedule, tc.want)
		}
	}
}

// TestPostgresDSNSources: the DSN comes from state.postgres_dsn_file
// (which wins) or $BATCHD_POSTGRES_DSN, and the loaded Config does not
// print it.
func TestPostgresDSNSources(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "dsn", "  "+testDSN+"\n")
	fromEnv := "host=db.internal dbname=batchd user=batchd password=" + password
	yaml := minimal + "state:\n  backend: postgres\n  account_keys_file: /etc/batchd/account-keys\n" + pgOff
	env := envOf(EnvAPIKey, testKey, EnvPostgresDSN, fromEnv)

	cfg, err := Parse([]byte(yaml), "batchd.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PostgresDSN() != fromEnv {
		t.Error("the DSN is not $BATCHD_POSTGRES_DSN's")
	}
	cfg, err = Parse([]byte(minimal+"state:\n  backend: postgres\n  account_keys_file: /etc/batchd/account-keys\n  postgres_dsn_file: "+file+"\n"+pgOff), "batchd.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PostgresDSN() != testDSN {
		t.Error("the DSN is not the file's (trimmed), or the variable won over the file")
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%x", "%q"} { // %s and %d take fmt's wrong-verb path, which calls no method
		assertNoSecret(t, "the printed Config", fmt.Sprintf(verb, cfg)+fmt.Sprintf(verb, *cfg), password, testKey)
	}
}
