package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/payment"
)

// TestSubmitErrorRateOne is issue 9's "the API fails everything" test:
// `batchd submit` against `batchd sandbox --error-rate 1.0` must end with
// exit 1 and say what is left, and a later run against a healthy service
// must finish every row with exactly one check each.
//
// The sandbox has no endpoint to change its fault rate at run time, so the
// healthy service is a second sandbox process, and its check list starts
// empty. That is the failing sandbox's list too: with --error-rate 1.0
// every /v1 request is answered 500 or 503 before it can touch any state
// (sandbox.Server.admit), so no check was made there to be lost.
func TestSubmitErrorRateOne(t *testing.T) {
	const rows, key = 12, "sk_test_errorrate_0123456789abcdef"
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	loadRows(t, stateDir, rows)
	config := func(url string) string {
		return writeConfig(t, dir, fmt.Sprintf(`
state_dir: %s
log: {format: json}
api: {base_url: %s, mode: test, rate: 100, burst: 20, concurrency: 12, timeout: 5s}
submit: {resolve_after: 1s, max_attempts: 3, backoff_max: 200ms}
`, stateDir, url))
	}

	failing := startSandbox(t, "--key", key, "--error-rate", "1.0")
	code, stdout, stderr := submitProcess(t, config(failing), key)
	var plain []string
	for _, line := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if !strings.HasPrefix(line, "{") {
			plain = append(plain, line)
		}
	}
	t.Logf("against --error-rate 1.0: exit %d; stdout: %s; stderr: %s", code, strings.TrimSpace(stdout), strings.Join(plain, " | "))
	// Every create is answered 500 or 503, so every row is in doubt (a
	// create's 5xx may have been carried out) or, had the service said it
	// did nothing, pending; the lookups fail too, so none is settled.
	left := regexp.MustCompile(`(\d+) rows left pending and (\d+) in doubt`)
	var m []string
	if len(plain) == 1 {
		m = left.FindStringSubmatch(plain[0])
	}
	if code != exitFailure || m == nil || !strings.HasPrefix(plain[0], "batchd submit: ") || atoi(m[1])+atoi(m[2]) != rows {
		t.Fatalf("want exit %d and one line \"batchd submit: … P rows left pending and D in doubt …\" with P+D = %d; got exit %d\nstdout:\n%s\nstderr:\n%s",
			exitFailure, rows, code, stdout, lastLines(stderr, 30))
	}
	if !strings.HasPrefix(stdout, "created 0, rejected 0, voided 0, ") {
		t.Fatalf("summary: %s", stdout)
	}

	healthy := startSandbox(t, "--key", key)
	code, stdout, stderr = submitProcess(t, config(healthy), key)
	if code != exitOK {
		t.Fatalf("against a healthy sandbox: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, lastLines(stderr, 30))
	}
	t.Logf("against a healthy sandbox: %s", strings.TrimSpace(stdout))
	assertOneCheckPerRow(t, stateDir, client(t, healthy, key), rows, func(r *payment.Row, ch echeck.Check) bool {
		return ch.Label == r.Label && ch.Number == r.Number && ch.Amount == r.Payment.Amount
	})
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}
