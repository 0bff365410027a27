package state

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// The ledger's projection (kv.Projection): the records people ask about
// (files, batches, payment rows, check owners, payees, webhook events) as
// typed columns, which a store that people query with SQL (PostgreSQL)
// keeps in tables beside its keys, written in the same transaction. The
// decoding is the ledger's own (codec.go, the JSON of batches and files),
// so a table says what the rules read. Nothing sealed and no full
// account number is ever a column: a row shows only the last four digits
// it keeps once final (payment.Payment.AccountLast4), or of a number
// stored in the clear by a ledger that predates sealing.
//
// The tables' DDL, keys and views are the store's migration
// (internal/state/postgres/tables); docs/ops-sql.md describes them.

// Projection is the ledger's projection, for a store that keeps tables.
func Projection() kv.Projection { return projection{} }

type projection struct{}

// projected are the tables, in the order a backfill writes them.
var projected = []kv.Table{
	{Name: "batchd_files", Bucket: string(bucketFiles),
		Columns: []string{"sha256", "name", "size_bytes", "batch_id", "seen_at", "accepted", "moved_to"}},
	{Name: "batchd_batches", Bucket: string(bucketBatches),
		Columns: []string{"id", "kind", "file_name", "sha256", "label", "status", "created_at", "note", "rows_in_file", "invalid_rows", "results_reported_at"}},
	{Name: "batchd_rows", Bucket: string(bucketRows),
		Columns: []string{"batch_id", "line", "state", "label", "number", "amount_cents", "account_last4", "check_id", "check_status",
			"check_date", "attempts", "sent_at", "heard_at", "error", "created_at", "updated_at"}},
	{Name: "batchd_checks", Bucket: string(bucketChecks), Columns: []string{"check_id", "batch_id", "line"}},
	{Name: "batchd_payees", Bucket: string(bucketPayees),
		Columns: []string{"payee", "account_last4", "account_length", "paid_batch_id", "paid_line", "paid_at"}},
	{Name: "batchd_hook_events", Bucket: string(bucketHookEvents),
		Columns: []string{"id", "received_at", "name", "kind", "check_id", "source_id", "status", "at", "outcome"}},
}

func (projection) Tables() []kv.Table { return projected }

// Project decodes one record into its table's columns.
func (projection) Project(bucket, key, value []byte) ([]any, error) {
	switch string(bucket) {
	case string(bucketFiles):
		return projectFile(value)
	case string(bucketBatches):
		return projectBatch(value)
	case string(bucketRows):
		return projectRow(key, value)
	case string(bucketChecks):
		return projectCheck(key, value)
	case string(bucketPayees):
		return projectPayee(key, value)
	case string(bucketHookEvents):
		return projectEvent(key, value)
	}
	return nil, fmt.Errorf("bucket %q has no table", bucket)
}

func projectFile(v []byte) ([]any, error) {
	var f payment.File
	if err := json.Unmarshal(v, &f); err != nil {
		return nil, fmt.Errorf("decode file: %w", err)
	}
	return []any{f.SHA256, f.Name, f.Size, batchRef(f.BatchID), when(f.Seen), f.Accepted, text(f.Moved)}, nil
}

func projectBatch(v []byte) ([]any, error) {
	var b payment.Batch
	if err := json.Unmarshal(v, &b); err != nil {
		return nil, fmt.Errorf("decode batch: %w", err)
	}
	return []any{b.ID, kindName(b.Kind), b.File, text(b.SHA256), b.Label, string(b.Status), when(b.Created), text(b.Note),
		b.Rows, b.Invalid, when(b.ResultsReported)}, nil
}

// kindName is a batch's kind as a column: "payments" for a payment
// file, whose kind is stored as "".
func kindName(k payment.BatchKind) string {
	if k == payment.KindPayments {
		return "payments"
	}
	return string(k)
}

func projectRow(k, v []byte) ([]any, error) {
	if len(k) != 12 {
		return nil, fmt.Errorf("a row key is 12 bytes, not %d", len(k))
	}
	var r payment.Row
	if err := decodeRowValue(v, &r); err != nil {
		return nil, err
	}
	key := keyFrom(k)
	var first time.Time
	if len(r.History) > 0 {
		first = r.History[0].At
	}
	return []any{key.Batch, key.Line, string(r.State), r.Label, r.Number, int64(r.Payment.Amount), text(last4(&r.Payment)),
		text(r.CheckID), text(string(r.CheckStatus)), day(r.CheckCreated), r.Attempts, when(r.AttemptAt), when(r.HeardAt),
		text(r.Error), when(first), when(lastChange(&r))}, nil
}

// last4 is what a row may show of its account: the digits a final row
// keeps, or the last four of a number stored in the clear; never a
// sealed one's.
func last4(p *payment.Payment) string {
	if p.AccountLast4 != "" {
		return p.AccountLast4
	}
	if a := p.BankAccount; len(a) >= 4 && !acctseal.Sealed(a) {
		return a[len(a)-4:]
	}
	return ""
}

func projectCheck(k, v []byte) ([]any, error) {
	if len(v) != 12 {
		return nil, fmt.Errorf("a check's owner is a 12-byte row key, not %d bytes", len(v))
	}
	owner := keyFrom(v)
	return []any{string(k), owner.Batch, owner.Line}, nil
}

func projectPayee(k, v []byte) ([]any, error) {
	var a payment.PayeeAccount
	if err := json.Unmarshal(v, &a); err != nil {
		return nil, fmt.Errorf("decode payee: %w", err)
	}
	return []any{string(k), text(a.Last4), a.Length, batchRef(a.Row.Batch), lineRef(a.Row), when(a.At)}, nil
}

func projectEvent(k, v []byte) ([]any, error) {
	var e EventRecord
	if err := json.Unmarshal(v, &e); err != nil {
		return nil, fmt.Errorf("decode webhook event: %w", err)
	}
	return []any{string(k), when(e.Received), e.Name, string(e.Kind), text(e.CheckID), text(e.SourceID), text(e.Status),
		when(e.At), string(e.Outcome)}, nil
}

// text, when, day, batchRef and lineRef are a column's value: NULL (nil)
// for what the record does not have, so that SQL's IS NULL asks it.
func text(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func when(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// day is the service's date of a check: its day in UTC.
func day(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.DateOnly)
}

func batchRef(id uint64) any {
	if id == 0 {
		return nil
	}
	return id
}

func lineRef(k payment.RowKey) any {
	if k.Batch == 0 {
		return nil
	}
	return k.Line
}
