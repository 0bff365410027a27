package sandbox

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the webhook options left zero.
const (
	DefaultWebhookMaxFailures = 10
	DefaultWebhookTries       = 5
	DefaultWebhookRetryWait   = 500 * time.Millisecond
	DefaultWebhookTimeout     = 10 * time.Second
)

// Bounds of the delivery machinery that no option changes.
const (
	maxWebhookWait  = time.Minute // longest wait between two tries
	maxWebhookQueue = 10_000      // deliveries a key may have waiting
	webhookHold     = time.Second // how long WebhookReorder holds an event that no event follows
)

// hooks is the server's webhook delivery machinery: per-key queues,
// each emptied in order by at most one goroutine, a fault generator of
// its own, the counters and the idle signal.
type hooks struct {
	form        bool
	maxFailures int
	tries       int
	wait        time.Duration
	hold        time.Duration // how long a reordered event waits for a successor
	drop, dup   float64       // guarded by rngMu: /_sandbox/webhooks/faults changes them
	reorder     float64

	client    *http.Client
	transport *http.Transport
	ctx       context.Context // ends on Close: aborts POSTs and waits
	cancel    context.CancelFunc
	wg        sync.WaitGroup // workers and armed hold timers

	rngMu sync.Mutex
	rng   *rand.Rand // WebhookDropRate, WebhookDupRate, WebhookReorder

	mu      sync.Mutex // guards closed, pending, idle; taken after a hookState's mu
	closed  bool
	pending int           // deliveries queued, held or in flight
	idle    chan struct{} // closed while pending is 0

	events, attempts, sent, failed            atomic.Int64
	dropped, duplicated, reordered, discarded atomic.Int64
}

// hookState is one key's webhook endpoint and queue. Its mu is taken
// after the key's mu or the ACH mutex, never before them.
type hookState struct {
	mu       sync.Mutex
	url      string // registered URL, "" for none
	gen      uint64 // registrations so far, so that a late failure of an old URL is not counted
	disabled bool   // WebhookMaxFailures deliveries in a row failed
	failures int    // deliveries failed in a row
	queue    []*hookEvent
	held     []*hookEvent // deliveries WebhookReorder holds back
	holdSeq  uint64       // tells a hold timer whether its hold is still the current one
	timer    *time.Timer  // releases held
	running  bool         // a worker is emptying queue
}

// hookEvent is one delivery's encoded request body.
type hookEvent struct {
	name, ctype string
	body        []byte
}

// newHookRNG is the generator of the webhook faults: apart from the
// request fault generator, so that enabling webhooks shifts no fault
// sequence a seeded run of requests meets.
func newHookRNG(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed)^0xd1b54a32d192ed03, uint64(seed)+0x2545f4914f6cdd1d))
}

// newHooks prepares the delivery machinery for opts.
func newHooks(opts *Options) *hooks {
	h := &hooks{
		form:        opts.WebhookForm,
		maxFailures: orDefault(opts.WebhookMaxFailures, DefaultWebhookMaxFailures),
		tries:       orDefault(opts.WebhookTries, DefaultWebhookTries),
		wait:        orDefault(opts.WebhookRetryWait, DefaultWebhookRetryWait),
		hold:        webhookHold,
		drop:        opts.WebhookDropRate,
		dup:         opts.WebhookDupRate,
		reorder:     opts.WebhookReorder,
		rng:         newHookRNG(opts.Seed),
		idle:        make(chan struct{}),
	}
	close(h.idle)
	h.transport = http.DefaultTransport.(*http.Transport).Clone()
	h.client = &http.Client{
		Transport: h.transport,
		Timeout:   orDefault(opts.WebhookTimeout, DefaultWebhookTimeout),
		// A redirect is an answer that is not 2xx: never followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	return h
}

// draw decides the faults of one event: dropped, sent twice, held back.
// It draws nothing for a rate ≤ 0, and no hold when canHold is false
// (an event is already held; this one releases it).
func (h *hooks) draw(canHold bool) (drop, dup, hold bool) {
	h.rngMu.Lock()
	defer h.rngMu.Unlock()
	if h.drop <= 0 && h.dup <= 0 && h.reorder <= 0 {
		return false, false, false
	}
	if h.drop > 0 && h.rng.Float64() < h.drop {
		return true, false, false
	}
	dup = h.dup > 0 && h.rng.Float64() < h.dup
	hold = canHold && h.reorder > 0 && h.rng.Float64() < h.reorder
	return false, dup, hold
}

// add counts n new deliveries as pending.
func (h *hooks) add(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pending == 0 {
		h.idle = make(chan struct{})
	}
	h.pending += n
}

// finish counts n deliveries as no longer pending, under outcome (nil
// when counted elsewhere).
func (h *hooks) finish(n int, outcome *atomic.Int64) {
	if n == 0 {
		return
	}
	if outcome != nil {
		outcome.Add(int64(n))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pending -= n
	if h.pending == 0 {
		close(h.idle)
	}
}

// goAdd reserves a place in wg for a goroutine or a timer, unless the
// server is closed.
func (h *hooks) goAdd() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1)
	return true
}

// stats copies the webhook counters into st.
func (h *hooks) stats(st *Stats) {
	st.WebhookEvents = h.events.Load()
	st.WebhookAttempts = h.attempts.Load()
	st.WebhooksSent = h.sent.Load()
	st.WebhooksFailed = h.failed.Load()
	st.WebhooksDropped = h.dropped.Load()
	st.WebhooksDuplicated = h.duplicated.Load()
	st.WebhooksReordered = h.reordered.Load()
	st.WebhooksDiscarded = h.discarded.Load()
}

// stopTimer disarms hk's hold timer, under hk.mu, releasing its place
// in wg when it had not fired yet.
func (h *hooks) stopTimer(hk *hookState) {
	if hk.timer != nil && hk.timer.Stop() {
		h.wg.Done()
	}
	hk.timer = nil
}

// WebhooksIdle waits until no webhook delivery is queued, held or in
// flight, so that a test can look at what its receiver got. It first
// releases the events WebhookReorder holds back, which would otherwise
// wait for a successor up to a second. It returns ctx's error if ctx
// ends first.
func (s *Server) WebhooksIdle(ctx context.Context) error {
	for _, ks := range s.keyStates() {
		hk := &ks.hook
		hk.mu.Lock()
		s.release(ks)
		hk.mu.Unlock()
	}
	h := s.hooks
	h.mu.Lock()
	idle := h.idle
	h.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops webhook delivery: POSTs in flight are aborted, deliveries
// waiting are discarded, and no event is queued any more. It waits for
// the delivery goroutines to end. The Server still answers requests.
// Close may be called more than once; it always returns nil.
func (s *Server) Close() error {
	h := s.hooks
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.cancel()
	for _, ks := range s.keyStates() {
		hk := &ks.hook
		hk.mu.Lock()
		h.stopTimer(hk)
		n := len(hk.queue) + len(hk.held)
		hk.queue, hk.held = nil, nil
		hk.mu.Unlock()
		h.finish(n, &h.discarded)
	}
	h.wg.Wait()
	h.transport.CloseIdleConnections()
	return nil
}

// keyStates is a snapshot of every key with state.
func (s *Server) keyStates() []*keyState {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*keyState, 0, len(s.keys))
	for _, ks := range s.keys {
		out = append(out, ks)
	}
	return out
}
