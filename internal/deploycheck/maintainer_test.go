package deploycheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var postrmFile = filepath.Join("..", "..", "deploy", "deb", "postrm")

// credentialNames are the files the guide puts under
// /etc/batchd/credentials; purge deletes each.
var credentialNames = []string{"api_key", "sftp_identity", "webhook_secret", "admin_token", "postgres-dsn"}

// hostPath finds, outside comments, an /etc or /var path not rooted at
// $DPKG_ROOT: the script would then touch this host when run for a test.
var hostPath = regexp.MustCompile(`(^|[^}])/(etc|var)/`)

// runPostrm runs deploy/deb/postrm ARG as dpkg does for a package
// installed under root (dpkg --root sets DPKG_ROOT). It first refuses a
// script that names an /etc or /var path without $DPKG_ROOT, so that a
// mistake there fails the test instead of deleting this host's files.
func runPostrm(t *testing.T, root, arg string) (stderr string) {
	t.Helper()
	script, err := os.ReadFile(postrmFile)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(script), "\n") {
		if code, _, _ := strings.Cut(line, "#"); hostPath.MatchString(code) {
			t.Fatalf("%s:%d: a path not under ${DPKG_ROOT:-}: %s", postrmFile, i+1, line)
		}
	}
	cmd := exec.Command("sh", postrmFile, arg)
	cmd.Env = append(os.Environ(), "DPKG_ROOT="+root)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("postrm %s: %v\nstdout: %s\nstderr: %s", arg, err, out, errb.String())
	}
	return errb.String()
}

// installedRoot lays out what an installed, configured batchd leaves on
// a host: the credentials (0600), known_hosts, and the state directory as
// systemd makes it (/var/lib/batchd a link to /var/lib/private/batchd)
// with a ledger, its marker and a backup. It returns the root and the
// state files with their contents.
func installedRoot(t *testing.T, extraCreds ...string) (string, map[string]string) {
	t.Helper()
	root := t.TempDir()
	creds := filepath.Join(root, "etc", "batchd", "credentials")
	mkdir(t, creds, 0o700)
	for _, name := range append(slices.Clone(credentialNames), extraCreds...) {
		writeFile(t, filepath.Join(creds, name), "secret "+name, 0o600)
	}
	writeFile(t, filepath.Join(root, "etc", "batchd", "known_hosts"), "sftp.example.com ssh-ed25519 AAAA", 0o644)
	state := filepath.Join(root, "var", "lib", "private", "batchd")
	mkdir(t, filepath.Join(state, "backups"), 0o700)
	files := map[string]string{
		filepath.Join(state, "batchd.db"):                             "ledger",
		filepath.Join(state, ".batchd-ledger"):                        "marker",
		filepath.Join(state, "backups", "batchd-20261122T053000Z.db"): "snapshot",
	}
	for p, c := range files {
		writeFile(t, p, c, 0o600)
	}
	if err := os.Symlink("private/batchd", filepath.Join(root, "var", "lib", "batchd")); err != nil {
		t.Fatal(err)
	}
	return root, files
}

// TestPostrmPurgeRemovesCredentialsKeepsLedger: purge deletes every
// credential and the emptied directory, and leaves the ledger, its
// marker, its backups and the state directory's link exactly as they were.
func TestPostrmPurgeRemovesCredentialsKeepsLedger(t *testing.T) {
	root, state := installedRoot(t)
	runPostrm(t, root, "purge")

	creds := filepath.Join(root, "etc", "batchd", "credentials")
	if _, err := os.Lstat(creds); !os.IsNotExist(err) {
		t.Errorf("purge left %s (err %v)", creds, err)
	}
	assertState(t, root, state)
	if _, err := os.Stat(filepath.Join(root, "etc", "batchd", "known_hosts")); err != nil {
		t.Errorf("purge deleted known_hosts, which holds no secret: %v", err)
	}
}

// TestPostrmPurgeKeepsUnknownFiles: a file purge does not know stays, with
// the directory, and purge names it; the known secrets still go.
func TestPostrmPurgeKeepsUnknownFiles(t *testing.T) {
	root, state := installedRoot(t, "notes.txt")
	stderr := runPostrm(t, root, "purge")

	creds := filepath.Join(root, "etc", "batchd", "credentials")
	for _, name := range credentialNames {
		if _, err := os.Lstat(filepath.Join(creds, name)); !os.IsNotExist(err) {
			t.Errorf("purge left %s (err %v)", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(creds, "notes.txt")); err != nil {
		t.Errorf("purge deleted a file it does not know: %v", err)
	}
	if !strings.Contains(stderr, "notes.txt") {
		t.Errorf("purge does not name the file it kept; stderr: %q", stderr)
	}
	assertState(t, root, state)
}

// TestPostrmOtherActionsKeepEverything: remove (and an upgrade's or a
// failed install's postrm) deletes nothing, so a reinstall finds its
// credentials; purge of a host with no /etc/batchd succeeds.
func TestPostrmOtherActionsKeepEverything(t *testing.T) {
	for _, arg := range []string{"remove", "upgrade", "abort-install", "failed-upgrade", "disappear"} {
		t.Run(arg, func(t *testing.T) {
			root, state := installedRoot(t)
			runPostrm(t, root, arg)
			for _, name := range credentialNames {
				if _, err := os.Stat(filepath.Join(root, "etc", "batchd", "credentials", name)); err != nil {
					t.Errorf("postrm %s deleted %s: %v", arg, name, err)
				}
			}
			assertState(t, root, state)
		})
	}
	runPostrm(t, t.TempDir(), "purge")
}

// assertState fails unless every state file holds what it held and
// /var/lib/batchd still links to the private directory.
func assertState(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, want := range files {
		got, err := os.ReadFile(p)
		if err != nil || string(got) != want {
			t.Errorf("the state directory lost %s: %q, %v", p, got, err)
		}
	}
	if target, err := os.Readlink(filepath.Join(root, "var", "lib", "batchd")); err != nil || target != "private/batchd" {
		t.Errorf("/var/lib/batchd is no longer the link to private/batchd: %q, %v", target, err)
	}
}

func mkdir(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(dir, mode); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	mkdir(t, filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}
