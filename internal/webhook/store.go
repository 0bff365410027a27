package webhook

import "context"

// Store is what the Handler needs of the ledger.
//
// Record makes e durable before it returns nil: the Handler answers the
// service 2xx only after that, and the service stops retrying on a 2xx, so
// an event acknowledged but not yet durable would be lost on a crash.
// Record reports duplicate when an event with the same e.ID was recorded
// before; it must then have no second effect. Any error makes the Handler
// answer 503, so the service delivers the event again later. Record must be
// safe for concurrent use.
type Store interface {
	Record(ctx context.Context, e Event) (duplicate bool, err error)
}
