package postgres

import (
	"context"
	"time"

	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/state/kv"
)

// OpenLedger opens the ledger kept in the database of dsn: the store
// (Open, with popts) beneath the ledger's rules (state.OpenStore, with
// opts), its leader lease as the ledger's elector. The caller closes the
// ledger, which closes the store.
func OpenLedger(ctx context.Context, dsn string, popts Options, opts state.Options) (*state.DB, error) {
	s, err := Open(ctx, dsn, popts)
	if err != nil {
		return nil, err
	}
	d, err := state.OpenStore(s, s.Elector(), opts)
	if err != nil {
		s.Close()
		return nil, err
	}
	return d, nil
}

// ledgerProjection is the ledger's projection, the Store's by default
// (Options.Projection). This file is the one bridge between the store
// and the ledger's package; the store itself knows only kv.Projection.
func ledgerProjection() kv.Projection { return state.Projection() }

// Elector is the store's leader lease in the ledger's words
// (state.Elector).
func (s *Store) Elector() state.Elector { return elector{s} }

type elector struct{ s *Store }

var _ state.Elector = elector{}

func (e elector) TryLead(ctx context.Context, holder string, ttl time.Duration) (state.LeaderInfo, error) {
	li, err := e.s.TryLead(ctx, holder, ttl)
	return li.state(), err
}

func (e elector) Leader(ctx context.Context) (state.LeaderInfo, error) {
	li, err := e.s.Leader(ctx)
	return li.state(), err
}

func (e elector) Resign(ctx context.Context) error { return e.s.Resign(ctx) }

func (li LeaderInfo) state() state.LeaderInfo {
	return state.LeaderInfo{Holder: li.Holder, Epoch: li.Epoch, Expires: li.Expires, Self: li.Self, Shared: true}
}
