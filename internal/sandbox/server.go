package sandbox

import (
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batchd/batchd/internal/logattr"
	"github.com/batchd/batchd/internal/redact"
)

// DefaultMaxBodyBytes is the request body cap when Options.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 64 << 10

// Options configures a Server. The zero value is a well-behaved sandbox
// that accepts any sk_test_ key with the full plan.
type Options struct {
	// Keys are the accepted API keys. When empty, any key beginning
	// "sk_test_" is accepted with the full plan. Live keys ("sk_live_…")
	// are refused with 401 (403 on /ach/v2) even when listed.
	Keys []Key
	// RateLimit is the number of /v1 and /ach/v2 requests per second
	// allowed per key (one limiter for both), with a burst of
	// ceil(RateLimit) (at least 1); 0 means unlimited. Excess requests
	// get 429 with Retry-After in whole seconds.
	RateLimit float64
	// Latency is added to every request before it is handled. A request
	// whose context ends during the wait is dropped without an answer.
	Latency time.Duration
	// ErrorRate is the probability that a /v1 or /ach/v2 request is
	// answered 500 or 503 (even odds) without any effect.
	ErrorRate float64
	// DropRate is the probability that a call does its work and then
	// closes the connection without an answer, the case of a payment that
	// was made although the client never heard so. It applies to the
	// calls that change state: check create, edit and void, payment-link
	// create and status change, account tokenization, and the ACH creates
	// of customers and funding sources; and to bank info, a read, which
	// then goes unanswered. Only successful answers are lost: a refused
	// request is answered.
	DropRate float64
	// Seed seeds the generator behind ErrorRate and DropRate, so that a
	// sequence of requests meets the same faults on every run, and, apart
	// from it, the generator of ACH micro-deposit amounts and the one of
	// the webhook faults.
	Seed int64
	// Now is the real clock; nil means time.Now. Each key's sandbox clock
	// is Now plus the days advanced through /_sandbox/clock. The rate
	// limiter uses Now too, so a frozen clock gives deterministic 429s.
	Now func() time.Time
	// MaxBodyBytes caps request bodies; 0 means DefaultMaxBodyBytes.
	// Larger bodies are answered 400.
	MaxBodyBytes int64
	// Quirks makes the sandbox store and answer like a less tidy service
	// than its exact default, as public clients suggest the real one is:
	// check numbers without leading zeros, a label filter that finds
	// labels containing the text in any case, amounts written as float64
	// (0.5700000000000001), paging numbers sometimes as JSON numbers,
	// account numbers masked as "1......016", an edit that leaves phone
	// out keeping the old phone, and a payment-link list that refuses the
	// search parameter (400). Each quirk and its evidence is
	// documented in quirks.go. Validation, faults and the lifecycle are
	// the same in both modes.
	Quirks bool
	// Logger receives one debug line per request and one info line per
	// injected fault; nil discards. Keys appear only as redact.Secret.
	Logger *slog.Logger
	// LegacyProcessor is a processor name the ACH API accepts at
	// processor-token exchange besides "svcach", standing for the legacy
	// name the specification (§9) says "may still be accepted for now";
	// "" accepts none.
	LegacyProcessor string
	// MaxFundingSources is how many funding sources, deleted ones not
	// counted, an ACH customer may hold; 0 means DefaultMaxFundingSources.
	MaxFundingSources int
	// Date, when not zero, is the day (in Location) on which every key's
	// sandbox clock starts (the time of day is Now's), so that a run can
	// be placed before or after the micro-deposit deprecation date.
	Date time.Time
	// StartDays, when Date is zero, starts every key's sandbox clock that
	// many days ahead of the real one (behind when negative), counted
	// from the same real time as the clock, so that the distance holds
	// across midnight (batchd sandbox --date +3).
	StartDays int
	// Location is the service's time zone: check dates (date,
	// authorization_date), payment links' created_at, the clock's answer
	// and the check list's from_date/to_date are its calendar days and
	// wall times, as a service in US Eastern time would write them. nil
	// means UTC. The business-day calendar that moves checks on still
	// counts UTC days.
	Location *time.Location

	// WebhookForm sends eCheck events (check.*) form-encoded,
	// event=…&data=<check JSON>&timestamp=…, as some public clients
	// receive them, instead of as a JSON body. Funding-source events
	// are JSON either way.
	WebhookForm bool
	// WebhookMaxFailures is how many deliveries in a row may fail (all
	// their tries spent) before the key's endpoint is disabled; 0 means
	// DefaultWebhookMaxFailures. Registering a URL again enables it.
	WebhookMaxFailures int
	// WebhookTries is how many POSTs one delivery makes at most, the
	// first included; 0 means DefaultWebhookTries.
	WebhookTries int
	// WebhookRetryWait is the wait before a delivery's second try; later
	// waits double (each randomised by ±50%) up to a minute. 0 means
	// DefaultWebhookRetryWait.
	WebhookRetryWait time.Duration
	// WebhookTimeout bounds one POST; 0 means DefaultWebhookTimeout.
	WebhookTimeout time.Duration
	// WebhookDropRate is the probability that an event is never sent.
	WebhookDropRate float64
	// WebhookDupRate is the probability that an event is sent twice in a
	// row.
	WebhookDupRate float64
	// WebhookReorder is the probability that an event is held back and
	// sent after the key's next event (or, when no event follows, after a
	// second); 1 swaps every pair of events.
	WebhookReorder float64
}

