package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/payment"
	boltkv "github.com/batchd/batchd/internal/state/bolt"
	"github.com/batchd/batchd/internal/state/kv"
)

// maxFaults is how many faults a Report lists; the rest are counted.
const maxFaults = 200

// Fault is one thing wrong with a ledger. Where names the place (the
// file, a bucket, a batch, a row by its key, a check id); What never
// holds a full account number or any other payment detail.
type Fault struct {
	Where string `json:"where"`
	What  string `json:"what"`
}

func (f Fault) String() string { return f.Where + ": " + f.What }

// Report is the result of checking a ledger file.
type Report struct {
	Path string `json:"path"`
	// Via is set when the file checked was a snapshot of a ledger a
	// running batchd holds ("a snapshot served by batchd process N").
	Via        string                   `json:"via,omitempty"`
	Size       int64                    `json:"size"`
	Instance   string                   `json:"instance,omitempty"`
	SnapshotAt time.Time                `json:"snapshot_at,omitzero"` // set when the file is a snapshot
	Restored   *RestoreMark             `json:"restored,omitempty"`
	Batches    int                      `json:"batches"`
	Rows       int                      `json:"rows"`     // payment and funding rows
	ByState    map[payment.RowState]int `json:"by_state"` // of every row, payment and funding
	Checks     int                      `json:"checks"`   // check ids owned by rows
	// SourceRows counts the funding rows among Rows, and Sources the
	// funding source ids they own.
	SourceRows int     `json:"source_rows,omitempty"`
	Sources    int     `json:"sources,omitempty"`
	Faults     []Fault `json:"faults"`
	// More counts the faults found beyond the first maxFaults.
	More int `json:"more_faults,omitempty"`
	// Events counts the webhook events the ledger remembers.
	Events int `json:"events,omitempty"`
	// InClear is the rows that hold a full account number in the clear
	// (written by a build from before numbers were sealed). Not a fault:
	// the next Open seals them (SealAccounts).
	InClear InClear `json:"accounts_in_clear,omitzero"`
	// AccountKey is the id of the key the ledger's new rows are sealed
	// under (sealkey.go), 0 when none is recorded: every host's key ring
	// must hold it (RingHoldsSealingKey).
	AccountKey uint32 `json:"account_key,omitempty"`

	id identity // what the file says of itself, for the marker's check
}

// OK reports whether the check found nothing wrong.
func (r *Report) OK() bool { return len(r.Faults) == 0 }

// Summary is the verdict in one line.
func (r *Report) Summary() string {
	if r.OK() {
		s := fmt.Sprintf("%s: OK: %d batches, %d rows, %d checks", r.Path, r.Batches, r.Rows, r.Checks)
		if r.SourceRows > 0 {
			s += fmt.Sprintf(" (%d funding rows, %d funding sources)", r.SourceRows, r.Sources)
		}
		return s + r.clearNote()
	}
	n := len(r.Faults) + r.More
	s := fmt.Sprintf("%s: DAMAGED: %d fault(s); first: %s", r.Path, n, r.Faults[0])
	return s
}

// InClear counts rows holding an account number in the clear and names
// the first maxFaults of them, never the number.
type InClear struct {
	Rows  int      `json:"rows"`
	First []string `json:"first"`
}

// clearNote is what Summary says of rows holding an account number in
// the clear: how many, the first, and the fix.
func (r *Report) clearNote() string {
	if r.InClear.Rows == 0 {
		return ""
	}
	return fmt.Sprintf("; %d row(s) hold a full account number in the clear (first: %s): opening the ledger with this build seals them",
		r.InClear.Rows, r.InClear.First[0])
}

// clear records that the row at where holds its account number in the
// clear.
func (r *Report) clear(where string) {
	r.InClear.Rows++
	if len(r.InClear.First) < maxFaults {
		r.InClear.First = append(r.InClear.First, where)
	}
}

func (r *Report) add(where, format string, args ...any) {
	if len(r.Faults) >= maxFaults {
		r.More++
		return
	}
	r.Faults = append(r.Faults, Fault{Where: where, What: fmt.Sprintf(format, args...)})
}

