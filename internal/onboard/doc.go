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
// Rows are sent one at a time, in batch and line order: onboarding is low
// volume, and rows that share a customer must never race. A row also
// waits while another row of its customer (by user_id or email), or of
// its source for a verification, is in doubt: what tells a lost answer's
// source from the customer's others holds only while one row of the
// customer at a time is unsettled.
//
// # Honest outcomes
//
// A refused key or a ledger that cannot be written stops a run at once
// with that error. A run that ends with work it could not do (rows left
// pending after their attempts, rows still in doubt, micro-deposits not
// initiated) returns an error wrapping ErrIncomplete that says what is
// left; the next run continues.
package onboard
