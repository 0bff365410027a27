package config

import (
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	env := envOf("A", "alpha", "B", "beta", "EMPTY", "", "DOLLAR", "$B", "CREDENTIALS_DIRECTORY", "/run/credentials/batchd.service")
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{"plain", "plain", ""},
		{"${A}", "alpha", ""},
		{"${A}/${B}.txt", "alpha/beta.txt", ""},
		{"${CREDENTIALS_DIRECTORY}/api_key", "/run/credentials/batchd.service/api_key", ""},
		{"x${EMPTY}y", "xy", ""},
		{"$$", "$", ""},
		{"pa$$word", "pa$word", ""},
		{"$${A}", "${A}", ""},
		{"$$$${A}", "$${A}", ""},
		{"$$${A}", "$alpha", ""},
		{"${DOLLAR}", "$B", ""}, // values are not expanded again
		{"${NOPE}", "", "undefined variable ${NOPE}"},
		{"a/${NOPE}/b", "", "undefined variable ${NOPE}"},
		{"$", "", `lone "$"`},
		{"cost: 5$", "", `lone "$"`},
		{"$A", "", `lone "$"`},
		{"${A", "", "unterminated"},
		{"${}", "", "invalid variable name"},
		{"${1A}", "", "invalid variable name"},
		{"${A:-x}", "", "invalid variable name"},
		{"${A B}", "", "invalid variable name"},
	}
	for _, tt := range tests {
		got, err := expand(tt.in, env)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("expand(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
		case err != nil || got != tt.want:
			t.Errorf("expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestExpandInFile(t *testing.T) {
	env := envOf(EnvAPIKey, testKey, "STATE", "/srv/batchd", "RATE", "2.5", "TZ_NAME", "Europe/Berlin",
		"COL", "notes", "PRICE", "$5")
	data := "state_dir: ${STATE}/state\n" +
		minimal +
		"  rate: ${RATE}\n" +
		"sftp:\n" +
		"  inbox: \"/in$$box\"\n" +
		"  outbox: /out/${PRICE}\n" +
		"ingest:\n" +
		"  ignore_columns: [\"${COL}\", plain]\n" +
		"schedule:\n" +
		"  timezone: ${TZ_NAME}\n"
	cfg, err := Parse([]byte(data), "f.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string][2]string{
		"state_dir":         {cfg.StateDir, "/srv/batchd/state"},
		"sftp.inbox":        {cfg.SFTP.Inbox, "/in$box"},
		"sftp.outbox":       {cfg.SFTP.Outbox, "/out/$5"},
		"ignore_columns":    {strings.Join(cfg.Ingest.IgnoreColumns, ","), "notes,plain"},
		"schedule.timezone": {cfg.Location().String(), "Europe/Berlin"},
	}
	for k, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", k, c[0], c[1])
		}
	}
	if cfg.API.Rate != 2.5 {
		t.Errorf("api.rate = %v, want 2.5 from ${RATE}", cfg.API.Rate)
	}
}

func TestExpandErrorsInFile(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		key      string
		line     int
		contains string
	}{
		{"undefined variable", minimal + "  key_file: ${SECRETS_DIR}/api_key\n", "api.key_file", 3,
			"line 3: api.key_file: undefined variable ${SECRETS_DIR}"},
		{"undefined in list", minimal + "ingest:\n  ignore_columns:\n    - ${NOPE}\n", "ingest.ignore_columns[0]", 5,
			"ingest.ignore_columns[0]: undefined variable ${NOPE}"},
		{"lone dollar", "state_dir: /var/$lib\n" + minimal, "state_dir", 1, `state_dir: a lone "$"`},
		{"keys are not expanded", minimal + "  ${X}: 1\n", "api.${X}", 3, "unknown key api.${X}"},
		{"expanded value of wrong type", minimal + "  burst: ${N}\n", "api.burst", 3, `api.burst: want an integer, got "many"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "f.yaml", envOf(EnvAPIKey, testKey, "X", "rate", "N", "many"))
			fe := findKey(t, err, tt.key)
			if fe.Line != tt.line {
				t.Errorf("line = %d, want %d", fe.Line, tt.line)
			}
			if !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("error lacks %q:\n%v", tt.contains, err)
			}
		})
	}
}

// TestUndefinedKeyFileVariableDoesNotFallBack makes sure a key_file whose
// variable is missing is reported as such, not replaced by $BATCHD_API_KEY.
func TestUndefinedKeyFileVariableDoesNotFallBack(t *testing.T) {
	_, err := Parse([]byte(minimal+"  key_file: ${SECRETS_DIR}/api_key\n"), "f.yaml", keyEnv())
	got := fieldErrors(t, err)
	if len(got) != 1 || got[0].Key != "api.key_file" || !strings.Contains(err.Error(), "undefined variable ${SECRETS_DIR}") {
		t.Errorf("want exactly the undefined-variable finding, got:\n%v", err)
	}
}

func TestSecretFromEnvNeverQuoted(t *testing.T) {
	env := envOf(EnvAPIKey, testKey, "K", testKey)
	for _, data := range []string{
		minimal + "  mode: ${K}\n",
		minimal + "  mode: x${K}\n",
		minimal + "  base_url: https://h:${K}/\n",
		minimal + "  key_file: /${K}\n",
		"api:\n  base_url: https://${K}\n",
		minimal + "sftp:\n  user: ${K}\n",
		minimal + "ingest:\n  ignore_columns: [a, \"${K}\"]\n",
		minimal + "  burst: ${K}\n",
		minimal + "schedule:\n  ingest: ${K}\n",
		minimal + "schedule:\n  timezone: ${K}\n",
		minimal + "sftp:\n  address: ${K}\n",
		minimal + "ingest:\n  pattern: \"[${K}\"\n",
	} {
		_, err := Parse([]byte(data), "f.yaml", env)
		if err == nil {
			t.Errorf("Parse(%q) succeeded", data)
			continue
		}
		assertNoSecret(t, "error", err.Error(), testKey, testKey[len("sk_test_"):])
	}
}
