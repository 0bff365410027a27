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
		{[]string{"--tz", "Mars/Olympus"}, "--tz"},
		{[]string{"--tz", "Local"}, "--tz"},
		{[]string{"--max-funding-sources", "0"}, "--max-funding-sources"},
		{[]string{"--max-funding-sources", "x"}, "max-funding-sources"},
		{[]string{"--webhook-max-failures", "0"}, "--webhook-max-failures"},
		{[]string{"--webhook-drop-rate", "1.5"}, "--webhook-drop-rate"},
		{[]string{"--webhook-dup-rate", "-0.1"}, "--webhook-dup-rate"},
		{[]string{"--webhook-dup-rate", "NaN"}, "--webhook-dup-rate"},
		{[]string{"--webhook-reorder", "maybe"}, "webhook-reorder"},
		{[]string{"--webhook-reorder", "2"}, "webhook-reorder"},
		{[]string{"--webhook-reorder"}, "webhook-reorder"},
	}
	for _, tc := range cases {
		code, _, stderr := runMain(t, nil, append([]string{"sandbox", "--listen", "127.0.0.1:0"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want usage naming %s", tc.args, code, stderr, tc.want)
		}
	}
}

// TestRateFlag checks --webhook-reorder's values: a fraction, true or
// false.
func TestRateFlag(t *testing.T) {
	for in, want := range map[string]float64{"true": 1, "FALSE": 0, "0.25": 0.25, "1": 1, "0": 0} {
		var r rateFlag
		if err := r.Set(in); err != nil || float64(r) != want {
			t.Errorf("Set(%q) = %v, %v; want %v", in, float64(r), err, want)
		}
	}
	for _, in := range []string{"", "yes", "-1", "1.01", "NaN", "Inf"} {
		var r rateFlag
		if err := r.Set(in); err == nil {
			t.Errorf("Set(%q) accepted", in)
		}
	}
}

func TestParseStartDate(t *testing.T) {
	today := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		in    string
		start time.Time
		days  int
	}{
		{"", time.Time{}, 0},
		{"2026-06-07", time.Date(2026, 6, 7, 0, 0, 0, 0, time.UTC), 0},
		{"+3", time.Time{}, 3},
		{"-3", time.Time{}, -3},
		{"+0", time.Time{}, 0},
	}
	for _, tc := range cases {
		if start, days, err := parseStartDate(tc.in, today); err != nil || !start.Equal(tc.start) || days != tc.days {
			t.Errorf("%q: %v %d %v, want %v %d", tc.in, start, days, err, tc.start, tc.days)
		}
	}
	for _, in := range []string{"+", "-x", "+36501", "2126-03-03", "3"} {
		if _, _, err := parseStartDate(in, today); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
}

// The service's today, around which --date is bounded, is the real
// clock's day in the sandbox's time zone: 00:30 UTC is still the day
// before in New York.
func TestServiceToday(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 3, 0, 30, 0, 0, time.UTC)
	if got := serviceToday(at, ny); !got.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("New York: %v", got)
	}
	if got := serviceToday(at, time.UTC); !got.Equal(time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("UTC: %v", got)
	}
}
