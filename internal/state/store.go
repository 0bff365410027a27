package state

import (
	"fmt"

	boltkv "github.com/batchd/batchd/internal/state/bolt"
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
	keys, _, err := accountKeys(opts, "")
	if err != nil {
		return nil, fmt.Errorf("open state %s: %w", store.Name(), err)
	}
	d := &DB{store: store, path: store.Name(), now: opts.Now, chunk: opts.LoadChunk, sendWindow: opts.SendWindow,
		elector: elector, holder: opts.Holder}
	d.keys.Store(keys)
	// The file's count is the floor every write is compared with
	// (rewind.go), from the first.
	d.mark = &watermark{path: opts.Watermark, now: opts.Now}
	f, _, err := d.mark.read()
	if err != nil {
		return nil, fmt.Errorf("open state %s: this host's watermark cannot be read (%w); if the file is damaged, remove it: "+
			"batchd then starts a new one; a database promoted, recovered or restored is still noticed by its origin, "+
			"a copy rolled back in place only if it lost writes this instance sees from now on", store.Name(), err)
	}
	d.mark.last = f
	if err := boltkv.Guarded(func() error { return d.store.UpdateUnfenced(d.initSchema) }); err != nil {
		return nil, fmt.Errorf("open state %s: %w", d.Path(), err)
	}
	return d, nil
}

// TakeOverReport is what TakeOver did.
type TakeOverReport struct {
	// InDoubt counts the rows an earlier leader left in flight, put in
	// doubt.
	InDoubt int
	// Rewind says how the ledger's database went back in time and how
	// many rows the restore rules put in doubt; nil when it did not.
	Rewind *Rewind
}

// TakeOver is what an instance does when it becomes the leader of a
// shared ledger, before any job runs: it discards the batches an earlier
// leader left half loaded (their files are still in the inbox, and are
// ingested again), and puts the rows it left in flight, payment and
// funding-source rows alike, in doubt, for the resolvers to settle after
// their send-by deadline.
//
// First, when the ledger's database went back in time (rewind.go), it
// applies the restore rules: every row without a check is put in doubt
// and looked up before any send. The scheduler also calls it after a
// write was refused for that reason, once every job has stopped.
func (d *DB) TakeOver() (TakeOverReport, error) {
	var rep TakeOverReport
	rw, err := d.recoverRewind()
	if err != nil {
		return rep, fmt.Errorf("take over %s: %w", d.Path(), err)
	}
	rep.Rewind = rw
	// Another instance may have restored the ledger, and so renamed it,
	// since this one opened it.
	inst, _, err := d.writes()
	if err != nil {
		return rep, fmt.Errorf("take over %s: %w", d.Path(), err)
	}
	d.setInstance(inst)
	if err := d.discardLoading(); err != nil {
		return rep, fmt.Errorf("take over %s: discard half-loaded batches: %w", d.Path(), err)
	}
	n, err := d.RecoverInFlight()
	if err != nil {
		return rep, fmt.Errorf("take over %s: %w", d.Path(), err)
	}
	k, err := d.RecoverSourcesInFlight()
	rep.InDoubt = n + k
	if err != nil {
		return rep, fmt.Errorf("take over %s: %w", d.Path(), err)
	}
	// This leader seals new rows under its ring's newest key: the
	// standbys must hold it before they may lead (sealkey.go).
	if err := d.recordSealingKey(false); err != nil {
		return rep, fmt.Errorf("take over %s: %w", d.Path(), err)
	}
	return rep, nil
}
