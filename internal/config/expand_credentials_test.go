package config

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExpandCredentialsDirectoryFallback: an unset $CREDENTIALS_DIRECTORY
// is the directory the unit loads credentials from, so the shipped config
// works from a root shell; a set one (systemd's) wins, even empty; every
// other undefined variable is still an error.
func TestExpandCredentialsDirectoryFallback(t *testing.T) {
	tests := []struct {
		name    string
		env     Env
		in      string
		want    string
		wantErr string
	}{
		{"unset, nil env", nil, "${CREDENTIALS_DIRECTORY}/api_key", "/etc/batchd/credentials/api_key", ""},
		{"unset, other variables set", envOf("A", "alpha"), "${CREDENTIALS_DIRECTORY}/${A}", "/etc/batchd/credentials/alpha", ""},
		{"set by systemd", envOf(EnvCredentialsDir, "/run/credentials/batchd.service"), "${CREDENTIALS_DIRECTORY}/api_key",
			"/run/credentials/batchd.service/api_key", ""},
		{"set but empty", envOf(EnvCredentialsDir, ""), "${CREDENTIALS_DIRECTORY}/api_key", "/api_key", ""},
		{"escaped is not a variable", nil, "$${CREDENTIALS_DIRECTORY}", "${CREDENTIALS_DIRECTORY}", ""},
		{"another variable unset", nil, "${SECRETS_DIR}/api_key", "", "undefined variable ${SECRETS_DIR}"},
		{"a near name unset", nil, "${CREDENTIALS_DIR}/api_key", "", "undefined variable ${CREDENTIALS_DIR}"},
		{"case matters", nil, "${credentials_directory}/api_key", "", "undefined variable ${credentials_directory}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := expand(tt.in, tt.env)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("expand(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
			case err != nil || got != tt.want:
				t.Errorf("expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestCredentialsDirectoryFallbackInFile: the fallback works through
// Parse, for any key, with no environment but the API key. (sftp.inbox is
// a remote path, so the result does not depend on this host's /etc.)
func TestCredentialsDirectoryFallbackInFile(t *testing.T) {
	cfg, err := Parse([]byte(minimal+"sftp:\n  inbox: ${CREDENTIALS_DIRECTORY}/in\n"), "f.yaml", keyEnv())
	if err != nil {
		t.Fatal(err)
	}
	if want := DefaultCredentialsDir + "/in"; cfg.SFTP.Inbox != want {
		t.Errorf("sftp.inbox = %q, want %q", cfg.SFTP.Inbox, want)
	}
}

// TestCredentialsDirectoryFallbackKeyFile: the shipped key_file line no
// longer stops at an undefined variable when the variable is unset; it
// names the file under DefaultCredentialsDir. Whether that file exists on
// this host decides only which of the two outcomes is seen.
func TestCredentialsDirectoryFallbackKeyFile(t *testing.T) {
	want := DefaultCredentialsDir + "/api_key"
	cfg, err := Parse([]byte(minimal+"  key_file: ${CREDENTIALS_DIRECTORY}/api_key\n"), "f.yaml", nil)
	switch {
	case err != nil:
		if strings.Contains(err.Error(), "undefined variable") || !strings.Contains(err.Error(), `"`+want+`"`) {
			t.Errorf("want a finding about %s, got:\n%v", want, err)
		}
	case cfg.API.KeyFile != want:
		t.Errorf("api.key_file = %q, want %q", cfg.API.KeyFile, want)
	}
}

// TestCredentialsFallbackKeepsStrictMode: a secret under the fallback
// directory must be 0600. Only a $CREDENTIALS_DIRECTORY that systemd set
// earns the group-read allowance; the originals are root's own files.
func TestCredentialsFallbackKeepsStrictMode(t *testing.T) {
	p := filepath.Join(DefaultCredentialsDir, "api_key")
	if got := forbiddenBits(p, nil); got != 0o077 {
		t.Errorf("forbiddenBits(%s, no env) = %04o, want 0077", p, got)
	}
	systemd := envOf(EnvCredentialsDir, "/run/credentials/batchd.service")
	if got := forbiddenBits(p, systemd); got != 0o077 {
		t.Errorf("forbiddenBits(%s, systemd env) = %04o, want 0077", p, got)
	}
	if got := forbiddenBits("/run/credentials/batchd.service/api_key", systemd); got != 0o037 {
		t.Errorf("forbiddenBits under systemd's directory = %04o, want 0037", got)
	}
}

// loadCredential matches the unit's LoadCredential=NAME:PATH lines.
var loadCredential = regexp.MustCompile(`^LoadCredential=([^:]+):(.+)$`)

// TestDefaultCredentialsDirMatchesUnit keeps DefaultCredentialsDir equal
// to where the unit loads credentials from, each under its own name, and
// every credential the shipped config names loaded by the unit: otherwise
// a root shell and the service would read different files.
func TestDefaultCredentialsDirMatchesUnit(t *testing.T) {
	fh, err := os.Open(filepath.Join("..", "..", "systemd", "batchd.service"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	loaded := map[string]bool{}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		m := loadCredential.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		name, path := m[1], m[2]
		loaded[name] = true
		if filepath.Dir(path) != DefaultCredentialsDir || filepath.Base(path) != name {
			t.Errorf("unit: LoadCredential=%s:%s; want %s/%s so that the fallback reads the same file", name, path, DefaultCredentialsDir, name)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(loaded) == 0 {
		t.Fatal("the unit has no LoadCredential= line")
	}
	example, err := os.ReadFile(filepath.Join("..", "..", "configs", "batchd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	credFile := regexp.MustCompile(`^[a-z_]+:\s*\$\{CREDENTIALS_DIRECTORY\}/([A-Za-z0-9_.-]+)\s*$`)
	used := 0
	for _, line := range strings.Split(string(example), "\n") {
		m := credFile.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		used++
		if !loaded[m[1]] {
			t.Errorf("configs/batchd.yaml reads ${CREDENTIALS_DIRECTORY}/%s, which the unit does not load", m[1])
		}
	}
	if used == 0 {
		t.Fatal("configs/batchd.yaml names no ${CREDENTIALS_DIRECTORY} file")
	}
}
