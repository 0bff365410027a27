// Package inflight is the adaptive limit on how many API requests batchd
// keeps in flight at once (issue 21). api.concurrency is its ceiling, not
// a tuning knob: the limit itself follows Little's law, so that an
// administrator never has to compute workers from the API's latency.
//
// With a rate budget (the shared throttle.Limiter), the requests needed in
// flight to spend it are rate x time a request holds its slot; the limit
// targets ceil(rate x latency x Headroom), the latency being a moving
// average of what each slot measured minus the time it spent queued on
// the rate limiter (Slot.Queued, Slot.Sent). That time must not count: a
// slot waiting for a token would otherwise raise the target it waits
// under, and the limit would climb to the ceiling. Without a rate the
// target is the ceiling.
//
// The limit starts small (Options.Initial), grows by one per answered
// request (doubling every round trip, as TCP's slow start does, so 600
// creates at 300 ms reach the target within a second), never passes the
// target or the ceiling, and halves, at most once per window of requests,
// when a request is dropped (a 429, a 5xx, a timeout, a transport error).
// Latency growth that is queueing at the service, not the service's
// normal pace, shrinks the limit instead of buying more slots: while the
// recent latency is above LatencyTolerance times the long-run average
// (the gradient rule of Netflix's concurrency-limits), the target is
// computed from the long-run average, so the limit falls back to what
// the rate needs at the service's normal pace; the extra slots the
// slower answers would have bought would only queue there too.
//
// Why not a library: github.com/platinummonkey/go-concurrency-limits, the
// Go port of Netflix's, is not served by the module proxy this project
// builds from, and its limits (Vegas, gradient, AIMD) discover capacity
// from latency alone; batchd knows the capacity it paid for, the rate, and
// needs only the latency to turn it into a number of slots.
package inflight
