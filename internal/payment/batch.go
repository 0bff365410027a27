package payment

import "time"

// BatchStatus is where an ingested file's batch stands.
type BatchStatus string

// Batch statuses. Only BatchReady batches have rows that submit may send.
const (
	BatchLoading  BatchStatus = "loading"  // rows being written; invisible to submit
	BatchReady    BatchStatus = "ready"    // accepted; its rows are submitted
	BatchRejected BatchStatus = "rejected" // the file was refused; it has no rows
)

// Batch is one ingested file.
type Batch struct {
	ID      uint64      `json:"id"`
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

// OpenRows counts the batch's rows that have no check yet.
func (b *Batch) OpenRows() int { return b.Counts[Pending] + b.Counts[InFlight] + b.Counts[InDoubt] }

// File is the ledger's memory of a file's content, by SHA-256, so that the
// same content dropped twice is recognised.
type File struct {
	SHA256   string    `json:"sha256"`
	Name     string    `json:"name"`
	Size     int64     `json:"size"`
	BatchID  uint64    `json:"batch_id"`
	Seen     time.Time `json:"seen"`
	Accepted bool      `json:"accepted"`
	// Moved is the remote path the file was moved to (archive or failed);
	// empty while it still sits in the inbox, which after a crash tells
	// ingest to finish the move rather than call the file a duplicate.
	Moved string `json:"moved,omitempty"`
}

// FileMeta describes a downloaded file about to be ingested.
type FileMeta struct {
	Name   string
	SHA256 string
	Size   int64
}
