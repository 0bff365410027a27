package state

import (
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/state/kv"
)

// OpenStore opens the ledger held by store, with elector its leader lease, a database several batchd
// instances may share (internal/state/postgres). It makes the buckets and
// the schema on a fresh store, as Open does in a fresh directory, in a
// write no lease fences: every instance may open the ledger, and only the
// leader then changes rows.
//
// Unlike Open it discards no half-loaded batch: on a shared store that
// batch may be the live leader's load in progress. A new leader calls
// TakeOver instead. The file-only features (snapshots, compaction, the
// marker) answer ErrUnsupported.
func OpenStore(store kv.Store, elector Elector, opts Options) (*DB, error) {
	if elector == nil {
		return nil, fmt.Errorf("open state %s: a shared store needs its elector (the leader lease)", store.Name())
	}
	opts.defaults()
	d := &DB{store: store, path: store.Name(), now: opts.Now, chunk: opts.LoadChunk, sendWindow: opts.SendWindow,
		elector: elector, holder: opts.Holder}
	if opts.Watermark != "" {
		// The file's count is the floor: opening the ledger writes (the
		// schema's transaction), and that write must not lower the
		// evidence TakeOver compares against.
		d.mark = &watermark{path: opts.Watermark, now: opts.Now}
		f, _, err := d.mark.read()
		if err != nil {
			return nil, fmt.Errorf("open state %s: this host's watermark cannot be read (%w); if the file is damaged, remove it: "+
				"batchd then starts a new one, and cannot tell whether the database went back in time before now", store.Name(), err)
		}
		d.mark.last = f
	}
	if err := guarded(func() error { return d.store.UpdateUnfenced(d.initSchema) }); err != nil {
		return nil, fmt.Errorf("open state %s: %w", d.path, err)
	}
	return d, nil
}

// TakeOver is what an instance does when it becomes the leader of a
// shared ledger, before any job runs: it discards the batches an earlier
// leader left half loaded (their files are still in the inbox, and are
// ingested again), and puts the rows it left in flight, payment and
// funding-source rows alike, in doubt, for the resolvers to settle after
// their send-by deadline. It returns how many rows it put in doubt.
//
// On a shared ledger it first compares the ledger with this instance's
// watermark (watermark.go): a database put back in time gets the restore
// rules before anything else.
func (d *DB) TakeOver() (int, error) {
	back, err := d.wentBack()
	if err != nil {
		return 0, fmt.Errorf("take over %s: read the watermark: %w", d.path, err)
	}
	if back != nil {
		_, n, err := d.writes()
		if err != nil {
			return 0, fmt.Errorf("take over %s: %w", d.path, err)
		}
		from := fmt.Sprintf("the database went back in time: its write count %d is below the %d this instance saw at %s", n, back.Writes, back.At.Format(time.RFC3339))
		if _, err := d.MarkRestored(back.At, from); err != nil {
			return 0, fmt.Errorf("take over %s: %w", d.path, err)
		}
	}
	// Another instance may have restored the ledger, and so renamed it,
	// since this one opened it.
	inst, _, err := d.writes()
	if err != nil {
		return 0, fmt.Errorf("take over %s: %w", d.path, err)
	}
	d.setInstance(inst)
	if err := d.discardLoading(); err != nil {
		return 0, fmt.Errorf("take over %s: discard half-loaded batches: %w", d.path, err)
	}
	n, err := d.RecoverInFlight()
	if err != nil {
		return 0, fmt.Errorf("take over %s: %w", d.path, err)
	}
	k, err := d.RecoverSourcesInFlight()
	if err != nil {
		return n, fmt.Errorf("take over %s: %w", d.path, err)
	}
	return n + k, nil
}
