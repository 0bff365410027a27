package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/clocktest"
)

func TestOutageWatch(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	w := NewOutageWatch(2*time.Minute, clk.Now)
	w.Observe("api", false, "no response")
	clk.Advance(time.Hour) // one failure, then nothing: not an outage
	if f := w.Failures(); len(f) != 0 {
		t.Fatalf("one failed call an hour ago is reported: %+v", f)
	}
	w.Observe("api", false, "HTTP 503")
	clk.Advance(2*time.Minute + 10*time.Second)
	w.Observe("api", false, "HTTP 502")
	f := w.Failures()
	if len(f) != 1 || f[0].Source != "api" {
		t.Fatalf("failures = %+v, want the api", f)
	}
	// The span runs from the first failure to the latest: an hour and
	// 2m10s, as every call since the first has failed.
	if want := "the API has failed every call for 1h2m10s: HTTP 502"; f[0].Error != want {
		t.Fatalf("error = %q, want %q", f[0].Error, want)
	}
	if got := w.Failing("api"); got != time.Hour+2*time.Minute+10*time.Second {
		t.Fatalf("Failing = %s", got)
	}
	// No call for failing_after: batchd no longer knows, and says nothing
	// (a run the outage failed shows as that job's failure).
	clk.Advance(2*time.Minute + time.Second)
	if f := w.Failures(); len(f) != 0 || w.Failing("api") != 0 {
		t.Fatalf("a stale outage is still reported: %+v, %s", f, w.Failing("api"))
	}
	w.Observe("api", false, "HTTP 502") // the same outage goes on: every call since failed
	if got := w.Failing("api"); got != time.Hour+4*time.Minute+11*time.Second {
		t.Fatalf("Failing after a new failure = %s", got)
	}
	w.Observe("api", true, "")
	if f := w.Failures(); len(f) != 0 || w.Failing("api") != 0 {
		t.Fatalf("a success did not end the outage: %+v", f)
	}
	w.Observe("sftp", false, "dial: refused")
	clk.Advance(time.Minute)
	w.Observe("sftp", false, "dial: refused")
	if f := w.Failures(); len(f) != 0 {
		t.Fatalf("a 1m outage is reported with failing_after 2m: %+v", f)
	}
	clk.Advance(time.Minute)
	w.Observe("sftp", false, "dial: refused")
	if f := w.Failures(); len(f) != 1 || !strings.Contains(f[0].Error, "SFTP server has failed every call for 2m0s") {
		t.Fatalf("failures = %+v", f)
	}
	var nilw *OutageWatch
	nilw.Observe("api", false, "x")
	if nilw.Failures() != nil || nilw.Failing("api") != 0 {
		t.Fatal("a nil watch reports")
	}
}

func TestOutageWatchHTTP(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	w := NewOutageWatch(time.Minute, clk.Now)
	w.ObserveHTTP("api", "check.create", 0)
	clk.Advance(time.Minute)
	w.ObserveHTTP("api", "check.create", 503)
	if f := w.Failures(); len(f) != 1 || f[0].Error != "the API has failed every call for 1m0s: check.create: HTTP 503" {
		t.Fatalf("failures = %+v", f)
	}
	w.ObserveHTTP("api", "check.create", 429) // throttled, but up
	if f := w.Failures(); len(f) != 0 {
		t.Fatalf("a 429 did not end the outage: %+v", f)
	}
}
