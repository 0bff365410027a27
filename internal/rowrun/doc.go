// Package rowrun is the one row engine: what every kind of row that calls
// the service does the same way. Run is the run loop (recover rows found
// in flight, look up the rows in doubt that are due, send the pending
// ones, wait on the injected clock for the next lookup); Engine.Send is
// the retried send of one row under a slot of the in-flight limit, with
// its try count and giving up; Engine.Gate and Engine.DropLate keep a
// create from leaving after its send-by deadline; Engine.DueAt says when
// a row in doubt may be looked up; Engine.Failed reads a failed request
// as one of four outcomes and records it; Read retries a lookup's reads;
// DeliverBatch delivers a batch's results report.
//
// It exists so that submit (payments) and onboard (funding sources) keep
// one copy of the rules exactly-once rests on: an intent is recorded
// before a request leaves, a lost answer puts the row in doubt and never
// releases it without a lookup, a request not acted on may be retried, a
// refusal rejects the row, a refused key or a failed ledger write stops
// the run. A kind is a Kind: its ledger rows and the four functions that
// recover, walk, look up and send them; it keeps its own requests,
// lookups and counters.
package rowrun
