package state

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// Loader writes one file's rows in chunks. The batch stays Loading, and so
// invisible to submit, until Commit; a crash before then leaves a Loading
// batch that the next Open discards. A payment batch takes rows by Add, a
// funding-source or verification batch (payment.FileMeta.Kind) by
// AddSource (see funding.go); each refuses the other's rows.
type Loader struct {
	d     *DB
	batch payment.Batch
	meta  payment.FileMeta
	buf   []pendingRow
	src   []pendingSource // a funding batch's rows, written in the caller's goroutine
	n     int
	held  int // rows loaded Held (n counts them too)

	// A full chunk is written by a goroutine of its own while the caller
	// fills the next one, so that parsing goes on during the encoding,
	// the commit and its fsync. At most one chunk is in flight.
	inflight chan error   // the write in flight, nil when none
	spare    []pendingRow // the buffer of the last chunk written, for reuse
}

type pendingRow struct {
	line uint32
	p    payment.Payment
	mark *payment.PayeeMark // nil: none
}

// BeginBatch starts loading a file. It returns ErrDuplicate (wrapped) when
// the same content was already accepted; File tells which file that was.
func (d *DB) BeginBatch(m payment.FileMeta) (payment.Loader, error) {
	return d.beginBatch(m)
}

// BeginSourceBatch starts loading a funding-source or verification file.
func (d *DB) BeginSourceBatch(m payment.FileMeta) (funding.BatchLoader, error) {
	if info, _ := m.Kind.Info(); !info.Funding {
		return nil, fmt.Errorf("begin batch for %s: %w: %s is not a funding kind", m.Name, ErrWrongKind, m.Kind)
	}
	return d.beginBatch(m)
}

func (d *DB) beginBatch(m payment.FileMeta) (*Loader, error) {
	if !m.Kind.Known() {
		return nil, fmt.Errorf("begin batch for %s: %w: unknown batch kind %q", m.Name, ErrWrongKind, m.Kind)
	}
	l := &Loader{d: d, meta: m}
	err := d.update(func(tx kv.Tx) error {
		if raw := tx.Bucket(bucketFiles).Get([]byte(m.SHA256)); raw != nil {
			var f payment.File
			if err := json.Unmarshal(raw, &f); err != nil {
				return fmt.Errorf("decode file %s: %w", m.SHA256, err)
			}
			if f.Accepted {
				return fmt.Errorf("%s: %w", m.Name, payment.ErrDuplicate)
			}
			// A refused file may come back unchanged; it is read (and
			// refused) again rather than called a duplicate.
		}
		b := tx.Bucket(bucketBatches)
		id, err := b.NextSequence()
		if err != nil {
			return err
		}
		// The instance as the ledger says it in this transaction, not as
		// this process read it at open: on a shared ledger another
		// instance may have given it a new one since (MarkRestored).
		inst := string(tx.Bucket(bucketMeta).Get(keyInstance))
		l.batch = payment.Batch{
			ID: id, Kind: m.Kind, File: m.Name, SHA256: m.SHA256, Status: payment.BatchLoading,
			Label:   payment.BatchLabel(inst, id),
			Created: d.now().UTC(), Counts: map[payment.RowState]int{},
		}
		return putBatch(tx, &l.batch)
	})
	if err != nil {
		return nil, fmt.Errorf("begin batch for %s: %w", m.Name, err)
	}
	return l, nil
}

// Batch is the batch being loaded.
func (l *Loader) Batch() payment.Batch { return l.batch }

// Add queues one valid row; it is written with the next chunk. A full
// chunk is written in the background while the caller goes on, so an
// error writing it is returned by a later Add, or by Commit.
func (l *Loader) Add(line int, p payment.Payment) error {
	return l.add(line, p, nil)
}

// AddMarked is Add with the row's payee mark, kept beside the row; a row
// the mark holds is loaded Held, with the change as its error.
func (l *Loader) AddMarked(line int, p payment.Payment, m payment.PayeeMark) error {
	return l.add(line, p, &m)
}

func (l *Loader) add(line int, p payment.Payment, m *payment.PayeeMark) error {
	if !l.batch.Kind.Payments() {
		return fmt.Errorf("batch %d (%s): %w: a %s file takes its rows by AddSource, not as payments",
			l.batch.ID, l.meta.Name, ErrWrongKind, l.batch.Kind)
	}
	l.buf = append(l.buf, pendingRow{uint32(line), p, m})
	if len(l.buf) >= l.d.chunk {
		return l.flushAsync()
	}
	return nil
}

