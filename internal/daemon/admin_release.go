package daemon

import (
	"errors"
	"io"
	"net/http"
)

// maxReleaseBody bounds a POST /v1/release body: a file name, a line, a
// batch and a name fit in far less.
const maxReleaseBody = 4 << 10

// releaseHandler serves POST /v1/release through opts.Release. Without a
// token it refuses (403): a release lifts a hold put on a payee's changed
// bank account, so the endpoint needs the token that admin.token_file
// guards, not only access to the loopback port. No body is logged.
func (s *Scheduler) releaseHandler(opts AdminOptions, g *adminGuard) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if opts.Release == nil {
			writeJSON(w, http.StatusNotFound, errorBody{"release is not available"})
			return
		}
		if !g.hasToken {
			g.refuse(w, http.StatusForbidden, "release_no_token",
				"release through the admin API needs admin.token_file set: set it and restart batchd, or stop batchd and run batchd release")
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxReleaseBody))
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody{"read the request body: " + err.Error()})
			return
		}
		msg, err := opts.Release(r.Context(), body)
		switch {
		case err == nil:
			s.log.Info("held row released through the admin API", "result", msg, "remote", r.RemoteAddr)
			writeJSON(w, http.StatusOK, map[string]string{"result": msg})
		case errors.Is(err, ErrRefused):
			writeJSON(w, http.StatusConflict, errorBody{err.Error()})
		default:
			s.log.Error("admin release", "error", err.Error())
			writeJSON(w, http.StatusInternalServerError, errorBody{err.Error()})
		}
	})
}

// Request asks for a run of the named job from outside any run (an admin
// release that made a row pending asks for "submit"): at once if it is
// idle, or again as soon as its current run ends, like RequestRun.
func (s *Scheduler) Request(name, from string) { s.request(name, from) }
