package state

import (
	"context"
	"fmt"
	"time"
)

// Leadership elects the one instance that runs scheduled jobs on a
// ledger. On a shared ledger (PostgreSQL) it is a lease row carrying an
// epoch that rises with every change of leader, and every write the
// rules make checks that epoch (fencing: see kv.ErrFenced), so an
// instance that lost its lease records nothing after another took over.
// On a file (bbolt) the file lock already keeps every other process out:
// the one that opened it always leads, at epoch 1.
type Leadership interface {
	// Lead takes the lease, or renews it when this instance holds it,
	// for ttl, and says who leads now. An instance that held the lease
	// and finds another's (it was paused past its lease) learns here
	// that it lost it.
	Lead(ctx context.Context, ttl time.Duration) (LeaderInfo, error)
	// Leader says who leads, without taking or renewing anything.
	Leader(ctx context.Context) (LeaderInfo, error)
	// Resign gives the lease up when this instance holds it, so that a
	// standby takes over at once instead of after the lease runs out.
	Resign(ctx context.Context) error
}

// LeaderInfo is the lease as one instance sees it.
type LeaderInfo struct {
	Holder  string    // the leading instance's name (host and pid), "" when none
	Epoch   uint64    // rises with every change of leader
	Expires time.Time // when the lease runs out unless renewed (the database's clock)
	Self    bool      // this instance leads
	// Shared says the leadership is a lease on a ledger several
	// instances share; false for a file, which its process leads alone.
	Shared bool
}

// String says it in one line, for /healthz and logs.
func (l LeaderInfo) String() string {
	switch {
	case l.Holder == "":
		return "no leader"
	case l.Self:
		return fmt.Sprintf("leader (epoch %d)", l.Epoch)
	default:
		return fmt.Sprintf("standby; %s leads (epoch %d, lease until %s)", l.Holder, l.Epoch, l.Expires.UTC().Format(time.RFC3339))
	}
}

// Elector is what a shared store offers to elect a leader: the lease row
// and its epoch, for holder (this instance's name). internal/state/postgres
// implements it.
type Elector interface {
	TryLead(ctx context.Context, holder string, ttl time.Duration) (LeaderInfo, error)
	Leader(ctx context.Context) (LeaderInfo, error)
	Resign(ctx context.Context) error
}

// fileLeader is a file ledger's leadership: the process that holds the
// file lock leads, always.
type fileLeader struct{ holder string }

func (f fileLeader) info() LeaderInfo { return LeaderInfo{Holder: f.holder, Epoch: 1, Self: true} }

func (f fileLeader) TryLead(context.Context, string, time.Duration) (LeaderInfo, error) {
	return f.info(), nil
}
func (f fileLeader) Leader(context.Context) (LeaderInfo, error) { return f.info(), nil }
func (f fileLeader) Resign(context.Context) error               { return nil }

// Lead implements Leadership. A standby also raises its watermark to
// the ledger's write count here (watermark.go), so that it can tell, when
// it takes over, whether the database went back in time since.
func (d *DB) Lead(ctx context.Context, ttl time.Duration) (LeaderInfo, error) {
	li, err := d.elector.TryLead(ctx, d.holder, ttl)
	if err != nil {
		return LeaderInfo{}, fmt.Errorf("take the leader lease of %s: %w", d.Path(), err)
	}
	if !li.Self {
		if err := d.Refresh(); err != nil {
			return li, fmt.Errorf("read the write count of %s: %w", d.Path(), err)
		}
	}
	return li, nil
}

// Leader implements Leadership.
func (d *DB) Leader(ctx context.Context) (LeaderInfo, error) {
	li, err := d.elector.Leader(ctx)
	if err != nil {
		return LeaderInfo{}, fmt.Errorf("read the leader lease of %s: %w", d.Path(), err)
	}
	return li, nil
}

// Resign implements Leadership.
func (d *DB) Resign(ctx context.Context) error {
	if err := d.elector.Resign(ctx); err != nil {
		return fmt.Errorf("resign the leader lease of %s: %w", d.Path(), err)
	}
	return nil
}

var _ Leadership = (*DB)(nil)
