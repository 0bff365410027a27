package config

import (
	"strings"
	"testing"
)

// TestFindings checks that each kind of mistake is reported with the key
// path, the line where the key is written and a useful message.
func TestFindings(t *testing.T) {
	const sftpBase = "sftp:\n  address: sftp.example.com:22\n  user: u\n  identity_file: /id\n" // lines 3-6 after minimal
	tests := []struct {
		name     string
		yaml     string
		key      string
		line     int
		contains []string
	}{
		// Unknown keys.
		{"unknown top-level key", "stat_dir: /x\n" + minimal, "stat_dir", 1,
			[]string{"line 1: unknown key stat_dir", "did you mean state_dir"}},
		{"unknown nested key", minimal + "  rte: 5\n", "api.rte", 3,
			[]string{"line 3: unknown key api.rte", "did you mean api.rate"}},
		{"unknown section", minimal + "metrics:\n  listen: x\n", "metrics", 3,
			[]string{"unknown key metrics"}},
		{"api.key is refused with advice", minimal + "  key: " + liveKey + "\n", "api.key", 3,
			[]string{"unknown key api.key", "api.key_file", EnvAPIKey}},
		{"no host key skipping", minimal + "sftp:\n  insecure_ignore_host_key: true\n", "sftp.insecure_ignore_host_key", 4,
			[]string{"always verifies", "sftp.known_hosts"}},
		{"duplicate key", minimal + "  rate: 1\n  rate: 2\n", "api.rate", 4,
			[]string{"duplicate key api.rate (first set on line 3)"}},
		{"merge key", "x: &x {rate: 1}\n" + minimal + "  <<: *x\n", "api.<<", 4,
			[]string{"merge keys"}},

		{"ingest.kinds names an unknown kind", minimal + "ingest:\n  kinds: [\"stop-*.csv=cancel\"]\n", "ingest.kinds[0]", 4,
			[]string{`ingest.kinds[0]: want PATTERN=KIND, a file-name pattern (like stop-*.csv) and one of payments, funding-sources,`, `cancels`, `got "stop-*.csv=cancel"`}},

		// Wrong types.
		{"string for integer", minimal + "  burst: ten\n", "api.burst", 3,
			[]string{`line 3: api.burst: want an integer, got "ten"`}},
		{"float for integer", minimal + "  burst: 2.5\n", "api.burst", 3,
			[]string{"want an integer"}},
		{"size suffix for bytes", minimal + "ingest:\n  max_file_bytes: 256MiB\n", "ingest.max_file_bytes", 4,
			[]string{"want an integer", `"256MiB"`}},
		{"string for number", minimal + "  rate: fast\n", "api.rate", 3,
			[]string{`api.rate: want a number, got "fast"`}},
		{"infinite rate", minimal + "  rate: .inf\n", "api.rate", 3,
			[]string{"want a number"}},
		{"bare number for duration", minimal + "  timeout: 30\n", "api.timeout", 3,
			[]string{`api.timeout: want a duration such as "30s"`}},
		{"yes for bool", minimal + "ingest:\n  done_marker: yes\n", "ingest.done_marker", 4,
			[]string{`ingest.done_marker: want true or false, got "yes"`}},
		{"scalar for list", minimal + "ingest:\n  ignore_columns: notes\n", "ingest.ignore_columns", 4,
			[]string{"want a list"}},
		{"list for section", "api: [1, 2]\n", "api", 1,
			[]string{"api: want a mapping"}},
		{"mapping for scalar", minimal + "  mode: {a: b}\n", "api.mode", 3,
			[]string{"api.mode: want a string, got a mapping"}},
		{"empty value for integer", minimal + "  burst:\n", "api.burst", 3,
			[]string{"want an integer, got an empty value"}},
		{"list at top level", "- a\n", "", 1,
			[]string{"the top level: want a mapping"}},

		// Invalid values.
		{"mode", minimal + "  mode: prod\n", "api.mode", 3,
			[]string{`line 3: api.mode: must be test or live, got "prod"`}},
		{"rate zero", minimal + "  rate: 0\n", "api.rate", 3, []string{"api.rate: must be", "above 0"}},
		{"rate negative", minimal + "  rate: -1\n", "api.rate", 3, []string{"above 0"}},
		{"burst zero", minimal + "  burst: 0\n", "api.burst", 3, []string{"at least 1"}},
		{"concurrency too high", minimal + "  concurrency: 257\n", "api.concurrency", 3, []string{"between 1 and 256"}},
		{"timeout zero", minimal + "  timeout: 0s\n", "api.timeout", 3, []string{"above 0"}},
		{"accounts", minimal + "  accounts: token\n", "api.accounts", 3, []string{`api.accounts: must be raw or tokenize, got "token"`}},
		{"tokenize without a store", minimal + "  accounts: tokenize\n", "api.store", 1,
			[]string{"api.store: required when api.accounts is tokenize", "api.accounts: raw"}},
		{"store too long", minimal + "  accounts: tokenize\n  store: " + strings.Repeat("s", 129) + "\n", "api.store", 4,
			[]string{"api.store: at most 128 characters, got 129"}},
		{"no api section", "state_dir: /x\n", "api.base_url", 0, []string{"api.base_url: required"}},
		{"no base_url", "api:\n  mode: test\n", "api.base_url", 1, []string{"api.base_url: required"}},
		{"http to remote host", "api:\n  base_url: http://api.example.com\n", "api.base_url", 2,
			[]string{"api.base_url", "http:// is allowed only to a loopback host"}},
		{"ftp scheme", "api:\n  base_url: ftp://api.example.com\n", "api.base_url", 2, []string{"must be an https URL"}},
		{"relative URL", "api:\n  base_url: api.example.com\n", "api.base_url", 2, []string{"must be an https URL"}},
		{"URL with password", "api:\n  base_url: https://u:hunter2@api.example.com\n", "api.base_url", 2,
			[]string{"must not contain a user name or password"}},
		{"log level", minimal + "log:\n  level: verbose\n", "log.level", 4, []string{"debug, info, warn or error"}},
		{"log format", minimal + "log:\n  format: xml\n", "log.format", 4, []string{"auto, json or text"}},
		{"empty state_dir", "state_dir: \"\"\n" + minimal, "state_dir", 1, []string{"state_dir: required"}},
		{"relative state_dir", "state_dir: state\n" + minimal, "state_dir", 1, []string{"absolute path"}},
		{"bad cron", minimal + "schedule:\n  ingest: every 5m\n", "schedule.ingest", 4,
			[]string{"schedule.ingest: not a valid schedule"}},
		{"cron with six fields", minimal + "schedule:\n  reconcile: 0 0 6 * * *\n", "schedule.reconcile", 4,
			[]string{"schedule.reconcile"}},
		{"negative @every", minimal + "schedule:\n  submit: \"@every -5m\"\n", "schedule.submit", 4,
			[]string{"at least 1s"}},
		{"TZ prefix", minimal + "schedule:\n  submit: CRON_TZ=UTC\n", "schedule.submit", 4,
			[]string{"schedule.timezone"}},
		{"bad timezone", minimal + "schedule:\n  timezone: Mars/Olympus_Mons\n", "schedule.timezone", 4,
			[]string{`schedule.timezone: unknown time zone "Mars/Olympus_Mons"`}},
		{"bad pattern", minimal + "ingest:\n  pattern: \"[a-\"\n", "ingest.pattern", 4,
			[]string{"ingest.pattern: not a valid pattern"}},
		{"pattern with slash", minimal + "ingest:\n  pattern: \"in/*.csv\"\n", "ingest.pattern", 4,
			[]string{"must not contain \"/\""}},
		{"void_on_risk value", minimal + "submit:\n  void_on_risk:\n    - Fail\n    - risky\n", "submit.void_on_risk[1]", 6,
			[]string{`submit.void_on_risk[1]: must be Pass, Fail or Risky, got "risky"`}},
		{"on_invalid", minimal + "ingest:\n  on_invalid: drop\n", "ingest.on_invalid", 4, []string{"reject_file or skip_rows"}},
		{"empty ignored column", minimal + "ingest:\n  ignore_columns: [a, \"\"]\n", "ingest.ignore_columns[1]", 4, []string{"must not be empty"}},
		{"stable_for zero without marker", minimal + "ingest:\n  stable_for: 0s\n", "ingest.stable_for", 4, []string{"done_marker"}},
		{"max_attempts zero", minimal + "submit:\n  max_attempts: 0\n", "submit.max_attempts", 4, []string{"at least 1"}},
		{"lookback zero", minimal + "reconcile:\n  lookback_days: 0\n", "reconcile.lookback_days", 4, []string{"at least 1"}},
		{"keep_days negative", minimal + "reconcile:\n  keep_days: -3\n", "reconcile.keep_days", 4, []string{"at least 1"}},
		{"full_walk_days zero", minimal + "reconcile:\n  full_walk_days: 0\n", "reconcile.full_walk_days", 4, []string{"at least 1"}},
		{"exception_days zero", minimal + "reconcile:\n  exception_days: 0\n", "reconcile.exception_days", 4, []string{"at least 1"}},
		{"sftp without known_hosts", minimal + sftpBase, "sftp.known_hosts", 3,
			[]string{"sftp.known_hosts: required", "no option to skip"}},
		{"sftp without user", minimal + "sftp:\n  address: h:22\n  identity_file: /id\n  known_hosts: /kh\n", "sftp.user", 3,
			[]string{"sftp.user: required when sftp.address is set"}},
		{"sftp address without port", minimal + sftpBase[:len("sftp:\n  address: sftp.example.com")] + "\n", "sftp.address", 4,
			[]string{"want host:port"}},
		{"sftp port out of range", minimal + "sftp:\n  address: h:70000\n", "sftp.address", 4, []string{"port must be"}},
		{"sftp same dirs", minimal + "sftp:\n  archive: /inbox/\n", "sftp.archive", 4,
			[]string{"sftp.archive: must differ from sftp.inbox"}},
		{"keepalive negative", minimal + "sftp:\n  keepalive: -1s\n", "sftp.keepalive", 4, []string{"must not be negative"}},
		{"admin.listen", minimal + "admin:\n  listen: localhost\n", "admin.listen", 4, []string{"admin.listen: want host:port"}},

		// Whole-file problems.
		{"syntax error", "api:\n  base_url: [\n", "", 0, []string{"f.yaml: invalid YAML"}},
		{"two documents", minimal + "---\n" + minimal, "", 0, []string{"more than one document"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.yaml), "f.yaml", keyEnv())
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", cfg)
			}
			if cfg != nil {
				t.Error("Parse returned a Config with its error")
			}
			fe := findKey(t, err, tt.key)
			if fe.Line != tt.line {
				t.Errorf("line = %d, want %d (%v)", fe.Line, tt.line, fe)
			}
			if fe.File != "f.yaml" {
				t.Errorf("File = %q", fe.File)
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error lacks %q:\n%v", s, err)
				}
			}
			assertNoSecret(t, "error", err.Error(), testKey, liveKey, "hunter2")
		})
	}
}