// DefaultMaxFundingSources is the funding-source limit per ACH customer
// when Options.MaxFundingSources is 0.
const DefaultMaxFundingSources = 5

// Server is the in-memory sandbox. It is an http.Handler and is safe for
// concurrent use. Create one with New.
type Server struct {
	opts   Options
	now    func() time.Time
	log    *slog.Logger
	routes routes

	achRoutes routes // /ach/v2, served by serveACH

	mu     sync.RWMutex
	keys   map[string]*keyState
	anyKey bool // no Keys configured: any sk_test_ key is welcome

	rngMu sync.Mutex
	rng   *rand.Rand

	ach *achState // the ACH API's server-wide data

	hooks *hooks // webhook deliveries, all keys

	stats counters
}

// counters are the server-wide figures behind Stats.
type counters struct {
	requests, creates, drops, errors, rateLimited, cancelled atomic.Int64
	achCreates                                               atomic.Int64
}

// Stats is a snapshot of a Server's activity, for tests and diagnostics.
// It holds no key or bank data.
type Stats struct {
	Requests       int64 // requests received, whatever their outcome
	Creates        int64 // checks stored by /v1/check/create, dropped answers included
	Drops          int64 // answers lost by DropRate (connection closed after the effect)
	InjectedErrors int64 // requests answered 500 or 503 by ErrorRate
	RateLimited    int64 // requests answered 429
	Cancelled      int64 // requests whose context ended during Latency
	ACHCreates     int64 // customers and funding sources stored by /ach/v2, dropped answers included
	Keys           int   // keys that have state
	Checks         int   // checks held, over all keys
	Customers      int   // ACH customers held, over all keys
	FundingSources int   // ACH funding sources held, deleted ones included

	// Webhook deliveries (webhook.go). Once WebhooksIdle has returned,
	// WebhookEvents - WebhooksDropped + WebhooksDuplicated equals
	// WebhooksSent + WebhooksFailed + WebhooksDiscarded.
	WebhookEvents      int64 // events for a registered, enabled endpoint
	WebhookAttempts    int64 // POSTs made, retries included
	WebhooksSent       int64 // deliveries answered 2xx (a duplicate counts twice)
	WebhooksFailed     int64 // deliveries that spent all their tries
	WebhooksDropped    int64 // events never sent (WebhookDropRate)
	WebhooksDuplicated int64 // events sent twice (WebhookDupRate)
	WebhooksReordered  int64 // events held back behind a later one (WebhookReorder)
	WebhooksDiscarded  int64 // deliveries not tried: endpoint disabled, queue full, or Close
}

// KeyStats is a snapshot of one key's data.
type KeyStats struct {
	Checks       int            // checks held
	ByStatus     map[string]int // checks per status
	Tokens       int            // tokenized accounts
	PaymentLinks int            // payment links
	Now          time.Time      // the key's sandbox clock
}

// New returns a Server configured by opts.
func New(opts Options) *Server {
	opts.MaxBodyBytes = orDefault(opts.MaxBodyBytes, DefaultMaxBodyBytes)
	opts.MaxFundingSources = orDefault(opts.MaxFundingSources, DefaultMaxFundingSources)
	s := &Server{
		opts:   opts,
		now:    opts.Now,
		log:    opts.Logger,
		keys:   make(map[string]*keyState),
		anyKey: len(opts.Keys) == 0,
		rng:    rand.New(rand.NewPCG(uint64(opts.Seed), uint64(opts.Seed)^0x9e3779b97f4a7c15)),
		ach:    newACHState(opts.Seed),
	}
	s.hooks = newHooks(&s.opts)
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for _, k := range opts.Keys {
		if isLiveKey(k.Value) || k.Value == "" {
			continue
		}
		s.keys[k.Value] = s.newKeyState(k)
	}
	s.routes = s.buildRoutes()
	s.achRoutes = s.buildACHRoutes()
	return s
}

