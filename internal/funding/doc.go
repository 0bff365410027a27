// Package funding is the domain core of onboarding: linking customers'
// bank accounts as funding sources of the ACH API, in bulk, from files.
//
// It is payment's sibling and follows the same shape. A funding-source
// file's rows are Requests; the ledger keeps each as a Row that moves
// through the same row states and transition table as a payment row
// (payment.Transition: pending, in flight, in doubt, submitted, rejected),
// so that a lost answer is handled the same way: the row is in doubt, and
// it is looked up before it is ever sent again. Belongs is the one rule
// for "this funding source is this row's".
//
// The package defines the interfaces its adapters implement: Ledger
// (internal/state, on bbolt) and Service (internal/ach, over HTTP). The
// onboarding job (internal/onboard) drives rows through them and never
// sees the wire or the store. It imports only payment (row keys, states,
// the ledger's error sentinels) and money.
package funding