// wait waits for the chunk in flight, if any, and returns its error.
func (l *Loader) wait() error {
	if l.inflight == nil {
		return nil
	}
	err := <-l.inflight
	l.inflight = nil
	return err
}

// flushAsync hands the buffered rows to a writer goroutine, after the
// previous chunk is on disk.
func (l *Loader) flushAsync() error {
	if err := l.wait(); err != nil {
		return err
	}
	chunk := l.buf
	l.buf, l.spare = l.spare[:0], nil
	done := make(chan error, 1)
	l.inflight = done
	go func() {
		err := l.write(chunk)
		clear(chunk) // let the rows' strings go before the buffer is reused
		l.spare = chunk[:0]
		done <- err
	}()
	return nil
}

// flush writes the buffered rows now, after the chunk in flight.
func (l *Loader) flush() error {
	if err := l.wait(); err != nil {
		return err
	}
	err := l.write(l.buf)
	l.buf = l.buf[:0]
	return err
}

// write writes one chunk in one transaction, giving each row its
// identity: the CSV's label and number where given, else the batch label
// and the next number of the ledger's sequence.
func (l *Loader) write(buf []pendingRow) error {
	if len(buf) == 0 {
		return nil
	}
	at := l.d.now().UTC()
	held := 0
	err := l.d.update(func(tx kv.Tx) error {
		rows, open, nums := tx.Bucket(bucketRows), tx.Bucket(bucketOpen), tx.Bucket(bucketNumbers)
		// Keys only grow within a load (batch id, then line): pack pages
		// instead of bbolt's half-full default for random inserts. Rows
		// leave room for what they gain on their way to submitted
		// (loadFill); the open index does not grow.
		rows.FillPercent(loadFill)
		open.FillPercent(1.0)
		held = 0 // a retried transaction counts again
		for _, pr := range buf {
			st := payment.Pending
			if pr.mark.Held() {
				st = payment.Held
				held++
			}
			r := payment.Row{Key: payment.RowKey{Batch: l.batch.ID, Line: pr.line}, State: st, Payment: pr.p,
				Label: pr.p.Label, Number: pr.p.Number,
				History: []payment.Step{{At: at, State: st, Note: "ingested"}}}
			if st == payment.Held {
				r.Error = payment.HeldReason(pr.mark.Change, l.meta.Name, int(pr.line))
			}
			if r.Label == "" {
				r.Label = l.batch.Label
			}
			if r.Number == "" {
				n, err := nums.NextSequence()
				if err != nil {
					return err
				}
				r.Number = strconv.FormatUint(n, 10)
			}
			raw, err := paymentRows.encode(l.d.ring(), &r)
			if err != nil {
				return err
			}
			k := keyBytes(r.Key)
			if err := rows.Put(k, raw); err != nil {
				return err
			}
			if err := open.Put(k, []byte(st)); err != nil {
				return err
			}
			if pr.mark != nil {
				if err := putMark(tx, r.Key, pr.mark); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load rows of %s: %w", l.meta.Name, err)
	}
	l.n += len(buf)
	l.held += held
	return nil
}

// Commit writes the remaining rows and makes the batch Ready and the file
// known, in one transaction: from that instant the rows are submitted and
// the content is never ingested again.
func (l *Loader) Commit(rows, invalid int) (payment.Batch, error) {
	if err := l.flush(); err != nil {
		return payment.Batch{}, err
	}
	if err := l.flushSources(); err != nil {
		return payment.Batch{}, err
	}
	l.batch.Status = payment.BatchReady
	l.batch.Rows, l.batch.Invalid = rows, invalid
	l.batch.Counts = map[payment.RowState]int{}
	for st, n := range map[payment.RowState]int{payment.Pending: l.n - l.held, payment.Held: l.held} {
		if n > 0 {
			l.batch.Counts[st] = n
		}
	}
	err := l.d.update(func(tx kv.Tx) error {
		if err := putBatch(tx, &l.batch); err != nil {
			return err
		}
		return putFile(tx, &payment.File{SHA256: l.meta.SHA256, Name: l.meta.Name, Size: l.meta.Size,
			BatchID: l.batch.ID, Seen: l.d.now().UTC(), Accepted: true})
	})
	if err != nil {
		return payment.Batch{}, fmt.Errorf("commit batch %d (%s): %w", l.batch.ID, l.meta.Name, err)
	}
	return l.batch, nil
}

// Reject discards any rows written and records the file as refused, with
// the reason, so the same content is recognised if dropped again.
func (l *Loader) Reject(rows, invalid int, reason string) (payment.Batch, error) {
	_ = l.wait() // the rows are deleted below whether or not it succeeded
	l.buf, l.src = nil, nil
	if err := l.d.deleteRows(l.batch.ID); err != nil {
		return payment.Batch{}, err
	}
	l.batch.Status, l.batch.Note = payment.BatchRejected, reason
	l.batch.Rows, l.batch.Invalid = rows, invalid
	l.batch.Counts = map[payment.RowState]int{}
	err := l.d.update(func(tx kv.Tx) error {
		if err := putBatch(tx, &l.batch); err != nil {
			return err
		}
		return putFile(tx, &payment.File{SHA256: l.meta.SHA256, Name: l.meta.Name, Size: l.meta.Size,
			BatchID: l.batch.ID, Seen: l.d.now().UTC()})
	})
	if err != nil {
		return payment.Batch{}, fmt.Errorf("reject batch %d (%s): %w", l.batch.ID, l.meta.Name, err)
	}
	return l.batch, nil
}

// Abort discards the batch and any rows written: the file could not be
// read to the end (an I/O error, a cancelled run) and will be read again.
func (l *Loader) Abort() error {
	_ = l.wait()
	l.buf, l.src = nil, nil
	if err := l.d.deleteRows(l.batch.ID); err != nil {
		return err
	}
	err := l.d.update(func(tx kv.Tx) error { return tx.Bucket(bucketBatches).Delete(u64(l.batch.ID)) })
	if err != nil {
		return fmt.Errorf("abort batch %d (%s): %w", l.batch.ID, l.meta.Name, err)
	}
	return nil
}

// deleteRows removes a batch's rows, payment and funding alike, and
// their open index entries, in chunked transactions. It serves batches
// that never committed, whose rows are in no other index.
func (d *DB) deleteRows(batch uint64) error {
	prefix := u64(batch)
	for {
		n := 0
		err := d.update(func(tx kv.Tx) error {
			for _, kind := range [][2][]byte{{bucketRows, bucketOpen}, {bucketSrcRows, bucketSrcOpen}} {
				c := tx.Bucket(kind[0]).Cursor()
				open := tx.Bucket(kind[1])
				for k, _ := c.Seek(prefix); k != nil && hasPrefix(k, prefix) && n < d.chunk; k, _ = c.Seek(prefix) {
					if err := open.Delete(k); err != nil {
						return err
					}
					if err := deleteMarks(tx, [][]byte{k}); err != nil {
						return err
					}
					if err := c.Delete(); err != nil {
						return err
					}
					n++
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("delete rows of batch %d: %w", batch, err)
		}
		if n == 0 {
			return nil
		}
	}
}

// discardLoading removes batches a crash left half-loaded. Open calls it:
// holding the file lock, no other loader can be running.
func (d *DB) discardLoading() error {
	var ids []uint64
	err := d.view(func(tx kv.Tx) error {
		return tx.Bucket(bucketBatches).ForEach(func(k, v []byte) error {
			var b payment.Batch
			if err := json.Unmarshal(v, &b); err != nil {
				return err
			}
			if b.Status == payment.BatchLoading {
				ids = append(ids, b.ID)
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := d.deleteRows(id); err != nil {
			return err
		}
		if err := d.update(func(tx kv.Tx) error { return tx.Bucket(bucketBatches).Delete(u64(id)) }); err != nil {
			return err
		}
	}
	return nil
}

func putBatch(tx kv.Tx, b *payment.Batch) error {
	raw, err := json.Marshal(b)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketBatches).Put(u64(b.ID), raw)
}

func getBatch(tx kv.Tx, id uint64) (*payment.Batch, error) {
	raw := tx.Bucket(bucketBatches).Get(u64(id))
	if raw == nil {
		return nil, fmt.Errorf("batch %d: %w", id, payment.ErrNotFound)
	}
	b := &payment.Batch{}
	if err := json.Unmarshal(raw, b); err != nil {
		return nil, fmt.Errorf("decode batch %d: %w", id, err)
	}
	if b.Counts == nil {
		b.Counts = map[payment.RowState]int{}
	}
	return b, nil
}

func putFile(tx kv.Tx, f *payment.File) error {
	raw, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketFiles).Put([]byte(f.SHA256), raw)
}

// bumpCounts moves one row from one state's count to another's.
func bumpCounts(tx kv.Tx, id uint64, from, to payment.RowState) error {
	b, err := getBatch(tx, id)
	if err != nil {
		return err
	}
	b.Counts[from]--
	if b.Counts[from] <= 0 {
		delete(b.Counts, from)
	}
	b.Counts[to]++
	return putBatch(tx, b)
}

func hasPrefix(b, prefix []byte) bool {
	return len(b) >= len(prefix) && string(b[:len(prefix)]) == string(prefix)
}
