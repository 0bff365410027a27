package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// AdminOptions configures the admin HTTP handler.
type AdminOptions struct {
	// Check reports whether batchd can do its work: nil when the ledger is
	// open and answers (the ledger's Ping). Its failure is filed under the
	// source "ledger". Nil means always healthy as far as state goes.
	Check func() error
	// Errors supplies the last error of each outside dependency ("sftp",
	// "api", "ledger") shown by /healthz; nil shows none.
	Errors *ErrorRecorder
	// Outages turns a dependency that has failed every call for
	// health.failing_after into a failure while the run goes on; nil
	// reports none.
	Outages *OutageWatch
	// Notes supplies information /healthz shows without it counting as a
	// failure, such as the ledger's restored mark; nil shows none.
	Notes func() map[string]any
	// Hosts are names (admin.hosts: "name" for any port, or "name:port")
	// a request's Host may carry besides the address the request arrived
	// on; any other Host is answered 421, against DNS rebinding.
	Hosts []string
	// Token, when not empty, is the bearer token (admin.token_file) the
	// POST endpoints and /v1/status require; /healthz and /metrics stay
	// open for probes and scrapers. Never logged.
	Token string
	// TriggerEvery and TriggerBurst bound POST /v1/jobs/{name} per job
	// (a token bucket); past it the answer is 429 with Retry-After. 0
	// means DefaultTriggerEvery and DefaultTriggerBurst.
	TriggerEvery time.Duration
	TriggerBurst int
	// Release, when set, serves POST /v1/release: it decodes the JSON body
	// into req (the caller's request type) and returns the line to show.
	// It wraps ErrRefused for a refusal the person can fix (answered 409
	// with the message); any other error is answered 500. The endpoint
	// exists only when Token is set too: a release overrides a fraud
	// hold, so it is never open to every user of the host.
	Release func(ctx context.Context, body []byte) (string, error)
}

// ErrRefused marks an AdminOptions.Release error the person can fix; wrap
// one with Refusal to keep its message as it is.
var ErrRefused = errors.New("refused")

// Refusal marks err as ErrRefused without changing its message.
func Refusal(err error) error { return refusal{err} }

type refusal struct{ error }

func (r refusal) Unwrap() error        { return r.error }
func (r refusal) Is(target error) bool { return target == ErrRefused }

// healthzBody is the JSON of GET /healthz.
type healthzBody struct {
	Status string `json:"status"` // "ok" or "unavailable"
	// Role is this instance's part in the leader election: its "text"
	// says it in one line, "leader (epoch N)", "standby; HOST:PID leads
	// (epoch N, lease until …)" or "no leader"; absent without an
	// election.
	Role      *Role                    `json:"role,omitempty"`
	State     string                   `json:"state"` // "open", or why the check failed
	Alive     bool                     `json:"alive"` // the scheduler is running
	Jobs      []JobHealth              `json:"jobs"`
	LastError *RunError                `json:"last_job_error,omitempty"`
	Errors    map[string]RecordedError `json:"errors,omitempty"` // by source: "sftp", "api", "ledger"
	// Failures says why Status is "unavailable": each failing job (until
	// it next succeeds), the failed ledger check and a stopped scheduler,
	// each with the source of its error.
	Failures []Failure `json:"failures,omitempty"`
	// Notes is information that is not a failure (AdminOptions.Notes),
	// such as "restored": the ledger was restored from a snapshot.
	Notes map[string]any `json:"notes,omitempty"`
	// Rewind is the last time this instance found the shared ledger's
	// database gone back in time and applied the restore rules.
	Rewind *RewindHealth `json:"rewind,omitempty"`
}

