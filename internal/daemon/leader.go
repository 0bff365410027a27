package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/state"
)

// Leader election. Several `batchd run` processes may share one ledger
// (PostgreSQL); only the one holding the ledger's lease (state.Leadership)
// runs scheduled jobs, and every write it makes is fenced by the lease's
// epoch. The scheduler keeps the lease: every LeaseTTL/3 it calls Lead,
// which takes a free or run-out lease and renews its own.
//
//   - Becoming leader: TakeOver readies the ledger (half-loaded batches
//     discarded, rows left in flight put in doubt) before any job runs;
//     then missed runs are caught up and the schedules run as usual.
//   - Standby: no job runs. Each scheduled tick is counted in
//     batchd_job_skipped_total{reason="standby"}; the change of role is
//     logged once. The webhook receiver, /healthz and /metrics serve on.
//   - Losing the lease (Lead names another holder, Lead has failed for
//     longer than LeaseTTL since the last renewal so the lease may have
//     run out, or a job's write was fenced): running jobs are cancelled at
//     once (cause ErrLostLeadership) and the instance becomes standby.
//   - An instance Options.MayLead refuses (its key ring lacks the key
//     the ledger seals with) never takes the lease: eligible.go.
//   - Shutdown resigns the lease, so that a standby takes over at once.
//
// A file ledger (bbolt) always answers "this instance leads, epoch 1":
// the file lock already keeps every other process out.

// DefaultLeaseTTL is Options.LeaseTTL when unset (state.lease_ttl's
// default).
const DefaultLeaseTTL = 15 * time.Second

// ErrLostLeadership is the cause (context.Cause) of the cancellation of
// every running job when this instance stops leading.
var ErrLostLeadership = errors.New("this instance lost the leader lease")

// sourceFenced files a run whose write the ledger refused because another
// instance took the lease (kv.ErrFenced), in /healthz and
// batchd_job_failures_total{source}.
const sourceFenced = "fenced"

// role is the scheduler's view of the lease. Guarded by Scheduler.mu.
type role struct {
	leading bool
	info    state.LeaderInfo // the last answer of Lead (or Leader, at Start)
	seen    bool             // info holds an answer
	renewed time.Time        // this instance's last successful renewal
	// leaderSeen is when an answer last named a leader; /healthz fails
	// when it is older than twice the TTL.
	leaderSeen time.Time
	lastErr    error // the last Lead failure, until Lead answers again
	blocked    error // the last TakeOver failure, until one succeeds
	refused    error // why Options.MayLead refused the last time (eligible.go)
	// stepped says this instance stepped down without reading the new
	// term's epoch: the change was counted then, not when it is read.
	stepped bool
	// term is the ctx of the runs of this leadership term, cancelled with
	// ErrLostLeadership when it ends. Without election it is runCtx.
	term    context.Context
	endTerm context.CancelCauseFunc
}

// elected reports whether leader election is on (Options.Leadership).
func (s *Scheduler) elected() bool { return s.opts.Leadership != nil }

// leadingLocked reports whether this instance may run jobs. s.mu held.
func (s *Scheduler) leadingLocked() bool { return !s.elected() || s.role.leading }

// startLeading is Start's part of the election: without one, this
// instance leads and catches up at once; with one, it reads the lease
// (to know the previous holder), takes it if it can, and keeps it in a
// loop of the group until Shutdown.
func (s *Scheduler) startLeading() {
	if !s.elected() {
		s.catchUp()
		return
	}
	s.seedRole(s.auxCtx)
	s.leadOnce(s.auxCtx)
	s.group.Go(func() error {
		t := time.NewTicker(s.opts.LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-s.auxCtx.Done():
				return nil
			case <-t.C:
				s.leadOnce(s.auxCtx)
			}
		}
	})
}

