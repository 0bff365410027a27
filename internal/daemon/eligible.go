package daemon

import (
	"context"
	"fmt"

	"github.com/batchd/batchd/internal/payment"
)

// An instance may be unable to do a leader's work although the lease is
// free: on a shared ledger, its key ring may lack the key the rows are
// sealed under (state.DB.UseAccountKeys), and as leader it would fail on
// every row. Options.MayLead says so before each try to take or renew
// the lease. An instance that does not lead then never takes the lease:
// it logs why once, reads who leads instead, and /healthz fails with the
// reason and the fix until MayLead allows it again (the operator copied
// the ring), when the next tick takes the lease as usual. A leader is
// never stopped by it: what it needs is already in memory; the failure
// shows in /healthz all the same.

// checkMayLead asks Options.MayLead, notes the answer, and reports
// whether this instance may go on to take or renew the lease.
func (s *Scheduler) checkMayLead(ctx context.Context, leading bool) bool {
	if s.opts.MayLead == nil {
		return true
	}
	err := s.opts.MayLead(leading)
	s.mu.Lock()
	prev := s.role.refused
	s.role.refused = err
	s.mu.Unlock()
	switch {
	case err == nil && prev != nil:
		s.log.Info("this instance may lead again: the reason it could not is gone", "was", prev.Error())
	case err != nil && (prev == nil || prev.Error() != err.Error()):
		what := "this instance does not take the leader lease"
		if leading {
			what = "this instance leads, but another instance could not take over from it"
		}
		s.log.Error(what, "reason", err.Error())
	}
	if err == nil || leading {
		return true
	}
	s.watchLeader(ctx)
	return false
}

// watchLeader reads who leads without taking the lease, for /healthz
// and the "no leader" watch, on an instance MayLead keeps from leading.
func (s *Scheduler) watchLeader(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, s.leadTimeout())
	info, err := s.opts.Leadership.Leader(cctx)
	cancel()
	if err != nil {
		s.leadFailed(err)
		return
	}
	s.mu.Lock()
	s.role.info, s.role.seen, s.role.lastErr = info, true, nil
	if info.Holder != "" && !info.Self {
		s.role.leaderSeen = s.now()
	}
	s.mu.Unlock()
	s.opts.Metrics.SetLeader(false, info.Epoch)
}

// refusedFailureLocked is /healthz's failure while MayLead refuses, nil
// otherwise. s.mu held.
func (s *Scheduler) refusedFailureLocked() *Failure {
	if s.role.refused == nil {
		return nil
	}
	what := "this instance may not lead"
	if s.role.leading {
		what = "this instance leads on as it is, but could not take the lease again"
	}
	return &Failure{Check: "may-lead", Source: string(payment.SourceLedger), Error: fmt.Sprintf("%s: %v", what, s.role.refused)}
}
