package ingest

// Result is what became of one file in one run (Outcome.Outcome). The
// jobs count and summarise runs by Accepted and Settled, so that a new
// result cannot be counted one way in the log and another in the
// metrics.
type Result string

// The results of a run, file by file.
const (
	Accepted            Result = "accepted"              // batch committed, file archived
	AcceptedWithRejects Result = "accepted-with-rejects" // valid rows committed, rejects reported
	Recovered           Result = "recovered"             // committed by a run that stopped; archived now
	Rejected            Result = "rejected"              // invalid rows under reject_file: failed
	Unreadable          Result = "unreadable"            // not a payment file: failed
	Empty               Result = "empty"                 // stayed at 0 bytes: failed
	Duplicate           Result = "duplicate"             // content accepted before: failed
	LostBatch           Result = "lost-batch"            // its payments were made for a batch the ledger lost: failed (lost.go)
	TooLarge            Result = "too-large"             // over max_file_bytes: failed
	Waiting             Result = "waiting"               // still arriving, or no .done yet: left for a later run
	Ignored             Result = "ignored"               // not a regular file: left where it is, never read
	Failed              Result = "error"                 // skipped for an error; tried again next run
)

// Accepted reports whether the file's rows are in the ledger and the file
// archived.
func (r Result) Accepted() bool {
	return r == Accepted || r == AcceptedWithRejects || r == Recovered
}

// Settled reports whether the run is done with the file: archived or moved
// to the failed folder, rather than left where it was (Waiting, Ignored)
// or skipped for an error (Failed).
func (r Result) Settled() bool {
	return r != "" && r != Waiting && r != Ignored && r != Failed
}
