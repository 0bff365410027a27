package metrics

import "github.com/prometheus/client_golang/prometheus"

// leaderMetrics are the leader election's series. All exist from New at
// 0, so that an alert sees the first change as an increase, and a
// standby reads batchd_leader 0 rather than nothing.
type leaderMetrics struct {
	leader  prometheus.Gauge
	epoch   prometheus.Gauge
	changes prometheus.Counter
	rewinds prometheus.Counter
}

func newLeaderMetrics(f factory) leaderMetrics {
	return leaderMetrics{
		leader: f.gauge("leader",
			"1 while this instance leads (holds the ledger's lease and runs the scheduled jobs), 0 while it is a standby. A file ledger's one instance always leads."),
		epoch: f.gauge("leader_epoch",
			"The lease epoch this instance last read: it rises with every change of leader; 0 until the first read."),
		changes: f.counter("leader_changes_total",
			"Changes of leader this instance has seen since it started: each rise of the lease's epoch, and each time it stopped leading."),
		rewinds: f.counter("ledger_rewinds_total",
			"Times this instance found the shared ledger's database gone back in time (a promotion, a point-in-time recovery, a restored dump, lost writes) and applied the restore rules: every row without a check put in doubt and looked up before any send."),
	}
}

// SetLeader records this instance's role and the lease epoch it read.
func (m *Metrics) SetLeader(leading bool, epoch uint64) {
	if m == nil {
		return
	}
	v := 0.0
	if leading {
		v = 1
	}
	m.leader.leader.Set(v)
	m.leader.epoch.Set(float64(epoch))
}

// LeaderChanged counts one change of leader seen by this instance.
func (m *Metrics) LeaderChanged() {
	if m == nil {
		return
	}
	m.leader.changes.Inc()
}

// LedgerRewound counts one rewind of the ledger's database that this
// instance applied the restore rules for.
func (m *Metrics) LedgerRewound() {
	if m == nil {
		return
	}
	m.leader.rewinds.Inc()
}
