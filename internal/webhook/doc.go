// Package webhook receives the service's webhook deliveries: it decodes a
// delivery into an Event and hands it to a Store over HTTP, answering the
// service only once the Store has made the event durable.
//
// The service's payloads are not specified (echeck-ach-api.md §6 says
// "payload shape, signature and retry behaviour: not shown"); what is known
// comes from public clients (public-api-notes.md, "Webhook deliveries").
// Decode therefore reads every shape seen so far leniently, and hands the
// body (Raw) to the Store beside the decoded fields; batchd's ledger keeps
// only the decoded record of each event (its name, object, status and
// outcome), not the body, which may hold bank details. The service retries a delivery until it is answered 2xx, so
// the same event can arrive twice: Event.ID is the dedupe key, and the
// Handler answers a duplicate 200 without a second effect.
//
// The package is independent of the ledger: Store is defined here and the
// ledger (internal/state) implements it. It imports only the typed statuses
// of internal/payment and internal/funding.
package webhook
