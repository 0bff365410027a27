package daemon

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPrevActivation(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	utc := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		spec string
		now  time.Time
		want time.Time
	}{
		{"0 6 * * *", utc("2025-03-10 07:30:00"), utc("2025-03-10 06:00:00")},
		{"0 6 * * *", utc("2025-03-10 05:59:59"), utc("2025-03-09 06:00:00")},
		{"0 6 * * *", utc("2025-03-10 06:00:00"), utc("2025-03-10 06:00:00")}, // at the activation itself
		{"*/15 * * * *", utc("2025-03-10 07:31:10"), utc("2025-03-10 07:30:00")},
		{"0 6 * * 1-5", utc("2025-03-10 05:00:00"), utc("2025-03-07 06:00:00")}, // Monday early: last Friday
		{"@hourly", utc("2025-03-10 07:31:10"), utc("2025-03-10 07:00:00")},
		{"@monthly", utc("2025-03-10 07:31:10"), utc("2025-03-01 00:00:00")},
		{"@yearly", utc("2025-03-10 07:31:10"), utc("2025-01-01 00:00:00")},
		{"0 0 29 2 *", utc("2025-03-10 07:31:10"), utc("2024-02-29 00:00:00")},
		{"* * 1 * *", utc("2025-03-10 07:31:10"), utc("2025-03-01 23:59:00")},
		{"0 0 30 2 *", utc("2025-03-10 07:31:10"), time.Time{}}, // never fires
		{"@every 5m", utc("2025-03-10 07:31:10"), utc("2025-03-10 07:26:10")},
		// 02:30 does not exist on 2025-03-09 in New York (DST starts).
		{"30 2 * * *", time.Date(2025, 3, 9, 12, 0, 0, 0, ny), time.Date(2025, 3, 8, 2, 30, 0, 0, ny)},
		{"0 6 * * *", time.Date(2025, 3, 10, 7, 0, 0, 0, ny), time.Date(2025, 3, 10, 6, 0, 0, 0, ny)},
	}
	p := newParser()
	for _, tt := range tests {
		sched, err := parseSpec(p, tt.spec)
		if err != nil {
			t.Fatalf("parse %q: %v", tt.spec, err)
		}
		if got := prevActivation(sched, tt.now); !got.Equal(tt.want) {
			t.Errorf("prevActivation(%q, %v) = %v, want %v", tt.spec, tt.now, got, tt.want)
		}
	}
}

func TestCatchUpRunsMissedJobOnce(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 10, 7, 30, 0, 0, time.UTC)
	last := map[string]time.Time{
		"reconcile": time.Date(2025, 3, 9, 6, 0, 2, 0, time.UTC), // missed today's 06:00
		"ingest":    now.Add(-time.Minute),                       // recent for "@every 5m"
		// submit: no success recorded yet
	}
	var mu sync.Mutex
	var recorded []string
	ran := make(chan string, 8)
	job := func(name, spec string) Job {
		return Job{Name: name, Spec: spec, Run: func(context.Context) (string, error) {
			ran <- name
			return "", nil
		}}
	}
	logs := newLogSink()
	s := newStarted(t, []Job{job("ingest", "@every 5m"), job("submit", "*/10 * * * *"), job("reconcile", "0 6 * * *")}, Options{
		Logger: logs.logger(),
		Now:    func() time.Time { return now },
		LastSuccess: func(name string) (time.Time, bool) {
			v, ok := last[name]
			return v, ok
		},
		RecordSuccess: func(name string, at time.Time) error {
			mu.Lock()
			defer mu.Unlock()
			recorded = append(recorded, name+"@"+at.Format(time.RFC3339))
			return nil
		},
	})
	// Catch-up decisions are made inside Start, so the jobs that were not
	// caught up are already known not to have started.
	for _, name := range []string{"ingest", "submit"} {
		if h := jobHealth(t, s, name); h.Running || !h.LastStart.IsZero() {
			t.Errorf("%s was started at Start: %+v", name, h)
		}
	}
	if got := recv(t, ran, "catch-up run"); got != "reconcile" {
		t.Fatalf("caught up %q, want reconcile", got)
	}
	why := logs.waitFor(t, 1, "catching up a missed run", map[string]string{"job": "reconcile"})[0].attrs["reason"]
	if !strings.Contains(why, "missed run at 2025-03-10 06:00 UTC") {
		t.Errorf("catch-up reason %q does not name the missed 06:00 run", why)
	}
	logs.waitFor(t, 1, "job finished", map[string]string{"job": "reconcile", "cause": "catch-up", "outcome": "ok"})
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(ran) != 0 {
		t.Errorf("more runs after the catch-up: %v", <-ran)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(recorded) != 1 || recorded[0] != "reconcile@2025-03-10T07:30:00Z" {
		t.Errorf("RecordSuccess calls = %v, want one for reconcile at now", recorded)
	}
	if h := jobHealth(t, s, "ingest"); !h.LastSuccess.Equal(last["ingest"]) {
		t.Errorf("ingest last success in health = %v, want the ledger's %v", h.LastSuccess, last["ingest"])
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"0 6 * * *", "@every 5m", "@hourly", "*/7 1-5 * 2 MON-FRI",
		"CRON_TZ=UTC", "TZ=x 0 0 * * *", "@every 0s", "0 0 31 2 *", "? ? ? ? ?", "1,2,3 * * * *", "5/0 * * * *"} {
		f.Add(s)
	}
	now := time.Date(2025, 3, 10, 7, 30, 0, 0, time.UTC)
	p := newParser()
	f.Fuzz(func(t *testing.T, spec string) {
		sched, err := parseSpec(p, spec)
		if err != nil {
			return
		}
		prev := prevActivation(sched, now)
		if prev.After(now) {
			t.Fatalf("%q: previous activation %v after now", spec, prev)
		}
		if _, every := strings.CutPrefix(strings.TrimSpace(spec), "@every"); every || prev.IsZero() {
			return
		}
		if next := sched.Next(prev); !next.After(now) {
			t.Fatalf("%q: activation %v between the previous one %v and now", spec, next, prev)
		}
	})
}
