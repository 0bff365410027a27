package kv

// A Projection lets a store that people query with SQL (PostgreSQL) keep,
// beside its keys, typed tables of the records that matter to people
// (files, batches, rows, checks…), written in the same transaction as
// the keys they come from, so that they never disagree with them. The
// ledger (internal/state) owns the stored forms and so the decoding; a
// store knows only this interface, and no codec. A store that nobody
// queries (bbolt) takes no projection at all.
//
// The keys stay the ledger's record: every rule reads them, never a
// table. A table is a view of one bucket, kept by the store.
type Projection interface {
	// Tables are the typed tables, each fed by one bucket.
	Tables() []Table
	// Project decodes the value of key in bucket (a bucket some Table
	// names) into that table's columns, in Table.Columns' order. A
	// value it cannot decode is an error: the store then fails the
	// transaction that wrote it (naming bucket and key), never skips it,
	// so that a table never silently misses a record.
	Project(bucket, key, value []byte) ([]any, error)
}

// Table is one typed table: the bucket that feeds it and the columns
// Project returns. Every table also has the column kv_key (bytea, unique),
// the record's key in its bucket, which the store fills and by which it
// deletes and compares the table with the keys.
type Table struct {
	Name    string
	Bucket  string
	Columns []string
}
