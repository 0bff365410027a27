package state

import (
	"encoding/binary"
	"fmt"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/state/kv"
)

// Every instance of a shared ledger must hold the key new rows are
// sealed under: one without it could take the lease and then fail on
// every row the others wrote. So the ledger records that key's id (never
// the key), and an instance checks its ring against the record before it
// leads (UseAccountKeys). The record is the newest key of the ring of
// whoever seals: a leader taking over (TakeOver), a leader whose ring
// file gained a key (UseAccountKeys), and SealAccounts once every number
// it can open is under it (Open of a bbolt file, batchd rekey).

// keySealing is the meta record: the id of the key the ledger's new rows
// are sealed under, 4 bytes big-endian. Absent on a ledger never sealed.
var keySealing = []byte("account_key")

// ErrSealingKeyMissing is wrapped by UseAccountKeys's error when the ring
// lacks the key the ledger's rows are sealed under; it also wraps
// acctseal.ErrKeyMissing.
var ErrSealingKeyMissing = fmt.Errorf("%w: this host may not lead", acctseal.ErrKeyMissing)

// SealingKey is the id of the key the ledger's new rows are sealed
// under, 0 when none is recorded (a ledger never sealed).
func (d *DB) SealingKey() (uint32, error) {
	var id uint32
	err := d.view(func(tx kv.Tx) error {
		id = sealingKey(tx)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("read the account key of %s: %w", d.Path(), err)
	}
	return id, nil
}

func sealingKey(tx kv.Tx) uint32 {
	if raw := tx.Bucket(bucketMeta).Get(keySealing); len(raw) == 4 {
		return binary.BigEndian.Uint32(raw)
	}
	return 0
}

// UseAccountKeys makes ring the ledger's key ring from now on, when it
// holds the key the ledger's rows are sealed under; otherwise it returns
// an error wrapping ErrSealingKeyMissing that names the key id and the
// fix, and the ledger keeps its ring. A running batchd calls it with its
// ring file's contents before each try to take or renew the lease, so a
// host given the key may lead, and a key added to the file (batchd
// rekey) seals from then on. leading says this instance holds the lease:
// it then records a new newest key before it seals with it, so that no
// instance without that key takes over.
func (d *DB) UseAccountKeys(ring *acctseal.Ring, leading bool) error {
	id, err := d.SealingKey()
	if err != nil {
		return err
	}
	if err := RingHoldsSealingKey(ring, id); err != nil {
		return fmt.Errorf("%s: %w", d.Path(), err)
	}
	if leading && !ring.Clear() && ring.Newest() != id {
		if err := d.update(func(tx kv.Tx) error { return putSealingKey(tx, ring.Newest()) }); err != nil {
			return fmt.Errorf("record the account key of %s: %w", d.Path(), err)
		}
	}
	d.keys.Store(ring)
	return nil
}

// holdsSealingKey is nil when ring opens what is sealed under key id (0:
// nothing is recorded), else an error with the fix, never a key.
func RingHoldsSealingKey(ring *acctseal.Ring, id uint32) error {
	if id == 0 || ring.Holds(id) {
		return nil
	}
	return fmt.Errorf("%w: the ledger's rows are sealed under account key %d, which this host's key ring lacks; "+
		"fix: copy the key ring file from the host that leads (the same file, mode 0600, at state.account_keys_file on every instance); "+
		"batchd reads it again within lease_ttl/3", ErrSealingKeyMissing, id)
}

// recordSealingKey records the ring's newest key as the one that seals,
// when it is not recorded yet, unless the ring lacks the key recorded
// (all: even then, as after SealAccounts moved every row it can open to
// the newest): rows sealed under it may remain, and the record keeps
// instances without it from leading. A ring in the clear records
// nothing. A ledger whose record is right is only read.
func (d *DB) recordSealingKey(all bool) error {
	ring := d.ring()
	due := func(tx kv.Tx) bool {
		id := sealingKey(tx)
		return !ring.Clear() && id != ring.Newest() && (all || RingHoldsSealingKey(ring, id) == nil)
	}
	var need bool
	if err := d.view(func(tx kv.Tx) error { need = due(tx); return nil }); err != nil || !need {
		return err
	}
	return d.update(func(tx kv.Tx) error {
		if !due(tx) {
			return nil
		}
		return putSealingKey(tx, ring.Newest())
	})
}

func putSealingKey(tx kv.Tx, id uint32) error {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], id)
	if err := tx.Bucket(bucketMeta).Put(keySealing, b[:]); err != nil {
		return fmt.Errorf("record account key %d: %w", id, err)
	}
	return nil
}
