// Package onboard links customers' bank accounts as funding sources of the
// ACH API, exactly once, from the rows of funding-source and verification
// files that ingest loaded into the ledger; it then follows the sources up
// (Reconcile) and tells the finance team what became of each row
// (DeliverResults).
//
// It drives funding.Rows through the payment row lifecycle and never sees
// the wire or the store: the ledger is a funding.Ledger (internal/state)
// and the API a funding.Service (internal/ach's FundingService).
//
// # Exactly once without an idempotency key
//
// The ACH API has no idempotency key, so onboarding rests on the rules
// payments rest on (internal/submit):
//
//  1. A row is durably in flight before any request of it leaves
//     (Ledger.SendSource), and a customer created for it is recorded
//     (CustomerFound) before its source is created, so that a lost answer
//     is always looked up under the right customer.
//  2. A create whose answer was lost puts the row in doubt. A row in doubt
//     is never sent again blindly: once Options.ResolveAfter has passed,
//     Resolver.Resolve, the one place that binds a source to a row in
//     doubt, looks it up (funding.Belongs) and releases it to be sent
//     again only when the service certainly holds nothing of it.
//  3. Rows found in flight when a run starts (the previous process died
//     mid-request) are put in doubt before anything else happens.
//
// A processor token carries no account number batchd could recognise a
// source by, so a Processor row records the customer's sources just before
// its token leaves (SourcesBefore): a verified source not among them is
// the row's. That list is only truthful when the customer is known before
// the send, or was created by this very send; a customer that already
// existed at the service (found by email) is therefore learned first, and
// the row is sent again with the list.
//
// # Rows of different customers at once, one customer's in turn
//
// What tells a lost answer's source from the customer's others holds
// only while one row of the customer at a time is unsettled. Rows of
// different customers therefore go out together, each send under a slot
// of the adaptive in-flight limit (internal/inflight, the instance submit
// shares when the daemon runs jobs), taken before the row goes in flight
// as submit takes its slots; rows of one customer go one at a time, in
// batch and line order (sendPending, lanes.go).
//
// A pass lists the pending rows in batch and line order and gives each
// the names under which it shares something with other rows: its
// customer (user:<user_id>, from the row's recorded customer, the file's
// user_id, or the customer an earlier row bound its email to), its email,
// its bank account (the earlier row gets an account two rows name, as
// when rows went one at a time), and for a verification its source and
// the customer of the row that created that source. A row starts only
// when none of its names is held by a row in doubt or in flight, by a
// running row, or by an earlier row still waiting, so one customer's rows
// keep their order; a row in doubt holds its names until it is looked up.
//
// The hard case is a row named by email alone whose email no row has
// bound to a customer yet: its customer is learned only from the service
// (the create of a customer is refused and the lookup by email finds it),
// and may be the customer another row names by user_id. Such a row runs
// its customer step beside the others: creating a customer or finding
// one by email creates no source, and a lost answer there is resolved by
// email without touching the customer's sources. A customer created by
// that step is new, so no other row can name it, and the row goes on to
// its source in the same send. A customer found by email may be another
// row's, so the row is released (as before) and sent back to the pass,
// which sends it again in that customer's turn. Meanwhile every later row
// named by user_id waits until each earlier such row has learned its
// customer, so the customer's rows still go in line order (except after
// a row that waits on a row of its email in doubt: it cannot learn its
// customer before that row's lookup, and later rows are not held for it,
// as when rows went one at a time). Two rows of
// different emails are never one customer (email is a customer's
// identity), so email-only rows never wait for each other's customer
// steps. A customer is still created once per email: rows of one email
// share its name, and the first one's customer is in the run's map
// before the next starts.
//
// The run's state (counts, rows given up on, the customers map) is kept
// under a mutex, and one goroutine, sendPending's, plans the pass: the
// workers report back when a row's send ends. Lookups (resolveDue) and
// the micro-deposit sweep (initiateLeft) run between passes, with nothing
// in flight.
//
// # Honest outcomes
//
// A refused key or a ledger that cannot be written stops a run at once
// with that error. A run that ends with work it could not do (rows left
// pending after their attempts, rows still in doubt, micro-deposits not
// initiated) returns an error wrapping ErrIncomplete that says what is
// left; the next run continues.
package onboard