// AdminHandler returns the admin API:
//
//	GET  /healthz         200 when the state check passes, the scheduler is
//	                      alive, no job is failing and, with leader
//	                      election, a leader exists (a standby is healthy;
//	                      "no leader" for twice the lease TTL is not), else
//	                      503; JSON with "role" (leader or standby, and who
//	                      leads), and
//	                      every job's last run, outcome and next run, the
//	                      last error of each dependency, and "failures":
//	                      each failing job or check with the source of its
//	                      error ("sftp", "api", "ledger" or "batchd"). A job
//	                      is failing from a failed run to its next success.
//	GET  /metrics         Prometheus metrics from Options.Metrics.
//	GET  /v1/status       JSON from Options.Status (`batchd status --json`).
//	POST /v1/jobs/{name}  start a run now: 202 started, with the run's
//	                      number ("run"; /healthz's job "last_run" says
//	                      when it finished); query parameters are the
//	                      run's arguments (Job.Args: 400 for one the job
//	                      does not take); 409 already running, 404 unknown
//	                      job, 503 stopping or standby (another instance
//	                      leads); other methods 405.
//	POST /v1/release      AdminOptions.Release (admin_release.go): 200,
//	                      409 refused with the reason, 403 with no Token.
//
// The host running batchd is not trusted to be used only by its
// administrators, so before serving:
//   - every request whose Host is not the address it arrived on (on
//     loopback also localhost, 127.0.0.1 or [::1] with that port) nor in
//     Hosts is answered 421 Misdirected Request, with nothing of the
//     state: a web page that rebinds its own name to this address (DNS
//     rebinding) reads nothing;
//   - when Token is set, POST /v1/jobs/{name} and GET /v1/status without
//     "Authorization: Bearer <token>" are answered 401 with
//     WWW-Authenticate;
//   - cross-origin browser requests to the POST endpoint are refused
//     (403), so a web page cannot trigger jobs through a browser on the
//     admin host; curl and other non-browser clients are not affected;
//   - triggers of one job beyond TriggerBurst, then one per TriggerEvery,
//     are answered 429 with Retry-After.
//
// Refusals are logged at most once a minute per reason, with the count.
func (s *Scheduler) AdminHandler(opts AdminOptions) http.Handler {
	g := newAdminGuard(opts, s.opts.Now, func(reason string, n int) {
		s.log.Warn("admin: refused requests", "reason", reason, "refused", n,
			"note", "one line a minute at most per reason; refused counts the refusals since the last line")
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		s.serveHealthz(w, opts)
	})
	if s.opts.Metrics != nil {
		mux.Handle("GET /metrics", s.opts.Metrics.Handler())
	}
	mux.Handle("GET /v1/status", g.tokenOK(http.HandlerFunc(s.serveStatus)))
	trigger := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serveTrigger(w, r, g) })
	mux.Handle("POST /v1/jobs/{name}", g.tokenOK(http.NewCrossOriginProtection().Handler(trigger)))
	mux.Handle("POST /v1/release", g.tokenOK(http.NewCrossOriginProtection().Handler(s.releaseHandler(opts, g))))
	return g.hostOK(mux)
}

func (s *Scheduler) serveHealthz(w http.ResponseWriter, opts AdminOptions) {
	h := s.Health()
	body := healthzBody{State: "open", Alive: h.Alive, Jobs: h.Jobs, LastError: h.LastError, Errors: opts.Errors.Last(), Role: h.Role, Rewind: h.Rewind}
	if opts.Notes != nil {
		body.Notes = opts.Notes()
	}
	if opts.Check != nil {
		if err := opts.Check(); err != nil {
			body.State = err.Error()
			body.Failures = append(body.Failures, Failure{Check: "ledger", Source: string(payment.SourceLedger), Error: err.Error()})
		}
	}
	if !h.Alive {
		body.Failures = append(body.Failures, Failure{Check: "scheduler", Source: string(payment.SourceOther), Error: "the scheduler is not running"})
	}
	body.Failures = append(body.Failures, h.Failures...)
	body.Failures = append(body.Failures, opts.Outages.Failures()...)
	code := http.StatusOK
	body.Status = "ok"
	if len(body.Failures) > 0 {
		code, body.Status = http.StatusServiceUnavailable, "unavailable"
	}
	writeJSON(w, code, body)
}

