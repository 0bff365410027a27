package main

import (
	"strings"
	"testing"
)

// TestHelpCommand: "batchd help CMD" prints that command's summary, usage
// and flags on stdout and exits 0; before, it printed the general help.
func TestHelpCommand(t *testing.T) {
	code, out, errOut := runMain(t, nil, "help", "run")
	if code != exitOK || !strings.Contains(out, "usage: batchd run [--config F]") || !strings.Contains(out, "-config") ||
		strings.Contains(out, "commands:") || errOut != "" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if code, out, _ := runMain(t, nil, "help", "help"); code != exitOK || !strings.Contains(out, "commands:") {
		t.Fatalf("help help: exit %d, stdout %q", code, out)
	}
	if code, _, errOut := runMain(t, nil, "help", "satus"); code != exitUsage || !strings.Contains(errOut, `did you mean "status"?`) {
		t.Fatalf("help of an unknown command: exit %d, stderr %q", code, errOut)
	}
}

// TestUnknownCommandSuggests: a mistyped command gets the command meant;
// one far from every command gets none.
func TestUnknownCommandSuggests(t *testing.T) {
	code, _, errOut := runMain(t, nil, "satus")
	if code != exitUsage || !strings.Contains(errOut, `unknown command "satus"; did you mean "status"?`) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if _, _, errOut := runMain(t, nil, "frobnicate"); strings.Contains(errOut, "did you mean") {
		t.Fatalf("a suggestion for frobnicate: %q", errOut)
	}
}

// TestVersionFlag: --version is the version command.
func TestVersionFlag(t *testing.T) {
	code, out, errOut := runMain(t, nil, "--version")
	if code != exitOK || out != "batchd "+versionString()+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
