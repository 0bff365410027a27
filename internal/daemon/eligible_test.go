package daemon

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/batchd/batchd/internal/clocktest"
	"github.com/batchd/batchd/internal/metrics"
)

// leadGate is a MayLead whose answer the test sets.
type leadGate struct {
	mu  sync.Mutex
	err error
}

func (r *leadGate) set(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
}

func (r *leadGate) mayLead(bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// TestMayLeadRefusedNeverTakesTheLease: while MayLead refuses (the key
// ring lacks the ledger's key), the instance never asks for the lease,
// even a free one; it reads who leads instead, logs the reason once,
// and /healthz fails with it. Once MayLead allows, the next tick takes
// the lease and the instance leads.
func TestMayLeadRefusedNeverTakesTheLease(t *testing.T) {
	t.Parallel()
	why := errors.New("its rows are sealed under account key 77, which this host's key ring lacks; fix: copy the key ring file")
	gate := &leadGate{err: why}
	lease := &fakeLease{answer: self(4)} // the lease would be this instance's for the asking
	h := &electedHarness{lease: lease, clock: clocktest.New(t0), logs: newLogSink(), m: metrics.New()}
	h.s = newStarted(t, []Job{recordingJob("ingest", lease)}, Options{Logger: h.logs.logger(), Metrics: h.m, Now: h.clock.Now,
		Leadership: lease, TakeOver: lease.takeOver, LeaseTTL: testTTL, MayLead: gate.mayLead})
	lease.set(other(3), nil)
	for range 3 {
		h.lead()
	}
	if n, m := lease.count("lead"), lease.count("takeover"); n != 0 || m != 0 {
		t.Fatalf("a refused instance asked for the lease %d times, took over %d times: %v", n, m, lease.list())
	}
	if n := len(h.logs.matching("this instance does not take the leader lease", nil)); n != 1 {
		t.Errorf("%d refusal lines after 4 tries, want 1:\n%s", n, h.logs.dump())
	}
	code, b := h.healthz(t)
	if code != http.StatusServiceUnavailable || len(b.Failures) != 1 || b.Failures[0].Check != "may-lead" ||
		!strings.Contains(b.Failures[0].Error, "account key 77") || !strings.Contains(b.Failures[0].Error, "copy the key ring file") {
		t.Fatalf("healthz = %d %+v", code, b.Failures)
	}
	if b.Role == nil || b.Role.Leading || !strings.Contains(b.Role.Text, "b.example:42 leads") {
		t.Errorf("role %+v: want a standby that names the leader", b.Role)
	}

	gate.set(nil)
	lease.set(self(5), nil)
	h.lead()
	if !h.s.Health().Role.Leading || lease.count("takeover") != 1 {
		t.Fatalf("allowed again, the instance does not lead: %v", lease.list())
	}
	if code, b := h.healthz(t); code != http.StatusOK {
		t.Errorf("healthz once allowed = %d %+v", code, b.Failures)
	}
	// A leader is not stopped by a refusal: it holds what it needs.
	gate.set(why)
	h.lead()
	if hl := h.s.Health(); !hl.Role.Leading {
		t.Error("a refusal stopped the leader")
	} else if len(hl.Failures) != 1 || !strings.Contains(hl.Failures[0].Error, "leads on as it is") {
		t.Errorf("a leader's refusal in /healthz: %+v", hl.Failures)
	}
}
