package deploycheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// standIn prints help as batchd does, for the man page and completions
// make install generates from it (tools/genman).
const standIn = `#!/bin/sh
case "$1" in
help) printf 'usage: batchd <command> [flags]\n\ncommands:\n  version       print the version\n\n' ;;
*) printf 'usage: batchd version \n' >&2 ;;
esac
`

// makeInstall runs the Makefile's install target into destdir, as
// `make install DESTDIR=...` does, with build taken as done (-o build) and
// a stand-in binary, so that it tests the recipe, not the compiler (it
// compiles tools/genman, once). The caller's MAKEFLAGS (under `make
// test`) are dropped.
func makeInstall(t *testing.T, destdir string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "batchd")
	if err := os.WriteFile(bin, []byte(standIn), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "--no-print-directory", "-C", filepath.Join("..", ".."), "-o", "build",
		"install", "DESTDIR="+destdir, "PREFIX=/usr/local", "BIN="+bin)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MAKEFLAGS=") && !strings.HasPrefix(kv, "MFLAGS=") && !strings.HasPrefix(kv, "MAKELEVEL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	return string(out)
}

// TestMakeInstallKeepsEditedConfig: the first make install puts the
// example configuration in place; a later one (an upgrade from source)
// never overwrites the administrator's edited file, and puts the shipped
// one beside it as batchd.yaml.dist instead, as the README says.
func TestMakeInstallKeepsEditedConfig(t *testing.T) {
	shipped, err := os.ReadFile(filepath.Join("..", "..", "configs", "batchd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	conf := filepath.Join(dest, "etc", "batchd", "batchd.yaml")
	dist := conf + ".dist"

	makeInstall(t, dest)
	assertFile(t, conf, shipped, 0o644)
	if _, err := os.Lstat(dist); !os.IsNotExist(err) {
		t.Errorf("first install wrote %s (err %v); want only batchd.yaml", dist, err)
	}
	unit, err := os.ReadFile(filepath.Join(dest, "etc", "systemd", "system", "batchd.service"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(unit, []byte("\nExecStart=/usr/local/bin/batchd run ")) {
		t.Errorf("installed unit's ExecStart= is not /usr/local/bin/batchd")
	}
	for path, want := range map[string]string{
		"share/man/man1/batchd.1":                  ".SS version\n",
		"share/bash-completion/completions/batchd": "version",
		"share/zsh/site-functions/_batchd":         "#compdef batchd",
	} {
		b, err := os.ReadFile(filepath.Join(dest, "usr", "local", path))
		if err != nil || !bytes.Contains(b, []byte(want)) {
			t.Errorf("make install: /usr/local/%s lacks %q (%v)", path, want, err)
		}
	}

	edited := []byte("# edited by the administrator\nstate_dir: /srv/batchd\n")
	if err := os.WriteFile(conf, edited, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(conf, 0o640); err != nil {
		t.Fatal(err)
	}
	out := makeInstall(t, dest)
	assertFile(t, conf, edited, 0o640)
	assertFile(t, dist, shipped, 0o644)
	if !strings.Contains(out, "kept") {
		t.Errorf("make install does not say it kept the configuration:\n%s", out)
	}
}

// assertFile fails unless path holds want with permission bits mode.
func assertFile(t *testing.T, path string, want []byte, mode os.FileMode) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: contents differ from what was expected (%d bytes, want %d)", path, len(got), len(want))
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != mode {
		t.Errorf("%s: mode %04o, want %04o", path, fi.Mode().Perm(), mode)
	}
}
