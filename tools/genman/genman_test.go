package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeBatchd is a stand-in binary that prints help the way batchd does:
// the command table under "commands:", and flag.PrintDefaults' layout
// (a one-letter flag's description on its own line, a long one's below).
const fakeBatchd = `#!/bin/sh
case "$1 $2" in
"help ") printf 'usage: batchd <command> [flags]\n\ncommands:\n  restore       install a snapshot; never pays twice\n  mark-restored tell the ledger [it] was restored\n  version       print the version\n\nRun "batchd <command> -h" for a command'"'"'s flags.\n' ;;
"restore -h") printf 'usage: batchd restore --from SNAPSHOT [--other-instance]\n  -from string\n    \tthe snapshot to install,\n    \tmade by .batchd backup (required)\n  -other-instance\n    \tinstall another ledger'"'"'s snapshot\n  -x\tone letter\n' >&2 ;;
"mark-restored -h") printf 'usage: batchd mark-restored --at TIME\n  -at YYYY-MM-DD\n    \tthe moment: RFC 3339 \\ [x] (default "now")\n' >&2 ;;
"version -h") printf 'usage: batchd version \n' >&2 ;;
*) echo "unexpected $*" >&2; exit 2 ;;
esac
`

func generate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "batchd")
	if err := os.WriteFile(bin, []byte(fakeBatchd), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := run(bin, dir, manPage{version: "1.2.3", date: "2026-11-25"}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseUsage(t *testing.T) {
	args, flags, err := parseUsage("restore", "usage: batchd restore --from S\n  -from string\n    \tthe snapshot,\n    \trequired\n  -x\tone letter\n  -json\n    \tJSON\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []flagDoc{{"from", "string", "the snapshot, required"}, {"x", "", "one letter"}, {"json", "", "JSON"}}
	if args != "--from S" || len(flags) != len(want) {
		t.Fatalf("args %q flags %+v", args, flags)
	}
	for i := range want {
		if flags[i] != want[i] {
			t.Errorf("flag %d = %+v, want %+v", i, flags[i], want[i])
		}
	}
	if _, _, err := parseUsage("restore", "usage: batchd backup\n"); err == nil {
		t.Error("another command's usage line was accepted")
	}
	if _, _, err := parseUsage("restore", "usage: batchd restore\nsomething else\n"); err == nil {
		t.Error("a line that is no flag was accepted")
	}
}

func TestManPageHasEveryCommandAndFlag(t *testing.T) {
	man := read(t, filepath.Join(generate(t), "batchd.1"))
	for _, want := range []string{
		`.TH BATCHD 1 "2026\-11\-25" "batchd 1.2.3"`,
		".SS restore\ninstall a snapshot; never pays twice\n.PP\n.B batchd restore\n\\-\\-from SNAPSHOT [\\-\\-other\\-instance]\n",
		".TP\n\\fB\\-\\-from\\fR \\fIstring\\fR\nthe snapshot to install, made by .batchd backup (required)\n",
		".TP\n\\fB\\-\\-other\\-instance\\fR\ninstall another ledger's snapshot\n",
		".TP\n\\fB\\-\\-x\\fR\none letter\n",
		".TP\n\\fB\\-\\-at\\fR \\fIYYYY\\-MM\\-DD\\fR\nthe moment: RFC 3339 \\e [x] (default \"now\")\n",
		".SS version\nprint the version\n.PP\n.B batchd version\n.SH EXIT STATUS\n",
		// What a script, an administrator or systemd needs of every command.
		".SH SIGNALS\n", ".B SIGHUP\n", ".SH ENVIRONMENT\n", ".B BATCHD_CONFIG\n", ".B BATCHD_API_KEY\n",
		".SH FILES\n", ".I /etc/batchd/batchd.yaml\n", ".I /var/lib/batchd\n",
	} {
		if !strings.Contains(man, want) {
			t.Errorf("batchd.1 lacks %q; it is:\n%s", want, man)
		}
	}
}

// TestBashCompletion runs the generated function the way bash's
// programmable completion does.
func TestBashCompletion(t *testing.T) {
	script := filepath.Join(generate(t), "batchd.bash")
	for _, tc := range []struct{ words, want string }{
		{"batchd re", "restore"},
		{"batchd ''", "restore mark-restored version help"},
		{"batchd restore --", "--from --other-instance --x"},
		{"batchd mark-restored -", "--at"},
		{"batchd version --", ""},
	} {
		cmd := exec.Command("bash", "-c", `source "$1"; COMP_WORDS=(`+tc.words+`); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _batchd; echo "${COMPREPLY[*]}"`, "bash", script)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v: %s", tc.words, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("completing %q = %q, want %q", tc.words, got, tc.want)
		}
	}
}

func TestZshCompletion(t *testing.T) {
	path := filepath.Join(generate(t), "_batchd")
	z := read(t, path)
	// zsh is not on every CI machine; the package's check (.ci/deb-check)
	// parses the installed file with zsh -n where it is.
	if zsh, err := exec.LookPath("zsh"); err == nil {
		if out, err := exec.Command(zsh, "-n", path).CombinedOutput(); err != nil {
			t.Errorf("zsh -n _batchd: %v: %s", err, out)
		}
	}
	for _, want := range []string{
		"#compdef batchd\n",
		`'mark-restored:tell the ledger [it] was restored'`,
		`'--from[the snapshot to install, made by .batchd backup (required)]:string:_files'`,
		`'--other-instance[install another ledger'\''s snapshot]'`,
		`'--at[the moment\: RFC 3339 \\ \[x\] (default "now")]:YYYY-MM-DD:_files'`,
	} {
		if !strings.Contains(z, want) {
			t.Errorf("_batchd lacks %s; it is:\n%s", want, z)
		}
	}
}