func TestAllFindingsReportedInLineOrder(t *testing.T) {
	data := "api:\n" +
		"  base_url: https://api.example.com\n" +
		"  mode: prod\n" + // 3: invalid
		"  burst: ten\n" + // 4: wrong type
		"  rte: 5\n" + // 5: unknown
		"schedule:\n" +
		"  timezone: Nowhere/Land\n" // 7: invalid
	_, err := Parse([]byte(data), "f.yaml", keyEnv())
	got := fieldErrors(t, err)
	wantKeys := []string{"api.mode", "api.burst", "api.rte", "schedule.timezone"}
	if len(got) != len(wantKeys) {
		t.Fatalf("got %d findings, want %d:\n%v", len(got), len(wantKeys), err)
	}
	for i, k := range wantKeys {
		if got[i].Key != k {
			t.Errorf("finding %d is %s, want %s", i, got[i].Key, k)
		}
	}
}

func TestValidValues(t *testing.T) {
	tests := []struct{ name, yaml string }{
		{"http to 127.0.0.1", "api:\n  base_url: http://127.0.0.1:8080/v1\n"},
		{"http to localhost", "api:\n  base_url: http://localhost:8080\n"},
		{"http to ::1", "api:\n  base_url: \"http://[::1]:8080\"\n"},
		{"fractional rate", minimal + "  rate: 0.5\n"},
		{"admin disabled", minimal + "admin:\n  listen: \"\"\n"},
		{"admin disabled by null", minimal + "admin:\n  listen:\n"},
		{"admin on all interfaces", minimal + "admin:\n  listen: \":9464\"\n"},
		{"stable_for zero with marker", minimal + "ingest:\n  stable_for: 0s\n  done_marker: true\n"},
		{"void_on_risk", minimal + "submit:\n  void_on_risk: [Fail, Risky]\n"},
		{"empty section", minimal + "sftp:\n"},
		{"full sftp", minimal + "sftp:\n  address: \"[2001:db8::1]:2222\"\n  user: u\n  identity_file: /id\n  known_hosts: /kh\n"},
		{"cron descriptors", minimal + "schedule:\n  ingest: \"@hourly\"\n  submit: \"*/10 * * * *\"\n  reconcile: \"@daily\"\n"},
		{"anchor", minimal + "sftp:\n  inbox: &in /in\n"},
		{"keepalive disabled", minimal + "sftp:\n  keepalive: 0s\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse([]byte(tt.yaml), "f.yaml", keyEnv()); err != nil {
				t.Errorf("Parse: %v", err)
			}
		})
	}
}

func TestAliasIsFollowed(t *testing.T) {
	data := minimal + "  timeout: &t 45s\nsftp:\n  dial_timeout: *t\n"
	cfg, err := Parse([]byte(data), "f.yaml", keyEnv())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SFTP.DialTimeout.String() != "45s" {
		t.Errorf("dial_timeout = %v, want the aliased 45s", cfg.SFTP.DialTimeout)
	}
}

func TestValidateOnBuiltConfig(t *testing.T) {
	c := Default()
	if err := c.Validate(); err == nil {
		t.Fatal("Default() validated without base_url and key")
	}
	c.API.BaseURL = "https://api.example.com"
	c.SetAPIKey(" " + testKey + "\n")
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if c.APIKey() != testKey {
		t.Error("SetAPIKey did not trim the key")
	}
	c.API.Mode = ModeLive
	fe := findKey(t, c.Validate(), "api.mode")
	if fe.Line != 0 || fe.File != "" {
		t.Errorf("Validate finding has a position: %v", fe)
	}
}
