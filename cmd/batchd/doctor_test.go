package main

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/batchd/batchd/internal/ach"
	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/sftpd"
)

const doctorKey = "sk_test_doctor0123456789"

// doctorSite is an installation for batchd doctor: an in-process SFTP
// server with the four folders, a sandbox emulator, a key file, a webhook
// secret and an initialised ledger. Tests break one thing each.
type doctorSite struct {
	dir, keyFile, knownHosts string
	sftp                     *sftpd.Server
	apiURL, hookURL          string
	tempUpload               string // sftp.temp_upload; "" is the default
}

func newDoctorSite(t *testing.T, acceptedKey string) *doctorSite {
	t.Helper()
	dir := t.TempDir()
	srv, err := sftpd.Start(context.Background(), filepath.Join(dir, "sftpd"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		if err := os.MkdirAll(filepath.Join(srv.Root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	api := httptest.NewServer(sandbox.New(sandbox.Options{Keys: []sandbox.Key{{Value: acceptedKey}}}))
	t.Cleanup(api.Close)
	s := &doctorSite{dir: dir, keyFile: filepath.Join(dir, "api.key"), knownHosts: srv.KnownHostsFile, sftp: srv,
		apiURL: api.URL, hookURL: "https://hooks.example.com/webhook"}
	writeFile(t, s.keyFile, doctorKey+"\n", 0o600)
	writeFile(t, filepath.Join(dir, "hook.secret"), "doctorHookSecret0123456789\n", 0o600)
	if code, _, errOut := runMain(t, nil, "init", "--config", s.config(t)); code != exitOK {
		t.Fatalf("init: exit %d: %s", code, errOut)
	}
	return s
}

func writeFile(t *testing.T, p, text string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// config writes the site's configuration and returns its path.
func (s *doctorSite) config(t *testing.T) string {
	t.Helper()
	r := s.sftp.Root
	return writeConfig(t, s.dir, fmt.Sprintf(`
state_dir: %s
api: {base_url: %q, mode: test, key_file: %s}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s,
       inbox: %s/inbox, archive: %s/archive, failed: %s/failed, outbox: %s/outbox, temp_upload: %q}
webhook: {listen: "127.0.0.1:9", url: %q, secret_file: %s}
`, filepath.Join(s.dir, "state"), s.apiURL, s.keyFile, s.sftp.Addr, s.sftp.User, s.sftp.IdentityFile, s.knownHosts,
		r, r, r, r, cmp.Or(s.tempUpload, "dot"), s.hookURL, filepath.Join(s.dir, "hook.secret")))
}

// register registers the site's webhook URL with the sandbox, as batchd
// run does at start.
func (s *doctorSite) register(t *testing.T) {
	t.Helper()
	c, err := ach.New(apiwire.Options{BaseURL: s.apiURL, Key: doctorKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RegisterWebhook(context.Background(), s.hookURL+"/doctorHookSecret0123456789"); err != nil {
		t.Fatal(err)
	}
}

// doctorLines runs batchd doctor and returns its exit code and output.
func doctorLines(t *testing.T, cfg string) (int, string) {
	t.Helper()
	code, out, errOut := runMain(t, nil, "doctor", "--config", cfg)
	t.Logf("batchd doctor: exit %d\n%s%s", code, out, errOut)
	for _, secret := range []string{doctorKey, "doctorHookSecret0123456789", "PRIVATE KEY"} {
		if strings.Contains(out+errOut, secret) {
			t.Fatalf("doctor printed a secret (%s):\n%s%s", secret[:8], out, errOut)
		}
	}
	return code, out + errOut
}

// lineOf returns the output line that starts with status and check.
func lineOf(t *testing.T, out, status, check string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == status && f[1] == check+":" {
			return l
		}
	}
	t.Fatalf("no %q line for %s in:\n%s", status, check, out)
	return ""
}

func TestDoctorHealthyInstallation(t *testing.T) {
	for _, mode := range []string{"dot", "suffix", "none"} {
		t.Run(mode, func(t *testing.T) { testDoctorHealthy(t, mode) })
	}
}

func testDoctorHealthy(t *testing.T, tempUpload string) {
	s := newDoctorSite(t, doctorKey)
	s.tempUpload = tempUpload
	s.register(t)
	code, out := doctorLines(t, s.config(t))
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, check := range []string{"config", "sftp", "sftp.inbox", "sftp.archive", "sftp.failed", "sftp.outbox", "api", "clock", "ledger", "webhook"} {
		lineOf(t, out, "ok", check)
	}
	if strings.Contains(out, "FAIL") || strings.Contains(out, "warn") {
		t.Fatalf("a healthy installation drew a FAIL or warn:\n%s", out)
	}
	for _, d := range []string{"archive", "failed", "outbox"} {
		if left, _ := os.ReadDir(filepath.Join(s.sftp.Root, d)); len(left) != 0 {
			t.Fatalf("the write probe left %v in %s", left, d)
		}
	}
}

func TestDoctorWrongHostKey(t *testing.T) {
	s := newDoctorSite(t, doctorKey)
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	s.knownHosts = filepath.Join(s.dir, "wrong_known_hosts")
	writeFile(t, s.knownHosts, knownhosts.Line([]string{knownhosts.Normalize(s.sftp.Addr)}, pub)+"\n", 0o644)
	code, out := doctorLines(t, s.config(t))
	l := lineOf(t, out, "FAIL", "sftp.known_hosts")
	if code != exitFailure || !strings.Contains(l, "host key mismatch") || !strings.Contains(l, "fix: ") ||
		!strings.Contains(l, "ssh-keyscan") || !strings.Contains(l, s.knownHosts) || !strings.Contains(l, s.sftp.HostKeyFingerprint) {
		t.Fatalf("exit %d, line %q", code, l)
	}
	lineOf(t, out, "ok", "api") // the other checks still ran
}

func TestDoctorKeyFileReadableByOthers(t *testing.T) {
	s := newDoctorSite(t, doctorKey)
	cfg := s.config(t)
	if err := os.Chmod(s.keyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := doctorLines(t, cfg)
	l := lineOf(t, out, "FAIL", "secrets")
	if code != exitFailure || !strings.Contains(l, "api.key_file") || !strings.Contains(l, "fix: chmod 600 "+s.keyFile) {
		t.Fatalf("exit %d, line %q\n%s", code, l, out)
	}
}

func TestDoctorRefusedAPIKey(t *testing.T) {
	s := newDoctorSite(t, "sk_test_anotherkey0123456789")
	code, out := doctorLines(t, s.config(t))
	l := lineOf(t, out, "FAIL", "api")
	if code != exitFailure || !strings.Contains(l, "refused the API key") || !strings.Contains(l, "fix: ") || !strings.Contains(l, "api.key_file") {
		t.Fatalf("exit %d, line %q", code, l)
	}
	lineOf(t, out, "ok", "clock") // a refusal carries the service's Date too
	lineOf(t, out, "FAIL", "webhook")
}

func TestDoctorMissingOutbox(t *testing.T) {
	s := newDoctorSite(t, doctorKey)
	s.register(t)
	if err := os.Remove(filepath.Join(s.sftp.Root, "outbox")); err != nil {
		t.Fatal(err)
	}
	code, out := doctorLines(t, s.config(t))
	l := lineOf(t, out, "FAIL", "sftp.outbox")
	if code != exitFailure || !strings.Contains(l, "does not exist") || !strings.Contains(l, "fix: create ") {
		t.Fatalf("exit %d, line %q", code, l)
	}
	if strings.Count(out, "\nFAIL ") != 1 {
		t.Fatalf("one fault, more FAIL lines:\n%s", out)
	}
}
