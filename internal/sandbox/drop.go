package sandbox

import (
	"bytes"
	"net/http"

	"github.com/batchd/batchd/internal/redact"
)

// lossy makes h an endpoint whose answer DropRate may lose after h has
// done its work: the one place where every such endpoint (check create,
// edit and void, payment-link create and status change, tokenization,
// bank info, the ACH creates) meets the fault, so that they all lose
// answers alike. h answers into a held buffer; when it succeeded (2xx) a
// chance is drawn, and on a hit the connection is closed instead of the
// answer being sent. A state-changing call has then changed the state,
// which is the case a client must survive (did my void happen?); a read
// simply goes unanswered. A refused request (4xx, an apiError) is never
// dropped and draws nothing, and with DropRate 0 nothing is held or
// drawn, so that the seeded sequence other faults see does not move.
func (s *Server) lossy(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request, ks *keyState, arg string) *apiError {
		if s.opts.DropRate <= 0 {
			return h(w, r, ks, arg)
		}
		held := &heldAnswer{header: w.Header()}
		if aerr := h(held, r, ks, arg); aerr != nil {
			held.sendTo(w)
			return aerr
		}
		if held.succeeded() && s.chance(s.opts.DropRate) {
			s.drop(w, ks, r.URL.Path)
			return nil
		}
		held.sendTo(w)
		return nil
	}
}

// heldAnswer is an answer written but not yet sent: its status and body
// wait in memory until lossy has decided whether to lose them. Headers go
// straight to the real writer's map, which sends nothing before its
// WriteHeader.
type heldAnswer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (a *heldAnswer) Header() http.Header { return a.header }

func (a *heldAnswer) WriteHeader(code int) {
	if a.status == 0 {
		a.status = code
	}
}

func (a *heldAnswer) Write(b []byte) (int, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	return a.body.Write(b)
}

// succeeded reports whether the held answer is a 2xx.
func (a *heldAnswer) succeeded() bool { return a.status >= 200 && a.status < 300 }

// sendTo sends the held answer through w; nothing when none was written.
func (a *heldAnswer) sendTo(w http.ResponseWriter) {
	if a.status == 0 {
		return
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body.Bytes())
}

// drop closes the connection of w without an answer. Where the connection
// cannot be taken over (HTTP/2, a recorder), it aborts the handler with
// http.ErrAbortHandler, which net/http also turns into a lost answer.
func (s *Server) drop(w http.ResponseWriter, ks *keyState, path string) {
	s.stats.drops.Add(1)
	s.log.Info("sandbox fault injected", "fault", "drop", "path", path, "key", redact.Secret(ks.key.Value))
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}