// seedRole reads who leads before this instance first asks for the
// lease, so that a takeover can name the previous holder. A failure is
// only logged: Lead follows at once.
func (s *Scheduler) seedRole(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.leadTimeout())
	defer cancel()
	info, err := s.opts.Leadership.Leader(ctx)
	if err != nil {
		s.log.Warn("read the leader lease", "error", err.Error())
		return
	}
	s.mu.Lock()
	s.role.info, s.role.seen = info, true
	s.mu.Unlock()
	s.opts.Metrics.SetLeader(false, info.Epoch)
}

// leadTimeout bounds one call of Lead or Leader: half the TTL, so that a
// hung database cannot keep the loop from noticing the lease ran out.
func (s *Scheduler) leadTimeout() time.Duration { return s.opts.LeaseTTL / 2 }

// minLeadTimeout is the least time a renewal is given, even when the
// lease may already have run out: the ledger may still renew it.
const minLeadTimeout = 100 * time.Millisecond

// leadOnce takes or renews the lease once and acts on the answer. While
// stopping it only renews a lease held (the runs draining keep their
// fence); it never takes one.
func (s *Scheduler) leadOnce(ctx context.Context) {
	s.mu.Lock()
	skip := s.state != started && !s.role.leading
	leading := s.role.leading
	timeout := s.leadTimeout()
	if s.role.leading {
		// A renewal that hangs must not outlast the lease: it returns
		// when the lease would run out, and this instance steps down.
		timeout = min(timeout, max(s.role.renewed.Add(s.opts.LeaseTTL).Sub(s.now()), minLeadTimeout))
	}
	s.mu.Unlock()
	if skip || !s.checkMayLead(ctx, leading) {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	info, err := s.opts.Leadership.Lead(cctx, s.opts.LeaseTTL)
	cancel()
	if err != nil {
		s.leadFailed(err)
		return
	}
	s.leadAnswered(ctx, info)
}

// leadFailed notes a failed Lead. A leader that has not renewed for
// longer than the TTL steps down: its lease may have run out, and
// another instance may lead by now.
func (s *Scheduler) leadFailed(err error) {
	now := s.now()
	s.mu.Lock()
	first := s.role.lastErr == nil
	s.role.lastErr = err
	renewed, leading := s.role.renewed, s.role.leading
	s.mu.Unlock()
	if first {
		s.log.Warn("leader lease: the ledger did not answer; trying again every lease_ttl/3",
			"error", err.Error(), "lease_ttl", s.opts.LeaseTTL.String())
	}
	if leading && now.Sub(renewed) > s.opts.LeaseTTL {
		s.stepDown(fmt.Sprintf("the lease was not renewed for %s (since %s), longer than lease_ttl %s: it may have run out; last error: %v",
			now.Sub(renewed).Round(time.Second), renewed.Format(time.RFC3339), s.opts.LeaseTTL, err))
	}
}

// leadAnswered acts on Lead's answer: become leader, stay, or step down.
func (s *Scheduler) leadAnswered(ctx context.Context, info state.LeaderInfo) {
	now := s.now()
	s.mu.Lock()
	prev, seen, wasLeading, failed, logged := s.role.info, s.role.seen, s.role.leading, s.role.lastErr, s.standbyLogged
	stepped := s.role.stepped
	s.role.info, s.role.seen, s.role.lastErr, s.role.stepped = info, true, nil, false
	if info.Self {
		s.role.renewed = now
	}
	canLead := s.state == started
	s.mu.Unlock()
	if failed != nil {
		s.log.Info("leader lease: the ledger answers again", "role", info.String())
	}
	newTerm := seen && prev.Epoch != 0 && info.Epoch != prev.Epoch
	if newTerm && info.Self == wasLeading && !stepped {
		// Another instance's term began while this one's role stayed (a
		// standby sees a failover); a change of this instance's role is
		// counted where it happens.
		s.opts.Metrics.LeaderChanged()
	}
	switch {
	case info.Self && !wasLeading && canLead:
		s.becomeLeader(ctx, info, prev, seen)
	case !info.Self && wasLeading:
		s.stepDown(fmt.Sprintf("%s holds the lease now (epoch %d)", info.Holder, info.Epoch))
		s.mu.Lock()
		s.role.stepped = false // the new term's epoch is read: counted once, here
		s.mu.Unlock()
		s.logStandby(info)
	case !info.Self && (!logged || newTerm || prev.Holder != info.Holder):
		s.logStandby(info)
	}
	s.mu.Lock()
	leading := s.role.leading
	if leading || info.Holder != "" && !info.Self {
		// A leader exists that runs the jobs: this one, or another. A
		// lease held here without a takeover is not one.
		s.role.leaderSeen = now
	}
	s.mu.Unlock()
	s.opts.Metrics.SetLeader(leading, info.Epoch)
}

// logStandby says that this instance waits: once per change of role or
// of leader, never per tick.
func (s *Scheduler) logStandby(info state.LeaderInfo) {
	s.mu.Lock()
	s.standbyLogged = true
	s.mu.Unlock()
	s.log.Info("standby: another instance leads; scheduled jobs run there, not here",
		"role", info.String(), "leader", info.Holder, "epoch", info.Epoch,
		"note", "skipped ticks are counted in batchd_job_skipped_total{reason=\"standby\"}, not logged; /healthz, /metrics and the webhook receiver serve on")
	s.updateStatus()
}

// becomeLeader readies the ledger (TakeOver) before any job runs, then
// starts the term and catches up missed runs. A failed TakeOver, or a
// run of an earlier term still winding down, leaves this instance
// standby (it holds the lease but runs nothing); the next tick tries
// again.
func (s *Scheduler) becomeLeader(ctx context.Context, info, prev state.LeaderInfo, seen bool) {
	s.mu.Lock()
	left := s.runningLocked()
	s.mu.Unlock()
	if len(left) > 0 {
		// A run of this instance's previous term, cancelled, has not
		// returned yet: TakeOver must not discard what it is loading.
		s.log.Warn("leader lease taken; waiting for the cancelled runs of the previous term to return before taking over",
			"running", left, "epoch", info.Epoch)
		return
	}
	doubt := 0
	if s.opts.TakeOver != nil {
		rep, err := s.opts.TakeOver()
		s.mu.Lock()
		s.role.blocked = err
		s.mu.Unlock()
		if rep.Rewind != nil {
			s.rewound(rep.Rewind)
		}
		if err != nil {
			s.log.Error("leader lease taken, but the ledger could not be readied for this leader; no job runs until it can (next try in lease_ttl/3)",
				"epoch", info.Epoch, "error", err.Error())
			return
		}
		doubt = rep.InDoubt
		if rep.Rewind != nil {
			doubt += rep.Rewind.InDoubt
		}
		if !s.stillHeld(ctx, info) {
			return
		}
	}
	s.mu.Lock()
	if s.state != started || s.role.leading {
		s.mu.Unlock()
		return
	}
	s.role.leading = true
	s.role.term, s.role.endTerm = context.WithCancelCause(s.runCtx)
	s.mu.Unlock()
	s.opts.Metrics.SetLeader(true, info.Epoch)
	if !seen || prev.Epoch != info.Epoch {
		s.opts.Metrics.LeaderChanged() // a new term; a file ledger's one term is not a change
	}
	previous := "none"
	if seen && prev.Holder != "" && !prev.Self {
		previous = prev.Holder
	}
	// A file ledger's one instance always leads (not Shared): its term
	// is no news, unless it put rows in doubt.
	logf := s.log.Info
	if !info.Shared && doubt == 0 {
		logf = s.log.Debug
	}
	logf(fmt.Sprintf("took over as leader (epoch %d; previous holder %s; %d rows put in doubt)", info.Epoch, previous, doubt),
		"epoch", info.Epoch, "previous_holder", previous, "in_doubt", doubt)
	s.updateStatus()
	s.catchUp()
	for _, name := range s.opts.OnLead {
		if err := s.launch(name, CauseLead); err != nil && !errors.Is(err, ErrRunning) {
			s.log.Warn("a job for the new leader did not start", "job", name, "error", err.Error())
		}
	}
}

// stillHeld renews the lease after TakeOver and reports whether it is
// still this instance's, at the epoch TakeOver ran under. TakeOver may
// wait long on the ledger (a paused former leader's transaction holds
// its lock until the database ends it), and the lease may have run out
// meanwhile: the term starts only under the lease it was readied for;
// otherwise the next tick tries again.
func (s *Scheduler) stillHeld(ctx context.Context, info state.LeaderInfo) bool {
	cctx, cancel := context.WithTimeout(ctx, s.leadTimeout())
	now, err := s.opts.Leadership.Lead(cctx, s.opts.LeaseTTL)
	cancel()
	if err == nil {
		s.mu.Lock()
		s.role.info = now
		if now.Self {
			s.role.renewed = s.now()
		}
		s.mu.Unlock()
	}
	if err == nil && now.Self && now.Epoch == info.Epoch {
		return true
	}
	what := fmt.Sprintf("the lease is now %s", now)
	if err != nil {
		what = err.Error()
	}
	s.log.Warn("leader lease changed while the ledger was readied for this leader; trying again at the next renewal",
		"epoch", info.Epoch, "lease", what)
	return false
}

// stepDown ends this instance's term: running jobs are cancelled at
// once (cause ErrLostLeadership) and no job starts until it leads again.
// It is counted as a change of leader.
func (s *Scheduler) stepDown(reason string) {
	s.mu.Lock()
	if !s.role.leading {
		s.mu.Unlock()
		return
	}
	s.role.leading = false
	s.role.endTerm(fmt.Errorf("%w: %s", ErrLostLeadership, reason))
	s.role.term, s.role.endTerm, s.role.stepped = nil, nil, true
	s.standbyLogged = false
	running := s.runningLocked()
	epoch := s.role.info.Epoch
	s.mu.Unlock()
	s.opts.Metrics.SetLeader(false, epoch)
	s.opts.Metrics.LeaderChanged()
	s.log.Warn("lost leadership: standby now; running jobs cancelled", "reason", reason, "cancelled", running,
		"note", "skipped ticks are counted in batchd_job_skipped_total{reason=\"standby\"}, not logged")
	s.updateStatus()
}

// resign gives the lease up at shutdown, once no run can write, so that a
// standby takes over at once instead of after the lease runs out. Best
// effort: a failure only delays the takeover by one TTL.
func (s *Scheduler) resign() {
	if !s.elected() {
		return
	}
	s.mu.Lock()
	// A lease that never runs out is a file lock (bbolt): no standby
	// waits for it, and the process exit releases it.
	leading := s.role.leading && !s.role.info.Expires.IsZero()
	s.role.leading = false
	if s.role.endTerm != nil {
		s.role.endTerm(ErrStopping)
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.leadTimeout())
	defer cancel()
	if err := s.opts.Leadership.Resign(ctx); err != nil {
		s.log.Warn("resign the leader lease (a standby takes over when it runs out instead)", "error", err.Error())
		return
	}
	s.opts.Metrics.SetLeader(false, s.roleInfo().Epoch)
	if leading {
		s.log.Info("resigned the leader lease, so that a standby takes over at once")
	}
}

func (s *Scheduler) roleInfo() state.LeaderInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.role.info
}

// runningLocked lists the jobs with a run in progress. s.mu held.
func (s *Scheduler) runningLocked() []string {
	var names []string
	for _, name := range s.order {
		if st := s.jobs[name]; st != nil && st.running {
			names = append(names, name)
		}
	}
	return names
}

// roleText is the role in one line, "" without an election.
func (s *Scheduler) roleText() string {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.roleLocked(now); r != nil {
		return r.Text
	}
	return ""
}
