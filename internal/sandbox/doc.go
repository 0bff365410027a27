// Package sandbox emulates the test mode of the eCheck API (paths under
// /v1/) and of the ACH API (paths under /ach/v2/) in memory, so that
// batchd can be exercised end to end without the real service.
//
// A Server is an http.Handler. It keeps each API key's checks, tokens and
// payment links apart, validates requests by the limits of the service
// specification, answers in the shapes public clients of the real service
// show, and reproduces the sandbox test fixtures (routing 999900001 with
// accounts 1111000001 to 1111000022). It can also misbehave on purpose:
// latency, a per-key rate limit, injected 500/503 answers with no effect
// (ErrorRate, on every API request), and answers lost after the effect
// (DropRate): the check created, edited or voided, the payment link
// created or deactivated, the account tokenized, the ACH customer or
// funding source stored, although the client never hears so; a bank-info
// read is simply left unanswered. Every such endpoint is marked lossy in
// the route tables and loses its answer through the one wrapper in
// drop.go. Faults are drawn from a seeded generator so that a run can be
// repeated; a rate of 0 draws nothing, and only successful answers draw
// for a drop, so that enabling a fault does not shift what others see.
//
// Endpoints outside the real API drive time, settlement and payers, for
// the API key of the request only. They need a valid key but are exempt
// from RateLimit, ErrorRate and DropRate:
//
//	GET  /_sandbox/clock                      {"success":true,"now":"YYYY-MM-DD HH:MM:SS"}
//	POST /_sandbox/clock   {"advance_days":N} moves the key's sandbox clock N days on
//	POST /_sandbox/clock   {"date":"YYYY-MM-DD"} sets its day, forward or back
//	POST /_sandbox/deposit {"check_ids":[…]}  marks checks deposited
//	POST /_sandbox/paymentlink/pay {"checkout_token":T[,"amount":A,…]}
//	                                          a payer completes a payment link
//
// Payment links: where the specification shows no answer or leaves a name
// out, the sandbox's choices are ASSUMPTIONS, written down with their spec
// sections in docs/sandbox-assumptions.md: the create, list and
// change-status answers; the link list's search parameter, named search
// (memo contains, amount equals, created_at begins with), refused in quirks
// mode so that a client's walk of the whole list is tested; the check
// list's link_id, the checkout_token of the link a check was paid
// through; a paid link staying active, to be paid again; and the pay
// control's defaults (the link's amount and memo, a fixture payer).
//
// Options.Date starts every key's clock on a given day, Options.StartDays
// a fixed number of days ahead of or behind the real clock, and
// Options.Location makes the service's dates (check dates, the list's
// from_date/to_date, the clock's answer) another time zone's, so that
// batchd can be tested against a service whose clock is not its own.
//
// The ACH API answers exactly docs/ach-wire.md, the contract batchd's ACH
// client is written against too (files ach_*.go): customers (/user),
// funding sources linked three ways (micro-deposits, on-demand, a
// processor token), /accounts, direct debits and credits, and the key's
// webhook URL. It shares the key's state, clock, rate limit and faults
// with /v1, but answers authentication failures 403 ("Access key
// invalid", "App inactive" for a Key.Inactive key) and errors in its own
// envelope {"success":false,"error":true,"message",["code"]}. Customers
// and funding sources are indexed across keys, because an account number
// belongs to one customer at a time across the whole service.
// Micro-deposit initiation is 410 from 2026-06-08 on the key's clock.
// Its control endpoints stand in for the bank-linking provider and the
// customer's bank statement:
//
//	POST /ach/v2/_sandbox/processor/token        issues a processor token for an account
//	POST /ach/v2/_sandbox/processor/token/revoke revokes one
//	GET  /ach/v2/_sandbox/funding-source/{id}/micro-deposits  the two deposits
//	GET|POST /ach/v2/_sandbox/clock              the key's clock, as /_sandbox/clock
//
// By default the sandbox stores and echoes every value exactly as sent
// (text trimmed of surrounding white space). Options.Quirks makes it
// answer like a less tidy service, as public clients suggest the real one
// is: check numbers without leading zeros, a label filter that matches
// part of a label in any case, float amounts with binary artefacts, paging
// numbers as numbers or strings, accounts masked "1......016", an edit
// without phone keeping the old phone, and a payment-link list that
// refuses its search parameter (quirks.go cites the evidence for each).
//
// Webhooks (webhook*.go): once a key has registered a URL (POST
// /ach/v2/webhooks), every change of its checks and funding sources is
// POSTed there, as {"event","data","timestamp"} with the key as Bearer
// credential: check.created, check.changed (edit, deposit, the clock's
// moves to printed and failed), check.deleted (a void, data status
// void), funding-source.added, .made-primary, .verified,
// .verification-failed and .deleted. Options.WebhookForm sends check
// events form-encoded. Each key's deliveries go out in order from one
// goroutine, retried with exponential backoff until a 2xx or
// Options.WebhookTries; Options.WebhookMaxFailures failed deliveries in
// a row disable the endpoint until it is registered again. The webhook
// faults (drop, duplicate, reorder) come from a seeded generator of
// their own. Server.WebhooksIdle waits until nothing is left to deliver;
// Server.Close stops delivery and waits for its goroutines.
//
// A check is created in_process and, once it is more than two business days
// old on the key's sandbox clock, moves on to printed, or to failed when its
// fixture risk is Fail. The package never imports the API client, so that
// the client is tested against an independent reading of the specification.
package sandbox
