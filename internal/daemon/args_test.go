package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// TestTriggerArgsAndRunNumbers: a manual run's query parameters reach its
// Run (Args), one the job does not take is refused 400 and starts
// nothing, and the run's number in the 202 is the last_run /healthz gives
// once it finished, with its outcome: how `batchd reconcile` waits for
// the daemon's run and exits with its outcome.
func TestTriggerArgsAndRunNumbers(t *testing.T) {
	t.Parallel()
	got := make(chan string, 2)
	job := Job{Name: "reconcile", Spec: yearly, Args: []string{"from", "to"}, Run: func(ctx context.Context) (string, error) {
		got <- Args(ctx).Get("from") + ".." + Args(ctx).Get("to")
		return "window " + Args(ctx).Get("from"), nil
	}}
	s := newStarted(t, []Job{job}, Options{})
	h := s.AdminHandler(AdminOptions{})
	if code, body := do(t, h, "POST", "/v1/jobs/reconcile?from=2026-11-01&days=3", nil); code != http.StatusBadRequest {
		t.Errorf("an argument the job does not take: %d %s, want 400", code, body)
	}
	code, body := do(t, h, "POST", "/v1/jobs/reconcile?from=2026-11-01&to=2026-11-02", nil)
	var started struct{ Run uint64 }
	if err := json.Unmarshal([]byte(body), &started); code != http.StatusAccepted || err != nil || started.Run != 1 {
		t.Fatalf("trigger = %d %s, want 202 with run 1", code, body)
	}
	select {
	case w := <-got:
		if w != "2026-11-01..2026-11-02" {
			t.Errorf("the run's arguments %q", w)
		}
	case <-time.After(waitLimit):
		t.Fatal("the run did not start")
	}
	deadline := time.Now().Add(waitLimit)
	for {
		_, hb := do(t, h, "GET", "/healthz", nil)
		var b healthzBody
		if err := json.Unmarshal([]byte(hb), &b); err != nil {
			t.Fatal(err)
		}
		if j := b.Jobs[0]; j.LastRun == 1 {
			if j.Runs != 1 || j.LastOutcome != OutcomeOK || j.LastSummary != "window 2026-11-01" {
				t.Errorf("healthz job %+v: want run 1 finished ok with its summary", j)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run 1 never finished: %s", hb)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(got) != 0 {
		t.Error("the refused trigger started a run")
	}
}
