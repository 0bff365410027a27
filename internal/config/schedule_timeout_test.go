package config

import (
	"strings"
	"testing"
	"time"
)

func TestScheduleTimeoutsDefault(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(minimal), "batchd.yaml", keyEnv())
	if err != nil {
		t.Fatal(err)
	}
	s := c.Schedule
	for key, got := range map[string]Duration{
		"ingest_timeout": s.IngestTimeout, "submit_timeout": s.SubmitTimeout, "reconcile_timeout": s.ReconcileTimeout,
		"backup_timeout": s.BackupTimeout, "prune_timeout": s.PruneTimeout, "webhook_timeout": s.WebhookTimeout,
	} {
		if got < Duration(time.Minute) {
			t.Errorf("schedule.%s defaults to %s", key, got)
		}
	}
	// Submit's deadline holds a day's file of 100,000 rows at the default rate.
	if full := time.Duration(100_000/c.API.Rate) * time.Second; s.SubmitTimeout.Std() <= full {
		t.Errorf("schedule.submit_timeout %s is shorter than 100,000 rows at %v/s (%s)", s.SubmitTimeout, c.API.Rate, full)
	}
}

func TestScheduleTimeoutsValidated(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ value, want string }{
		{"0s", "got 0s"},
		{"-5m", "got -5m0s"},
		{"10ms", "got 10ms"},
	} {
		_, err := Parse([]byte(minimal+"schedule:\n  ingest_timeout: "+tt.value+"\n"), "batchd.yaml", keyEnv())
		fe := findKey(t, err, "schedule.ingest_timeout")
		if !strings.Contains(fe.Msg, "at least 1s") || !strings.Contains(fe.Msg, tt.want) {
			t.Errorf("%s: finding %q, want the minimum and the value", tt.value, fe.Msg)
		}
	}
	c, err := Parse([]byte(minimal+"schedule:\n  submit_timeout: 12h\n  reconcile_timeout: 2s\n"), "batchd.yaml", keyEnv())
	if err != nil {
		t.Fatal(err)
	}
	if c.Schedule.SubmitTimeout.Std() != 12*time.Hour || c.Schedule.ReconcileTimeout.Std() != 2*time.Second {
		t.Errorf("schedule = %+v", c.Schedule)
	}
}
