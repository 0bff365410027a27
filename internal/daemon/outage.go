package daemon

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// OutageWatch turns a run's failing calls into a /healthz failure while
// the run goes on: once every call to a dependency ("api", "sftp") has
// failed for FailingAfter with no success in between, Failures names it
// with the cause. A job's failure shows only when its run ends, which a
// run retrying through an outage may not do for many minutes.
//
// An outage is measured from its first failed call to its latest one, not
// to now: one failed call followed by hours without any call is not an
// outage. It ends at the next success, and is no longer reported once no
// call has been made for FailingAfter: batchd then does not know whether
// the dependency is back (a daily job may be the next to call it), and a
// run the outage failed shows as that job's failure. The zero value is not usable; use
// NewOutageWatch. It is safe for concurrent use: the clients' observe
// hooks call Observe from every worker.
type OutageWatch struct {
	after time.Duration
	now   func() time.Time
	mu    sync.Mutex
	m     map[string]*outage
}

// outage is one dependency's unbroken run of failed calls.
type outage struct {
	since, last time.Time // the first and the latest failed call
	cause       string    // the latest failure
}

// NewOutageWatch returns a watch that reports a dependency once its calls
// have all failed for after. now is batchd's clock (nil: time.Now).
func NewOutageWatch(after time.Duration, now func() time.Time) *OutageWatch {
	if now == nil {
		now = time.Now
	}
	return &OutageWatch{after: after, now: now, m: map[string]*outage{}}
}

// Observe records one call to source: a success ends its outage, a
// failure extends it with cause as the latest error. A nil watch does
// nothing.
func (w *OutageWatch) Observe(source string, ok bool, cause string) {
	if w == nil {
		return
	}
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if ok {
		delete(w.m, source)
		return
	}
	o := w.m[source]
	if o == nil {
		o = &outage{since: now}
		w.m[source] = o
	}
	o.last, o.cause = now, cause
}

// Failing is how long every call to source has failed: from the first
// failed call since the last success to the latest one; 0 when its last
// call succeeded, none failed, or none was made for FailingAfter.
func (w *OutageWatch) Failing(source string) time.Duration {
	if w == nil {
		return 0
	}
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if o := w.m[source]; o != nil && w.current(o, now) {
		return o.last.Sub(o.since)
	}
	return 0
}

// current reports whether o's latest failure is recent enough to report.
func (w *OutageWatch) current(o *outage, now time.Time) bool {
	return now.Sub(o.last) <= w.after
}

// Failures are the /healthz failures of the dependencies that have failed
// every call for at least FailingAfter, in source order, each saying how
// long and the latest error.
func (w *OutageWatch) Failures() []Failure {
	if w == nil {
		return nil
	}
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Failure
	for src, o := range w.m {
		d := o.last.Sub(o.since)
		if d < w.after || !w.current(o, now) {
			continue
		}
		out = append(out, Failure{Check: src, Source: src, Since: o.since, At: o.last,
			Error: fmt.Sprintf("the %s has failed every call for %s: %s", sourceTitle(src), d.Round(time.Second), o.cause)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Source < out[j].Source })
	return out
}

// sourceTitle is how a message names a source: "API", "SFTP server".
func sourceTitle(src string) string {
	switch src {
	case "api":
		return "API"
	case "sftp":
		return "SFTP server"
	}
	return src
}

// ObserveHTTP records one request to source as a client's observe hook
// reports it: no answer (status 0) or a 5xx is a failure; any other answer,
// a 429 or a refusal included, shows the service is up.
func (w *OutageWatch) ObserveHTTP(source, endpoint string, status int) {
	switch {
	case status == 0:
		w.Observe(source, false, endpoint+": no answer (connection refused, reset or timed out)")
	case status >= 500:
		w.Observe(source, false, fmt.Sprintf("%s: HTTP %d", endpoint, status))
	default:
		w.Observe(source, true, "")
	}
}
