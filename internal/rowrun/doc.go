// Package rowrun holds what every kind of row that calls the service does
// the same way around one request: the send-by gate that keeps a create
// from leaving after its deadline, the state of one run (why it halted,
// what it left undone, the rows it gave up on, the tries per row), and the
// reading of a failed request as one of four outcomes.
//
// It exists so that submit (payments) and onboard (funding sources) keep
// one copy of the rules exactly-once rests on: a lost answer puts the row
// in doubt and never releases it, a request not acted on may be retried, a
// refusal rejects the row, a refused key stops the run. Each kind keeps
// its own rows and ledger calls and hands them in as actions.
package rowrun