func (s *Scheduler) serveStatus(w http.ResponseWriter, r *http.Request) {
	if s.opts.Status == nil {
		writeJSON(w, http.StatusNotFound, errorBody{"status is not available"})
		return
	}
	v, err := s.opts.Status(r.Context())
	if err != nil {
		s.log.Error("admin status", "error", err.Error())
		writeJSON(w, http.StatusInternalServerError, errorBody{err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Scheduler) serveTrigger(w http.ResponseWriter, r *http.Request, g *adminGuard) {
	name := r.PathValue("name")
	if !s.hasJob(name) {
		writeJSON(w, http.StatusNotFound, errorBody{fmt.Sprintf("%v %q", ErrUnknownJob, name)})
		return
	}
	if wait := g.allowTrigger(name); wait > 0 {
		w.Header().Set("Retry-After", retryAfter(wait))
		g.refuse(w, http.StatusTooManyRequests, "trigger_rate",
			"too many triggers of this job; retry after the number of seconds in Retry-After")
		return
	}
	n, err := s.TriggerWith(name, r.URL.Query())
	switch {
	case err == nil:
		s.log.Info("job started through the admin API", "job", name, "run", n, "remote", r.RemoteAddr)
		writeJSON(w, http.StatusAccepted, map[string]any{"job": name, "status": "started", "run": n})
	case errors.Is(err, ErrBadArgs):
		writeJSON(w, http.StatusBadRequest, errorBody{err.Error()})
	case errors.Is(err, ErrRunning):
		writeJSON(w, http.StatusConflict, errorBody{err.Error()})
	case errors.Is(err, ErrUnknownJob):
		writeJSON(w, http.StatusNotFound, errorBody{err.Error()})
	case errors.Is(err, ErrNotRunning):
		writeJSON(w, http.StatusServiceUnavailable, errorBody{err.Error()})
	case errors.Is(err, ErrStandby):
		writeJSON(w, http.StatusServiceUnavailable, errorBody{err.Error() + " (" + s.roleText() + "); trigger the job on the leader"})
	default:
		writeJSON(w, http.StatusInternalServerError, errorBody{err.Error()})
	}
}

// hasJob reports whether a job is named name, so that the trigger limit
// keeps buckets only for jobs, whatever names requests carry.
func (s *Scheduler) hasJob(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.jobs[name] != nil
}

type errorBody struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, "encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

// Serve listens on listen (host:port) and serves h until ctx is done, then
// shuts down gracefully. Prefer net.Listen plus ServeListener when a bind
// failure must stop start-up before READY=1.
func Serve(ctx context.Context, listen string, h http.Handler) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("admin listen %s: %w", listen, err)
	}
	return ServeListener(ctx, ln, h)
}

// shutdownGrace bounds how long Serve waits for admin requests in
// progress (a /metrics scrape) once ctx is done.
const shutdownGrace = 5 * time.Second

// ServeListener serves h on ln until ctx is done, then stops accepting,
// waits up to 5s for requests in progress and returns. It returns early
// with an error if serving fails. It closes ln. It returns only once no
// call of h is in progress, even one cut short by the 5s limit, so that a
// handler never reads the ledger after the caller closed it; a request
// that arrives meanwhile is answered 503.
func ServeListener(ctx context.Context, ln net.Listener, h http.Handler) error {
	var inflight sync.RWMutex // read-held by each call of h; write-locked once serving ends
	defer inflight.Lock()
	guarded := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !inflight.TryRLock() {
			writeJSON(w, http.StatusServiceUnavailable, errorBody{"batchd is stopping"})
			return
		}
		defer inflight.RUnlock()
		h.ServeHTTP(w, r)
	})
	srv := &http.Server{
		Handler:           guarded,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("admin serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
		return fmt.Errorf("admin shutdown %s: %w", ln.Addr(), err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("admin serve %s: %w", ln.Addr(), err)
	}
	return nil
}
