package sandbox

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/batchd/batchd/internal/redact"
)

// preloadBody reads the request body (up to limit bytes) into memory
// before Latency is applied. net/http notices a client that hangs up only
// once the body has been read to its end, so without this a cancelled POST
// would sit out the whole latency. A body over the limit keeps its
// *http.MaxBytesError for readBody to report as 400.
func preloadBody(w http.ResponseWriter, r *http.Request, limit int64) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	hint := int64(512)
	if n := r.ContentLength; n > 0 && n <= limit {
		hint = n + 1 // room to see EOF without growing
	}
	b, err := readAll(http.MaxBytesReader(w, r.Body, limit), hint)
	r.Body = &preloaded{Reader: bytes.NewReader(b), body: b, err: err}
}

// readAll is io.ReadAll starting from a buffer of size hint.
func readAll(rd io.Reader, hint int64) ([]byte, error) {
	b := make([]byte, 0, hint)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// preloaded is a request body already in memory, with the error (if any)
// that ended reading it.
type preloaded struct {
	*bytes.Reader
	body []byte
	err  error
}

// Close is a no-op: the original body was read and net/http closes it.
func (*preloaded) Close() error { return nil }

// wait applies Options.Latency. It reports false when the request's
// context ended first; the request is then abandoned without an answer.
func (s *Server) wait(r *http.Request) bool {
	if s.opts.Latency <= 0 {
		return true
	}
	t := time.NewTimer(s.opts.Latency)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		s.stats.cancelled.Add(1)
		return false
	}
}

// chance draws from the seeded generator: true with probability p. It
// draws nothing when p ≤ 0, so that enabling one fault does not shift the
// sequence another fault sees.
func (s *Server) chance(p float64) bool {
	if p <= 0 {
		return false
	}
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return s.rng.Float64() < p
}

// coin draws a fair coin from the seeded generator.
func (s *Server) coin() bool {
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return s.rng.IntN(2) == 0
}

// faultText is how one API words its injected faults and writes its
// error envelope.
type faultText struct {
	limited, internal, unavailable string
	write                          func(http.ResponseWriter, *apiError)
}

// v1Faults is the eCheck API's wording.
var v1Faults = faultText{"Too many requests; retry later", "Internal server error", "Service temporarily unavailable", writeError}

// admit applies the key's rate limit and ErrorRate to a /v1 request. It
// reports false when it has answered the request itself, before the
// endpoint could touch any state.
func (s *Server) admit(w http.ResponseWriter, ks *keyState, r *http.Request) bool {
	return s.admitAs(w, ks, r, v1Faults)
}

// admitAs is admit for the API whose wording is ft. Both APIs draw on the
// key's one rate limiter and the one fault generator.
func (s *Server) admitAs(w http.ResponseWriter, ks *keyState, r *http.Request, ft faultText) bool {
	if ks.limiter != nil {
		now := s.now()
		res := ks.limiter.ReserveN(now, 1)
		if d := res.DelayFrom(now); !res.OK() || d > 0 {
			res.CancelAt(now)
			s.stats.rateLimited.Add(1)
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter(d)))
			ft.write(w, errorf(http.StatusTooManyRequests, "%s", ft.limited))
			return false
		}
	}
	if s.chance(s.opts.ErrorRate) {
		s.stats.errors.Add(1)
		if s.coin() {
			s.log.Info("sandbox fault injected", "fault", "500", "path", r.URL.Path, "key", redact.Secret(ks.key.Value))
			ft.write(w, errorf(http.StatusInternalServerError, "%s", ft.internal))
		} else {
			s.log.Info("sandbox fault injected", "fault", "503", "path", r.URL.Path, "key", redact.Secret(ks.key.Value))
			w.Header().Set("Retry-After", "1")
			ft.write(w, errorf(http.StatusServiceUnavailable, "%s", ft.unavailable))
		}
		return false
	}
	return true
}

// retryAfter is the Retry-After value for a wait of d: whole seconds,
// rounded up, at least 1.
func retryAfter(d time.Duration) int {
	secs := math.Ceil(d.Seconds())
	if secs < 1 || math.IsNaN(secs) {
		return 1
	}
	if secs > 86400 {
		return 86400
	}
	return int(secs)
}
