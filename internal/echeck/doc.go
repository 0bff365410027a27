// Package echeck is batchd's typed client of the eCheck API: the only code
// in batchd that speaks HTTP to the payments service.
//
// Each method sends one request, after waiting on the shared Limiter, and
// never retries. Every error it returns is an *apiwire.Error, the one
// error type of both API clients, whose Class tells the caller what it may
// do next; the distinction that matters most is between
// Retryable (the service did not act) and Ambiguous (a create was sent and
// its answer lost, so the check may exist and must be looked up before it
// is sent again). The client keeps only the endpoints and wire shapes of
// the eCheck API: options, limiter, classes and errors are apiwire's, and
// Service files errors under the domain's failures with apiwire.Domain.
//
// Requests are JSON, with Content-Type: application/json on every request
// and the key as "Authorization: Bearer <key>". Amounts travel as exact
// JSON numbers (money.Cents). Answers are decoded leniently, because the
// spec leaves most of them unshown and public clients show numbers as
// strings and booleans as 0/1: unknown fields are ignored, and only the
// fields batchd acts on (identifiers, amount, label, status, paging) make
// a decoding fail when unreadable.
//
// A 2xx answer whose body says "error": true (or an error message) or
// "success": false is an error: Permanent, since the service said no,
// except for a create whose answer nevertheless carries the created object,
// which is Ambiguous.
//
// Neither the API key nor a bank account number or account token of the
// request appears in an error or a log line, even if the service echoes
// them; account numbers in answers are masked.
package echeck
