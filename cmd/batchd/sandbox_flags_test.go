package main

import (
	"strings"
	"testing"
	"time"
)

// TestSandboxFlagErrors checks that a bad ACH flag of `batchd sandbox`
// is a usage error naming the flag, before anything is served.
func TestSandboxFlagErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--date", "2026-6-8"}, "--date"},
		{[]string{"--date", "tomorrow"}, "--date"},
		{[]string{"--date", "2026-02-30"}, "--date"},
		{[]string{"--date", "9999-01-01"}, "--date"},
		{[]string{"--max-funding-sources", "0"}, "--max-funding-sources"},
		{[]string{"--max-funding-sources", "x"}, "max-funding-sources"},
	}
	for _, tc := range cases {
		code, _, stderr := runMain(t, nil, append([]string{"sandbox", "--listen", "127.0.0.1:0"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want usage naming %s", tc.args, code, stderr, tc.want)
		}
	}
}

func TestParseStartDate(t *testing.T) {
	if d, err := parseStartDate(""); err != nil || !d.IsZero() {
		t.Fatalf("empty: %v %v", d, err)
	}
	d, err := parseStartDate("2026-06-07")
	if err != nil || !d.Equal(time.Date(2026, 6, 7, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("2026-06-07: %v %v", d, err)
	}
}