// CheckFile checks the ledger (or snapshot) file at path: its header and
// length, bbolt's own consistency check (Tx.Check), and batchd's
// invariants: every row decodes and its state is a legal RowState; the
// open, track and checks indexes agree with the rows; each batch's
// counts agree with its rows; each check id is owned by exactly one row;
// and the same for funding rows and their src_* buckets (funding_check.go),
// each row in the buckets of its batch's kind; and that every webhook
// event record decodes (webhook_events.go).
// Faults are in the report; an error means the file could not be checked
// at all (it does not exist, or a process holds it: ErrLocked). It never
// writes to the file, and never panics on a damaged one.
func CheckFile(path string) (*Report, error) {
	r := &Report{Path: path, ByState: map[payment.RowState]int{}}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	r.Size = fi.Size()
	err = boltkv.Inspect(path, maxFaults, func(what string) { r.add("file", "%s", what) },
		func(tx kv.Tx) error { return r.invariants(tx) })
	if err != nil {
		return nil, err
	}
	return r, nil
}

// CheckLedger checks the ledger in the state directory dir, and its
// marker. When a process holds the ledger, it checks a snapshot that
// process serves (see BackupLedger), written to a temporary file in dir
// and removed after.
func CheckLedger(dir string) (*Report, error) {
	path := filepath.Join(dir, FileName)
	mk, hasMarker, mkErr := boltkv.ReadMarker(dir)
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		r := &Report{Path: path, ByState: map[payment.RowState]int{}}
		switch {
		case mkErr != nil:
			r.add("file", "is missing, and the marker %s cannot be read (%v)", MarkerName, mkErr)
		case hasMarker:
			r.add("file", "is missing, but the marker %s says ledger instance %s was made here", MarkerName, mk.Instance)
		default:
			return nil, fmt.Errorf("%s: %w: the state directory has no ledger (`batchd init` creates one)", path, ErrNoLedger)
		}
		return r, nil
	}
	r, err := CheckFile(path)
	if errors.Is(err, ErrLocked) {
		r, err = checkServed(dir)
	}
	if err != nil || !r.OK() {
		return r, err
	}
	if mkErr != nil {
		hasMarker = false
	}
	id := r.id
	if r.Via != "" {
		id.snapshotAt = time.Time{} // the snapshot checked in its place is stamped; the ledger is not
	}
	if err := acceptInDir(path, mk, hasMarker, false)(id); err != nil {
		msg := strings.TrimPrefix(err.Error(), ErrUnusable.Error()+": "+path+" ")
		if i := strings.Index(msg, ". batchd never starts"); i > 0 {
			msg = msg[:i]
		}
		r.add("file", "%s", msg)
	}
	return r, nil
}

// checkServed checks a snapshot of the ledger that the process holding it
// serves.
func checkServed(dir string) (*Report, error) {
	f, err := os.CreateTemp(dir, ".check-*.db")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	info, err := snapshotOf(dir, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", filepath.Join(dir, FileName), err)
	}
	r, err := CheckFile(f.Name())
	if err != nil {
		return nil, err
	}
	r.Path = filepath.Join(dir, FileName)
	r.Via = fmt.Sprintf("a snapshot taken at %s by %s, which holds the ledger", info.At.Format(time.RFC3339), info.Via)
	return r, nil
}

var requiredBuckets = [][]byte{bucketMeta, bucketFiles, bucketBatches, bucketRows, bucketOpen, bucketTrack, bucketChecks, bucketNumbers, bucketJobs}

