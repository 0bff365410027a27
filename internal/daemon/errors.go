package daemon

import (
	"maps"
	"sync"
	"time"
)

// ErrorRecorder keeps the last error of each external dependency ("sftp",
// "api", "ledger", as payment.SourceOf files errors) for /healthz, so that
// an operator sees why runs fail without reading the log. The jobs record
// into it (jobs.Scheduled). Messages must already be free of secrets and account numbers,
// as every batchd error is. The zero value is not usable; use
// NewErrorRecorder. It is safe for concurrent use.
type ErrorRecorder struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]RecordedError
}

// RecordedError is the last error of one source, and when it was seen.
type RecordedError struct {
	At    time.Time `json:"at"`
	Error string    `json:"error"`
}

// NewErrorRecorder returns an empty recorder. now may be nil (time.Now).
func NewErrorRecorder(now func() time.Time) *ErrorRecorder {
	if now == nil {
		now = time.Now
	}
	return &ErrorRecorder{now: now, m: map[string]RecordedError{}}
}

// Record keeps err as the last error of source; a nil err does nothing,
// so Record(src, err) can wrap every call. The error stays until a newer
// one replaces it or Clear is called.
func (r *ErrorRecorder) Record(source string, err error) {
	if r == nil || err == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[source] = RecordedError{At: r.now(), Error: err.Error()}
}

// Clear forgets the last error of source, e.g. after it works again.
func (r *ErrorRecorder) Clear(source string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, source)
}

// Last returns a copy of the last error of every source.
func (r *ErrorRecorder) Last() map[string]RecordedError {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.m)
}
