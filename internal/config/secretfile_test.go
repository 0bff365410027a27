package config

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chmodFile writes content to name in dir with mode (not filtered by the
// umask) and returns the path.
func chmodFile(t *testing.T, dir, name, content string, mode fs.FileMode) string {
	t.Helper()
	p := writeFile(t, dir, name, content)
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

const testToken = "Zm9vYmFyYmF6cXV4cXV1eC1fZm9v"

// TestSecretFileModeRefused: every secret file that its group or others
// may read or write is refused, with the key, the file, the mode and the
// chmod fix, and without the secret.
func TestSecretFileModeRefused(t *testing.T) {
	for _, mode := range []fs.FileMode{0o644, 0o640, 0o604, 0o660, 0o620, 0o602} {
		dir := t.TempDir()
		key := chmodFile(t, dir, "api_key", testKey, mode)
		hook := chmodFile(t, dir, "hook", testToken, mode)
		tok := chmodFile(t, dir, "admin_token", testToken, mode)
		yaml := minimal + "  key_file: " + key + "\n" +
			"webhook:\n  listen: 127.0.0.1:9500\n  url: https://h.example/webhook\n  secret_file: " + hook + "\n" +
			"admin:\n  token_file: " + tok + "\n"
		_, err := Parse([]byte(yaml), "f.yaml", nil)
		for _, k := range []struct{ key, path string }{{"api.key_file", key}, {"webhook.secret_file", hook}, {"admin.token_file", tok}} {
			fe := findKey(t, err, k.key)
			msg := fe.Error()
			for _, want := range []string{k.key, k.path, fmt.Sprintf("mode %04o", mode), "chmod 600 " + k.path} {
				if !strings.Contains(msg, want) {
					t.Errorf("mode %04o, %s: %q does not say %q", mode, k.key, msg, want)
				}
			}
			if !IsSecretModeError(fe) {
				t.Errorf("mode %04o, %s: not a SecretModeError: %v", mode, k.key, fe)
			}
			assertNoSecret(t, k.key, msg, testKey, testToken)
		}
	}
}

// TestSecretFileModeAccepted: 0600 and 0400 are accepted everywhere, and a
// group-readable (not writable) file under $CREDENTIALS_DIRECTORY is
// accepted, since systemd grants the service its credentials by an ACL
// that shows as 0440.
func TestSecretFileModeAccepted(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []fs.FileMode{0o600, 0o400} {
		p := chmodFile(t, dir, "k"+modeOctal(mode), testKey, mode)
		if _, err := ReadSecretFile(p, 100, nil); err != nil {
			t.Errorf("mode %04o refused: %v", mode, err)
		}
	}
	creds := filepath.Join(dir, "credentials")
	if err := os.Mkdir(creds, 0o700); err != nil {
		t.Fatal(err)
	}
	env := envOf(EnvCredentialsDir, creds)
	acl := chmodFile(t, creds, "api_key", testKey, 0o440)
	if _, err := ReadSecretFile(acl, 100, env); err != nil {
		t.Errorf("0440 under $CREDENTIALS_DIRECTORY refused: %v", err)
	}
	cfg, err := Parse([]byte(minimal+"  key_file: ${CREDENTIALS_DIRECTORY}/api_key\n"), "f.yaml", env)
	if err != nil || cfg.APIKey() != testKey {
		t.Errorf("the shipped LoadCredential setup (0440 by ACL) is refused: %v", err)
	}
	for _, mode := range []fs.FileMode{0o444, 0o460, 0o441} {
		p := chmodFile(t, creds, "bad"+modeOctal(mode), testKey, mode)
		if _, err := ReadSecretFile(p, 100, env); !IsSecretModeError(err) {
			t.Errorf("mode %04o under $CREDENTIALS_DIRECTORY: err %v, want a SecretModeError", mode, err)
		}
	}
	outside := chmodFile(t, dir, "outside", testKey, 0o440)
	if _, err := ReadSecretFile(outside, 100, env); !IsSecretModeError(err) {
		t.Errorf("0440 outside $CREDENTIALS_DIRECTORY: err %v, want a SecretModeError", err)
	}
}

// TestSecretFileNotRegular: a directory named as a secret file is refused
// without reading it.
func TestSecretFileNotRegular(t *testing.T) {
	_, err := ReadSecretFile(t.TempDir(), 100, nil)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("err = %v, want not a regular file", err)
	}
}

// TestSecretModeFixQuotesPath: the fix can be pasted into a shell.
func TestSecretModeFixQuotesPath(t *testing.T) {
	e := &SecretModeError{Path: "/etc/bat chd/it's", Mode: 0o644}
	if want := `chmod 600 '/etc/bat chd/it'\''s'`; !strings.Contains(e.Error(), want) {
		t.Errorf("%q does not hold %q", e.Error(), want)
	}
}

func modeOctal(m fs.FileMode) string { return fmt.Sprintf("%04o", m) }

// TestIdentityFileModeAtLoad: an sftp.identity_file that exists and is
// group- or world-readable is refused when the configuration is loaded,
// with the fix; a missing one is left to the SFTP connection.
func TestIdentityFileModeAtLoad(t *testing.T) {
	dir := t.TempDir()
	ident := chmodFile(t, dir, "id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n", 0o644)
	sftp := func(p string) string {
		return minimal + "sftp:\n  address: sftp.example.com:22\n  user: batchd\n  identity_file: " + p + "\n  known_hosts: /etc/batchd/known_hosts\n"
	}
	_, err := Parse([]byte(sftp(ident)), "f.yaml", keyEnv())
	fe := findKey(t, err, "sftp.identity_file")
	for _, want := range []string{"sftp.identity_file", ident, "mode 0644", "chmod 600 " + ident} {
		if !strings.Contains(fe.Error(), want) {
			t.Errorf("%q does not say %q", fe.Error(), want)
		}
	}
	if strings.Contains(fe.Error(), "PRIVATE KEY") {
		t.Error("the finding quotes the key")
	}
	if err := os.Chmod(ident, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse([]byte(sftp(ident)), "f.yaml", keyEnv()); err != nil {
		t.Errorf("a 0600 identity file: %v", err)
	}
	if _, err := Parse([]byte(sftp(filepath.Join(dir, "missing"))), "f.yaml", keyEnv()); err != nil {
		t.Errorf("a missing identity file is refused at load: %v", err)
	}
}
