package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// TestRewindStopsJobsUntilTheRestoreRules: a run whose write found the
// ledger's database gone back in time fails with source "rewind"; every
// other run is cancelled at once and none starts; /healthz fails naming
// it; the next renewal of the lease (still this instance's) takes over
// again, whose TakeOver applies the restore rules: the log line gives the
// counts, the counter rises, /healthz keeps the account and is healthy,
// and jobs run again.
func TestRewindStopsJobsUntilTheRestoreRules(t *testing.T) {
	t.Parallel()
	refused := &state.RewindError{Rewind: state.Rewind{Cause: "the database is not the one the ledger last wrote to"}}
	submit := Job{Name: "submit", Spec: yearly, Run: func(context.Context) (string, error) {
		return "", fmt.Errorf("record the intent of row 3: %w", &payment.LedgerError{Op: "write", Path: "postgres db", Err: refused})
	}}
	started, stopped := make(chan struct{}), make(chan error, 1)
	var runs atomic.Int32
	ingest := Job{Name: "ingest", Spec: yearly, Run: func(ctx context.Context) (string, error) {
		if runs.Add(1) > 1 {
			return "ran again", nil
		}
		close(started)
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		return "", ctx.Err()
	}}
	h := newElected(t, []Job{submit, ingest}, self(4), nil)
	if err := h.s.Trigger("ingest"); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := h.s.Trigger("submit"); err != nil {
		t.Fatal(err)
	}
	fin := h.logs.waitFor(t, 1, "job finished", map[string]string{"job": "submit"})[0]
	if fin.attrs["outcome"] != string(OutcomeFailed) || fin.attrs["source"] != sourceRewind {
		t.Errorf("finish line %v: want failed with source rewind", fin)
	}
	select {
	case cause := <-stopped:
		if !errors.Is(cause, ErrLostLeadership) || !strings.Contains(cause.Error(), "went back in time") {
			t.Errorf("the other run's cancellation cause = %v, want the rewind", cause)
		}
	case <-time.After(waitLimit):
		t.Fatal("the other run was not cancelled when the rewind was found")
	}
	if err := h.s.Trigger("submit"); !errors.Is(err, ErrStandby) {
		t.Errorf("Trigger before the restore rules = %v, want it refused", err)
	}
	code, b := h.healthz(t)
	if f := failureOf(b.Failures, "rewind"); code != http.StatusServiceUnavailable || f == nil || !strings.Contains(f.Error, "went back in time") {
		t.Errorf("healthz before the restore rules = %d %+v, want 503 naming the rewind", code, b.Failures)
	}
	if v := h.metric(t, "batchd_ledger_rewinds_total", nil); v != 0 {
		t.Errorf("batchd_ledger_rewinds_total = %v before the restore rules, want 0", v)
	}

	h.lease.mu.Lock()
	h.lease.rewind = &state.Rewind{Cause: "the ledger's write count 443 is below the 887 this instance saw", InDoubt: 396, Writes: 443, Seen: 887, Lost: 444}
	h.lease.mu.Unlock()
	h.lead()
	line := h.logs.waitFor(t, 1, state.LogMessage, nil)[0]
	if line.attrs["rows_put_in_doubt"] != "396" || line.attrs["writes_lost"] != "444" {
		t.Errorf("rewind log line %v: want the rows put in doubt and the writes lost", line)
	}
	if v := h.metric(t, "batchd_ledger_rewinds_total", nil); v != 1 {
		t.Errorf("batchd_ledger_rewinds_total = %v, want 1", v)
	}
	code, b = h.healthz(t)
	if failureOf(b.Failures, "rewind") != nil || b.Rewind == nil || b.Rewind.RowsPutInDoubt != 396 {
		t.Errorf("healthz after the restore rules = %d failures %+v rewind %+v; want the rewind's account and no rewind failure", code, b.Failures, b.Rewind)
	}
	if h.lease.count("takeover") != 2 {
		t.Errorf("takeovers %d, want 2 (the start and after the rewind): events %v", h.lease.count("takeover"), h.lease.list())
	}
	h.logs.waitFor(t, 1, "job finished", map[string]string{"job": "ingest"})
	if err := h.s.Trigger("ingest"); err != nil {
		t.Errorf("Trigger after the restore rules = %v, want jobs running again", err)
	}
	h.logs.waitFor(t, 1, "job finished", map[string]string{"job": "ingest", "summary": "ran again"})
}
