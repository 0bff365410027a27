package payment

import (
	"errors"
	"path"
	"time"
)

// BatchStatus is where an ingested file's batch stands.
type BatchStatus string

// Batch statuses. Only BatchReady batches have rows that submit may send.
const (
	BatchLoading  BatchStatus = "loading"  // rows being written; invisible to submit
	BatchReady    BatchStatus = "ready"    // accepted; its rows are submitted
	BatchRejected BatchStatus = "rejected" // the file was refused; it has no rows
)

// String names the kind for messages and reports.
func (k BatchKind) String() string {
	if k == KindPayments {
		return "payments"
	}
	return string(k)
}

// Batch is one ingested file.
type Batch struct {
	ID      uint64      `json:"id"`
	Kind    BatchKind   `json:"kind,omitempty"`
	File    string      `json:"file"` // the name the file had in the inbox
	SHA256  string      `json:"sha256"`
	Label   string      `json:"label"` // the label given to rows whose CSV had none
	Status  BatchStatus `json:"status"`
	Created time.Time   `json:"created"`
	Note    string      `json:"note,omitempty"` // why a file was rejected

	Rows    int `json:"rows"`    // data rows in the file
	Invalid int `json:"invalid"` // rows that failed validation (not stored)

	Counts map[RowState]int `json:"counts"` // stored rows by state

	ResultsReported time.Time `json:"results_reported,omitzero"`
}

// OutboxName is the name batch b's file goes by in the outbox, where its
// reports are <name>.results.csv and <name>.rejects.csv: the name the file
// was archived under (payroll-1.csv for archive/2026-11-20/payroll-1.csv),
// which ingest chooses so that no other file's reports bear it. f is the
// ledger's record of b's file; without a recorded move (a batch from before
// batchd recorded them) it is b.File.
func (b *Batch) OutboxName(f *File) string {
	if f != nil && f.BatchID == b.ID && f.Moved != "" {
		return path.Base(f.Moved)
	}
	return b.File
}

// FileReader finds the ledger's record of a file by its content. A
// FileLedger has it (and so every Ledger).
type FileReader interface {
	File(sha256 string) (*File, error)
}

// OutboxName is b.OutboxName with the file's record read from files. A
// batch without a content hash (none was recorded) or whose file the
// ledger no longer knows goes by b.File.
func OutboxName(files FileReader, b *Batch) (string, error) {
	if b.SHA256 == "" {
		return b.File, nil
	}
	f, err := files.File(b.SHA256)
	if errors.Is(err, ErrNotFound) {
		return b.File, nil
	}
	if err != nil {
		return "", err
	}
	return b.OutboxName(f), nil
}

// OpenRows counts the batch's rows that have no check yet, held rows
// included: a batch with one is not final (prune keeps it).
func (b *Batch) OpenRows() int { return b.Busy() + b.Counts[Held] }

// Busy counts the rows batchd itself still works on: pending, in flight or
// in doubt. A batch whose other open rows are all held waits for a person,
// not for batchd, so its results report is written (listing them held).
func (b *Batch) Busy() int { return b.Counts[Pending] + b.Counts[InFlight] + b.Counts[InDoubt] }

// File is the ledger's memory of a file's content, by SHA-256, so that the
// same content dropped twice is recognised.
type File struct {
	SHA256   string    `json:"sha256"`
	Name     string    `json:"name"`
	Size     int64     `json:"size"`
	BatchID  uint64    `json:"batch_id"`
	Seen     time.Time `json:"seen"`
	Accepted bool      `json:"accepted"`
	// Moved is the remote path the file was moved to (archive or failed).
	// Ingest records it just before the move, so that a run that stopped
	// (or whose move failed) finishes the move under the same name; empty
	// while the file still sits in the inbox, which after a crash tells
	// ingest to finish the move rather than call the file a duplicate. Its
	// base name is the file's name in the outbox (Batch.OutboxName).
	Moved string `json:"moved,omitempty"`
}

// FileMeta describes a downloaded file about to be ingested.
type FileMeta struct {
	Kind   BatchKind
	Name   string
	SHA256 string
	Size   int64
}