// invariants checks batchd's own rules in tx: the meta bucket, batches
// and files, every type of row (rowcheck.go), webhook events and lost
// rows, and each batch's counts against its rows.
func (r *Report) invariants(tx kv.Tx) error {
	missing := false
	for _, name := range requiredBuckets {
		if tx.Bucket(name) == nil {
			r.add("ledger", "the %q bucket is missing", name)
			missing = true
		}
	}
	if missing {
		return nil
	}
	r.meta(tx)
	batches := r.batches(tx.Bucket(bucketBatches))
	r.files(tx.Bucket(bucketFiles))

	tally := map[uint64]map[payment.RowState]int{}
	paymentRows.walk(r, tx, batches, tally)
	r.sourceInvariants(tx, batches, tally)
	r.eventInvariants(tx)
	r.lostInvariants(tx)
	r.lineInvariants(tx)
	for _, id := range slices.Sorted(maps.Keys(batches)) {
		b := batches[id]
		if b.Status == payment.BatchLoading {
			continue // counted at commit; Open discards it
		}
		want := map[payment.RowState]int{}
		for s, n := range b.Counts {
			if n != 0 {
				want[s] = n
			}
		}
		if got := tally[id]; !maps.Equal(want, got) && !(len(want) == 0 && len(got) == 0) {
			r.add(fmt.Sprintf("batch %d", id), "counts %s but its rows are %s", counts(want), counts(got))
		}
	}
	return nil
}

func (r *Report) meta(tx kv.Tx) {
	if id, err := readIdentity(tx); err != nil {
		r.add("meta", "%v", err)
	} else {
		r.id = id
	}
	meta := tx.Bucket(bucketMeta)
	raw := meta.Get(keySchema)
	switch {
	case len(raw) != 8:
		r.add("meta", "has no schema version")
	case binary.BigEndian.Uint64(raw) > SchemaVersion:
		r.add("meta", "schema version %d was written by a newer batchd (this one reads %d)", binary.BigEndian.Uint64(raw), SchemaVersion)
	}
	r.AccountKey = sealingKey(tx)
	if inst := meta.Get(keyInstance); len(inst) == 0 {
		r.add("meta", "has no instance id")
	} else {
		r.Instance = string(inst)
	}
	r.SnapshotAt = r.id.snapshotAt
	if raw := meta.Get(keyRestored); raw != nil {
		m := &RestoreMark{}
		if err := json.Unmarshal(raw, m); err != nil {
			r.add("meta", "the restored mark does not read: %v", err)
		} else {
			r.Restored = m
		}
	}
}

func (r *Report) batches(bb kv.Bucket) map[uint64]*payment.Batch {
	out := map[uint64]*payment.Batch{}
	_ = bb.ForEach(func(k, v []byte) error {
		if len(k) != 8 {
			r.add("batches", "a batch key of %d bytes (want 8)", len(k))
			return nil
		}
		id := binary.BigEndian.Uint64(k)
		b := &payment.Batch{}
		if err := json.Unmarshal(v, b); err != nil {
			r.add(fmt.Sprintf("batch %d", id), "does not decode: %v", err)
			return nil
		}
		if b.ID != id {
			r.add(fmt.Sprintf("batch %d", id), "is stored under id %d but says it is %d", id, b.ID)
		}
		if !b.Kind.Known() {
			r.add(fmt.Sprintf("batch %d", id), "has the unknown kind %q", b.Kind)
		}
		out[id] = b
		return nil
	})
	r.Batches = len(out)
	return out
}

// files checks that every file record decodes. (A record may outlive its
// batch: it is what keeps the same content from being paid again.)
func (r *Report) files(fb kv.Bucket) {
	_ = fb.ForEach(func(k, v []byte) error {
		var f payment.File
		if err := json.Unmarshal(v, &f); err != nil {
			r.add("file record "+string(k), "does not decode: %v", err)
			return nil
		}
		return nil
	})
}

func legal(s payment.RowState) bool {
	switch s {
	case payment.Pending, payment.InFlight, payment.InDoubt, payment.Submitted, payment.Rejected, payment.Held:
		return true
	}
	return false
}

func keyName(k []byte) string {
	if len(k) != 12 {
		return fmt.Sprintf("key %x", k)
	}
	return keyFrom(k).String()
}

func orNone(s payment.Status) string {
	if s == "" {
		return "none"
	}
	return string(s)
}

func counts(m map[payment.RowState]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", s, m[s]))
	}
	return strings.Join(parts, ", ")
}
