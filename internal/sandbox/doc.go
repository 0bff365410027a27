// Package sandbox emulates the test mode of the eCheck API (paths under
// /v1/) in memory, so that batchd can be exercised end to end without the
// real service.
//
// A Server is an http.Handler. It keeps each API key's checks, tokens and
// payment links apart, validates requests by the limits of the service
// specification, answers in the shapes public clients of the real service
// show, and reproduces the sandbox test fixtures (routing 999900001 with
// accounts 1111000001 to 1111000022). It can also misbehave on purpose:
// latency, a per-key rate limit, injected 500/503 answers, and creates whose
// answer is lost although the check was stored. Faults are drawn from a
// seeded generator so that a run can be repeated.
//
// Endpoints outside the real API drive time, settlement and payers, for
// the API key of the request only. They need a valid key but are exempt
// from RateLimit, ErrorRate and DropRate:
//
//	GET  /_sandbox/clock                      {"success":true,"now":"YYYY-MM-DD HH:MM:SS"}
//	POST /_sandbox/clock   {"advance_days":N} moves the key's sandbox clock N days on
//	POST /_sandbox/deposit {"check_ids":[…]}  marks checks deposited
//	POST /_sandbox/paymentlink/pay            a payer completes a payment link
//
// By default the sandbox stores and echoes every value exactly as sent
// (text trimmed of surrounding white space). Options.Quirks makes it
// answer like a less tidy service, as public clients suggest the real one
// is: check numbers without leading zeros, a label filter that matches
// part of a label in any case, float amounts with binary artefacts, paging
// numbers as numbers or strings, accounts masked "1......016", and an
// edit without phone keeping the old phone (quirks.go cites the evidence
// for each).
//
// A check is created in_process and, once it is more than two business days
// old on the key's sandbox clock, moves on to printed, or to failed when its
// fixture risk is Fail. The package never imports the API client, so that
// the client is tested against an independent reading of the specification.
package sandbox
