// Package ach is batchd's typed client of the ACH API (/ach/v2): customers,
// their funding sources (bank accounts) and how those become verified,
// account availability, direct debits and credits, and the webhook
// registration. It is the eCheck client's sibling (internal/echeck) and
// follows its design, so that the daemon treats both APIs alike.
//
// The contract is docs/ach-wire.md, which fills in what the specification
// leaves unshown. Each method sends one request, after waiting on the
// shared Limiter (the same object the eCheck client waits on, so one 429
// slows every call batchd makes), and never retries. Every error is an
// *apiwire.Error, the eCheck client's type, whose Class tells the caller
// what it may do next. The conditions a caller must tell apart
// (a deprecated micro-deposit flow, an invalid processor token, an
// account bound to another customer, the funding source limit, an
// unknown or foreign customer, a refused key) are sentinels matched with
// errors.Is, decided in one function from status, code and message;
// FundingService files errors under the domain's failures with
// apiwire.Domain, and the conditions under funding's refusals by one
// table (domainKinds).
//
// Answers are decoded leniently, because only part of them is specified
// and public clients read them defensively: unknown fields are ignored,
// numbers may be strings, booleans may be 0/1, identifiers arrive under
// source_id, funding_source_id or id (user_id, customer_id or id for a
// customer), at the top level or inside "funding_source" or "user", and
// a funding source's status is read in any case into a typed Status.
//
// Amounts are integer cents (money.Cents) inside batchd; they travel as a
// decimal string for debits and credits ("25.00", as public clients send)
// and as exact decimal numbers for the micro-deposit amounts of Verify.
//
// Neither the API key nor a processor token ever appears in an error or a
// log line, and an account number appears only masked (redact.Account),
// even when the service echoes it or net/http quotes the URL of an
// /accounts query.
package ach
