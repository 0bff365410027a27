package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/testsshd"
)

// runMain runs one command line in-process with its own streams.
func runMain(t *testing.T, envVars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &environ{stdout: &out, stderr: &errb,
		getenv:    func(k string) string { return envVars[k] },
		lookupEnv: func(k string) (string, bool) { v, ok := envVars[k]; return v, ok },
		exit:      func(int, os.Signal) { t.Fatal("unexpected second-signal exit") },
	}
	code := Main(context.Background(), env, args)
	return code, out.String(), errb.String()
}

func TestValidateExitCodes(t *testing.T) {
	cases := []struct {
		file string
		args []string
		code int
		want string
	}{
		{"valid.csv", []string{"--test-mode"}, exitOK, "0 invalid"},
		{"valid.csv", nil, exitFailure, "sandbox test routing number"},
		{"invalid_rows.csv", []string{"--test-mode"}, exitFailure, "line "},
		{"binary.bin", nil, exitFailure, "not a CSV text file"},
		{"unknown_column.csv", nil, exitFailure, "unknown column"},
		{"empty.csv", nil, exitFailure, "empty"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			args := append(append([]string{"validate"}, c.args...), filepath.Join("..", "..", "testdata", "csv", c.file))
			code, out, errOut := runMain(t, nil, args...)
			if code != c.code || !strings.Contains(out+errOut, c.want) {
				t.Fatalf("exit %d (want %d); output:\n%s%s", code, c.code, out, errOut)
			}
			if strings.Contains(out, "1111000016") {
				t.Fatal("validate printed a full account number")
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	if code, _, _ := runMain(t, nil, "frobnicate"); code != exitUsage {
		t.Fatalf("unknown command: exit %d", code)
	}
	if code, _, _ := runMain(t, nil, "validate"); code != exitUsage {
		t.Fatalf("validate without a file: exit %d", code)
	}
	if code, _, _ := runMain(t, nil, "submit", "--no-such-flag"); code != exitUsage {
		t.Fatalf("bad flag: exit %d", code)
	}
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, fmt.Sprintf("state_dir: %s\napi: {base_url: http://127.0.0.1:1, rte: 5}\n", dir))
	code, _, errOut := runMain(t, map[string]string{"BATCHD_API_KEY": "sk_test_x1234567890"}, "status", "--config", cfg)
	if code != exitFailure || !strings.Contains(errOut, "api.rte") || !strings.Contains(errOut, "line 2") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	cfg = writeConfig(t, dir, fmt.Sprintf("state_dir: %s\napi: {base_url: http://127.0.0.1:1, mode: live}\n", dir))
	code, _, errOut = runMain(t, map[string]string{"BATCHD_API_KEY": "sk_test_x1234567890"}, "status", "--config", cfg)
	if code != exitFailure || !strings.Contains(errOut, "api.mode") || strings.Contains(errOut, "sk_test_x1234567890") {
		t.Fatalf("mode/key mismatch: exit %d, stderr %q", code, errOut)
	}
}

func TestIngestRefusesAChangedHostKey(t *testing.T) {
	sshd := testsshd.Start(t)
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		os.MkdirAll(filepath.Join(sshd.Root, d), 0o755)
	}
	os.WriteFile(filepath.Join(sshd.Root, "inbox", "pay.csv"), []byte(paymentFile(2)), 0o644)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
api: {base_url: "http://127.0.0.1:1", mode: test}
sftp: {address: %s, user: %s, identity_file: %s, known_hosts: %s,
       inbox: %s/inbox, archive: %s/archive, failed: %s/failed, outbox: %s/outbox}
ingest: {stable_for: 1s}
`, filepath.Join(dir, "state"), sshd.Addr, sshd.User, sshd.IdentityFile, sshd.WrongHostKnownHosts(t),
		sshd.Root, sshd.Root, sshd.Root, sshd.Root))
	code, _, errOut := runMain(t, map[string]string{"BATCHD_API_KEY": "sk_test_x1234567890"}, "ingest", "--config", cfg)
	if code != exitFailure || !strings.Contains(errOut, "host key mismatch") || !strings.Contains(errOut, "known_hosts") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(sshd.Root, "inbox", "pay.csv")); err != nil {
		t.Fatal("the file moved although the server was not trusted")
	}
}

func TestStatusJSON(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	loadRows(t, stateDir, 3)
	cfg := writeConfig(t, dir, fmt.Sprintf("state_dir: %s\napi: {base_url: http://127.0.0.1:1}\n", stateDir))
	code, out, errOut := runMain(t, map[string]string{"BATCHD_API_KEY": "sk_test_x1234567890"}, "status", "--config", cfg, "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var st struct {
		Batches []struct {
			File    string         `json:"file"`
			ByState map[string]int `json:"by_state"`
		} `json:"batches"`
		Rows map[string]int `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Batches) != 1 || st.Batches[0].File != "chaos.csv" || st.Rows["pending"] != 3 {
		t.Fatalf("status %+v", st)
	}
}