// orDefault is v, or d when v is not positive: how a limit, count or
// duration option left at 0 (or set to a meaningless negative) takes its
// default.
func orDefault[T ~int | ~int64](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// Stats returns a snapshot of the server's counters.
func (s *Server) Stats() Stats {
	st := Stats{
		Requests:       s.stats.requests.Load(),
		Creates:        s.stats.creates.Load(),
		Drops:          s.stats.drops.Load(),
		InjectedErrors: s.stats.errors.Load(),
		RateLimited:    s.stats.rateLimited.Load(),
		Cancelled:      s.stats.cancelled.Load(),
		ACHCreates:     s.stats.achCreates.Load(),
	}
	s.hooks.stats(&st)
	st.Customers, st.FundingSources = s.ach.counts()
	s.mu.RLock()
	states := make([]*keyState, 0, len(s.keys))
	for _, ks := range s.keys {
		states = append(states, ks)
	}
	s.mu.RUnlock()
	st.Keys = len(states)
	for _, ks := range states {
		ks.mu.Lock()
		st.Checks += len(ks.checks)
		ks.mu.Unlock()
	}
	return st
}

// KeyStats returns a snapshot of the data of key, after applying the
// lifecycle at the key's sandbox clock. A key without state has zero stats.
func (s *Server) KeyStats(key string) KeyStats {
	s.mu.RLock()
	ks := s.keys[key]
	s.mu.RUnlock()
	if ks == nil {
		return KeyStats{ByStatus: map[string]int{}}
	}
	now := s.lockSettled(ks)
	defer ks.mu.Unlock()
	st := KeyStats{Checks: len(ks.checks), ByStatus: map[string]int{}, Tokens: len(ks.tokens), PaymentLinks: len(ks.links), Now: now}
	for _, c := range ks.checks {
		st.ByStatus[c.status]++
	}
	return st
}

// ServeHTTP answers one request: latency, routing (404, 405),
// authentication (401), then for /v1 the rate limit (429) and injected
// errors (500, 503), then the endpoint itself. Paths under /ach/v2 go
// through the same steps in serveACH, with the ACH API's 403s and error
// envelope.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.stats.requests.Add(1)
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	key := "-"
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("sandbox handler panic", "method", r.Method, "path", r.URL.Path, "panic", p)
			if sw.status == 0 {
				writeError(sw, errorf(http.StatusInternalServerError, "sandbox: internal error"))
			}
		}
		s.log.Debug("sandbox request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"key", key, logattr.Duration("duration", time.Since(start)))
	}()
	preloadBody(w, r, s.opts.MaxBodyBytes)
	if !s.wait(r) {
		return
	}
	if isACHPath(r.URL.Path) {
		key = s.serveACH(sw, r)
		return
	}
	ep, arg, aerr := s.routes.match(r.Method, r.URL.Path)
	if aerr != nil {
		if aerr.status == http.StatusMethodNotAllowed {
			sw.Header().Set("Allow", ep.allow())
		}
		writeError(sw, aerr)
		return
	}
	ks, aerr := s.authenticate(r)
	if aerr != nil {
		writeError(sw, aerr)
		return
	}
	key = redact.Secret(ks.key.Value)
	if !ep.sandbox && !s.admit(sw, ks, r) {
		return
	}
	if ep.sandbox {
		r = controlRequest(r)
	}
	if aerr := ep.handler(sw, r, ks, arg); aerr != nil {
		writeError(sw, aerr)
	}
}

// lockSettled locks ks and applies its lifecycle up to its sandbox clock,
// which it returns: how every reader and writer of a key's checks starts,
// so that none sees a check behind its lifecycle. The caller unlocks
// ks.mu.
func (s *Server) lockSettled(ks *keyState) time.Time {
	ks.mu.Lock()
	now := s.keyNow(ks)
	s.settle(ks, now)
	return now
}

// keyNow is the sandbox clock of ks: the real clock plus the days the key
// has advanced, in the service's time zone (zone).
func (s *Server) keyNow(ks *keyState) time.Time {
	return s.now().In(s.zone()).Add(time.Duration(ks.offsetDays.Load()) * 24 * time.Hour)
}
