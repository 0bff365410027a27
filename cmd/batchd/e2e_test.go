package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/echeck"
)

// binary is batchd built once for the tests that run it as a process.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "batchd-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "batchd")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build batchd:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startSandbox runs `batchd sandbox` as a process and returns its URL.
func startSandbox(t *testing.T, args ...string) string {
	t.Helper()
	return startSandboxWith(t, &syncBuffer{}, args...)
}

// startSandboxWith is startSandbox writing the sandbox's log to stderr.
func startSandboxWith(t *testing.T, stderr *syncBuffer, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"sandbox", "--listen", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("sandbox log:\n%s", lastLines(stderr.String(), 30))
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("sandbox did not print its URL: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(line)
}

// writeConfig writes a configuration file from YAML text.
func writeConfig(t *testing.T, dir, yaml string) string {
	t.Helper()
	p := filepath.Join(dir, "batchd.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// client returns an API client for assertions against a sandbox.
func client(t *testing.T, url, key string) *echeck.Client {
	t.Helper()
	c, err := echeck.New(apiwire.Options{BaseURL: url, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// allChecks lists every check at the service, retrying throttled pages.
func allChecks(t *testing.T, c *echeck.Client) []echeck.Check {
	t.Helper()
	var out []echeck.Check
	for page, tries := 1, 0; ; {
		p, err := c.ListChecks(context.Background(), echeck.ListParams{Limit: 100, Page: page, Sort: "date", Direction: "ASC"})
		if err != nil {
			var apiErr *apiwire.Error
			if errors.As(err, &apiErr) && apiErr.Class == apiwire.Retryable && tries < 50 {
				tries++
				time.Sleep(max(apiErr.RetryAfter, 50*time.Millisecond)) // as the service asked
				continue
			}
			t.Fatal(err)
		}
		out = append(out, p.Checks...)
		if page >= p.LastPage || len(p.Checks) == 0 {
			return out
		}
		page++
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
