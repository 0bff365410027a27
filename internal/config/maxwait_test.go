package config

import (
	"strings"
	"testing"
	"time"
)

// ingest.max_wait defaults to 0 (2 × stable_for), takes a duration of at
// least stable_for, and is refused, naming the key, the value and the fix,
// when negative or shorter than stable_for.
func TestIngestMaxWait(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(minimal), "batchd.yaml", keyEnv())
	if err != nil {
		t.Fatal(err)
	}
	if c.Ingest.MaxWait != 0 {
		t.Errorf("default ingest.max_wait = %s, want 0s (2 × stable_for)", c.Ingest.MaxWait)
	}
	c, err = Parse([]byte(minimal+"ingest:\n  stable_for: 10s\n  max_wait: 3m\n"), "batchd.yaml", keyEnv())
	if err != nil || c.Ingest.MaxWait.Std() != 3*time.Minute {
		t.Fatalf("max_wait 3m: %v %v", c, err)
	}
	if _, err := Parse([]byte(minimal+"ingest:\n  stable_for: 0s\n  done_marker: true\n  max_wait: 5s\n"), "batchd.yaml", keyEnv()); err != nil {
		t.Errorf("max_wait with a done marker: %v", err)
	}
	for _, tt := range []struct{ yaml, want string }{
		{"ingest:\n  max_wait: -1s\n", "got -1s"},
		{"ingest:\n  stable_for: 30s\n  max_wait: 10s\n", "at least ingest.stable_for (30s)"},
	} {
		_, err := Parse([]byte(minimal+tt.yaml), "batchd.yaml", keyEnv())
		fe := findKey(t, err, "ingest.max_wait")
		if !strings.Contains(fe.Msg, tt.want) || !strings.Contains(fe.Msg, "0s") {
			t.Errorf("%q: finding %q, want %q and the 0s fix", tt.yaml, fe.Msg, tt.want)
		}
	}
}

// The wait must leave an ingest run time within its deadline: a max_wait
// (or 2 × stable_for) as long as schedule.ingest_timeout is refused.
func TestIngestMaxWaitWithinTheRunDeadline(t *testing.T) {
	t.Parallel()
	for _, yaml := range []string{
		"ingest:\n  max_wait: 20m\nschedule:\n  ingest_timeout: 15m\n",
		"ingest:\n  stable_for: 10m\nschedule:\n  ingest_timeout: 15m\n",
	} {
		_, err := Parse([]byte(minimal+yaml), "batchd.yaml", keyEnv())
		fe := findKey(t, err, "ingest.max_wait")
		if !strings.Contains(fe.Msg, "schedule.ingest_timeout (15m0s)") {
			t.Errorf("%q: finding %q", yaml, fe.Msg)
		}
	}
}
