package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// LeaderInfo is the leader lease as one instance sees it.
type LeaderInfo struct {
	// Holder names the instance holding an unexpired lease; empty when
	// none does.
	Holder string
	// Epoch is the lease's epoch: raised by one at every takeover, never
	// lowered, the fencing token of fenced writes.
	Epoch uint64
	// Expires is when the lease ends, on the database's clock.
	Expires time.Time
	// Self reports that this Store holds the lease.
	Self bool
}

// lease is the leader row and the database's clock, read together.
type lease struct {
	holder  string
	epoch   int64
	expires time.Time
	now     time.Time
}

func (l lease) live() bool { return l.expires.After(l.now) }

// TryLead takes or renews the leader lease for holder, for ttl, in one
// transaction with the lease row locked FOR UPDATE and every time read
// from the database's clock, so instances' clocks never decide. The clock
// is read once the row is locked (clock_timestamp(), not now(), which is
// the transaction's start and may be long before a fenced write released
// the row):
//   - holder holds an unexpired lease at the epoch this Store took: it is
//     renewed for ttl from the database's clock;
//   - the lease is expired (or was never taken): holder takes it with the
//     next epoch, which this Store remembers;
//   - otherwise another instance leads: this Store forgets any epoch it
//     held, so its fenced writes fail from now on.
//
// A restarted instance with the same holder name waits for its old lease
// to expire: it cannot tell its old self is gone.
func (s *Store) TryLead(ctx context.Context, holder string, ttl time.Duration) (LeaderInfo, error) {
	if holder == "" || ttl <= 0 {
		return LeaderInfo{}, fmt.Errorf("%s: try lead: holder and a positive ttl required", s.name)
	}
	var info LeaderInfo
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(pg pgx.Tx) error {
		l, err := readLease(ctx, pg, "FOR UPDATE")
		if err != nil {
			return err
		}
		s.mu.Lock()
		held := s.epoch
		s.mu.Unlock()
		epoch := l.epoch
		switch {
		case l.live() && l.holder == holder && held != 0 && uint64(l.epoch) == held:
			// renew
		case !l.live() || l.holder == "":
			epoch = l.epoch + 1
		default:
			s.forget()
			info = LeaderInfo{Holder: l.holder, Epoch: uint64(l.epoch), Expires: l.expires}
			return nil
		}
		var expires time.Time
		err = pg.QueryRow(ctx, `UPDATE leader SET holder = $1, epoch = $2,
			expires_at = clock_timestamp() + $3 * interval '1 microsecond' WHERE id = 1 RETURNING expires_at`,
			holder, epoch, ttl.Microseconds()).Scan(&expires)
		if err != nil {
			return err
		}
		info = LeaderInfo{Holder: holder, Epoch: uint64(epoch), Expires: expires, Self: true}
		return nil
	})
	if err != nil {
		// The outcome is unknown (the commit may have landed): hold no
		// epoch until a TryLead succeeds.
		s.forget()
		return LeaderInfo{}, fmt.Errorf("%s: try lead as %q: %w", s.Name(), holder, err)
	}
	if info.Self {
		s.mu.Lock()
		s.holder, s.epoch = holder, info.Epoch
		s.mu.Unlock()
	}
	return info, nil
}

func (s *Store) forget() {
	s.mu.Lock()
	s.holder, s.epoch = "", 0
	s.mu.Unlock()
}

// Resign ends this Store's lease at once (expires_at = the database's
// clock), if it still
// holds it, so a standby takes over without waiting for the ttl. The
// Store holds no epoch afterwards.
func (s *Store) Resign(ctx context.Context) error {
	s.mu.Lock()
	holder, epoch := s.holder, s.epoch
	s.holder, s.epoch = "", 0
	s.mu.Unlock()
	if epoch == 0 {
		return nil
	}
	_, err := s.pool.Exec(ctx, `UPDATE leader SET expires_at = clock_timestamp()
		WHERE id = 1 AND holder = $1 AND epoch = $2 AND expires_at > clock_timestamp()`, holder, int64(epoch))
	if err != nil {
		return fmt.Errorf("%s: resign as %q: %w", s.Name(), holder, err)
	}
	return nil
}

// Leader reads who leads. Holder is empty when the lease has expired (the
// epoch is still the last one taken).
func (s *Store) Leader(ctx context.Context) (LeaderInfo, error) {
	l, err := readLease(ctx, s.pool, "")
	if err != nil {
		return LeaderInfo{}, fmt.Errorf("%s: read the leader: %w", s.Name(), err)
	}
	info := LeaderInfo{Epoch: uint64(l.epoch), Expires: l.expires}
	if l.live() {
		info.Holder = l.holder
	}
	s.mu.Lock()
	info.Self = info.Holder != "" && info.Holder == s.holder && info.Epoch == s.epoch
	s.mu.Unlock()
	return info, nil
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func readLease(ctx context.Context, q querier, lock string) (lease, error) {
	var l lease
	// The outer SELECT reads the clock after the inner one has the row
	// (and its lock, when asked for).
	err := q.QueryRow(ctx, "WITH l AS (SELECT holder, epoch, expires_at FROM leader WHERE id = 1 "+lock+
		") SELECT holder, epoch, expires_at, clock_timestamp() FROM l").
		Scan(&l.holder, &l.epoch, &l.expires, &l.now)
	if errors.Is(err, pgx.ErrNoRows) {
		return l, errors.New("the leader row is missing (schema not migrated?)")
	}
	return l, err
}
