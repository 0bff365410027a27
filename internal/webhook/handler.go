package webhook

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/batchd/batchd/internal/logattr"
	"github.com/batchd/batchd/internal/logevery"
)

// Defaults of Options.
const (
	DefaultMaxBodyBytes  = 64 << 10
	DefaultRate          = rate.Limit(20) // deliveries per second
	DefaultBurst         = 40
	DefaultBodyTimeout   = 10 * time.Second
	DefaultRecordTimeout = 10 * time.Second
	// MinSecretLen is the shortest path secret New accepts: the secret is
	// the only thing that tells the service's deliveries from anyone's.
	MinSecretLen = 16
)

// Outcomes passed to Options.Observe, one per request; a fixed set, so
// they can be a metric's label values.
const (
	OutcomeRecorded  = "recorded"  // 200: the Store made the event durable
	OutcomeDuplicate = "duplicate" // 200: seen before; no second effect
	OutcomeNotFound  = "not_found" // 404: not under Path
	// OutcomeWrongPath is a 404 for a request not under Path whose last
	// path segment is the secret: the service's delivery, sent to a
	// webhook.url whose path does not reach Path. Anyone else's 404 is
	// OutcomeNotFound, so that scanners do not look like this mistake.
	OutcomeWrongPath    = "wrong_path"
	OutcomeMethod       = "bad_method"   // 405: not POST
	OutcomeUnauthorized = "unauthorized" // 401: wrong or missing secret, or wrong Authorization
	OutcomeRateLimited  = "rate_limited" // 429
	OutcomeTooLarge     = "too_large"    // 413
	OutcomeReadError    = "read_error"   // 400 or 408: the body could not be read (in time)
	OutcomeBadRequest   = "bad_request"  // 400: undecodable
	OutcomeStoreError   = "store_error"  // 503: Record failed; the service retries
)

// Options configure a Handler.
type Options struct {
	// Secret is the path secret: deliveries go to Path + "/" + Secret, the
	// URL registered with POST /webhooks. At least MinSecretLen bytes,
	// without '/'; never logged.
	Secret string
	// Key is the API key. The service is reported to send it in
	// Authorization ("Bearer <key>" or the bare key); a delivery that
	// carries Authorization must carry this key. One without
	// Authorization is accepted on the secret alone, because the spec
	// documents no authentication of deliveries. Required; never logged.
	Key string
	// Path is the base path, such as "/webhook".
	Path string
	// MaxBodyBytes bounds a delivery's body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Rate and Burst bound accepted deliveries (a token bucket); the excess
	// is answered 429 with Retry-After, which the service retries. Only
	// authenticated deliveries take a token, so a flood of forged ones
	// cannot crowd out the service's. 0 means DefaultRate/DefaultBurst;
	// rate.Inf means no bound.
	Rate  rate.Limit
	Burst int
	// BodyTimeout bounds how long a client may take to send the body,
	// through http.ResponseController.SetReadDeadline. Where the
	// ResponseWriter cannot set deadlines the server's ReadTimeout is the
	// bound (NewServer sets one). 0 means DefaultBodyTimeout.
	BodyTimeout time.Duration
	// RecordTimeout bounds one Store.Record call; 0 means
	// DefaultRecordTimeout. A timeout is a Record error: 503.
	RecordTimeout time.Duration
	// Store records events. Required.
	Store Store
	// Logger gets a line per recorded delivery (at debug), per store
	// error, and for refused requests at most one a minute per outcome,
	// with the count since the previous one (RefusalLogEvery); nil
	// discards.
	Logger *slog.Logger
	// Now is the clock of the refusal log's minute and of the rate
	// limit; nil means time.Now.
	Now func() time.Time
	// Observe, if set, is called once per request with its outcome (an
	// Outcome* constant), for metrics.
	Observe func(outcome string)
}

// Handler serves webhook deliveries at POST {Path}/{Secret}. It is safe
// for concurrent use.
type Handler struct {
	secret  [sha256.Size]byte
	key     [sha256.Size]byte
	base    string // Path without a trailing slash, + "/"
	max     int64
	lim     *rate.Limiter
	bodyTO  time.Duration
	storeTO time.Duration
	store   Store
	log     *slog.Logger
	observe func(string)
	now     func() time.Time
	refused *logevery.Gate // one line a minute per refused outcome
}

// New checks opts and returns a Handler. Its errors name the bad option,
// never its value.
func New(opts Options) (*Handler, error) {
	switch {
	case len(opts.Secret) < MinSecretLen:
		return nil, fmt.Errorf("webhook: Secret must be at least %d bytes", MinSecretLen)
	case strings.ContainsAny(opts.Secret, "/?#%") || strings.ContainsFunc(opts.Secret, isSpaceOrControl):
		return nil, errors.New("webhook: Secret must not hold '/', '?', '#', '%', spaces or control characters")
	case opts.Key == "":
		return nil, errors.New("webhook: Key (the API key) is required")
	case opts.Store == nil:
		return nil, errors.New("webhook: Store is required")
	case !strings.HasPrefix(opts.Path, "/"):
		return nil, errors.New("webhook: Path must begin with '/'")
	case opts.MaxBodyBytes < 0, opts.Rate < 0, opts.Burst < 0, opts.BodyTimeout < 0, opts.RecordTimeout < 0:
		return nil, errors.New("webhook: MaxBodyBytes, Rate, Burst and the timeouts must not be negative")
	}
	h := &Handler{
		secret:  sha256.Sum256([]byte(opts.Secret)),
		key:     sha256.Sum256([]byte(opts.Key)),
		base:    strings.TrimRight(opts.Path, "/") + "/",
		max:     orDefault(opts.MaxBodyBytes, DefaultMaxBodyBytes),
		bodyTO:  orDefault(opts.BodyTimeout, DefaultBodyTimeout),
		storeTO: orDefault(opts.RecordTimeout, DefaultRecordTimeout),
		store:   opts.Store,
		log:     opts.Logger,
		observe: opts.Observe,
		now:     opts.Now,
		refused: &logevery.Gate{Every: RefusalLogEvery},
	}
	if h.now == nil {
		h.now = time.Now
	}
	h.lim = rate.NewLimiter(orDefault(opts.Rate, DefaultRate), orDefault(opts.Burst, DefaultBurst))
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.observe == nil {
		h.observe = func(string) {}
	}
	return h, nil
}

// orDefault returns v, or def when v is zero.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

// ServeHTTP answers one delivery. The checks run cheapest first, and
// nothing reaches the Store before the whole body is read and decoded:
// 404 off Path, 405 not POST, 401 bad secret or Authorization, 429 over
// the rate, 413 too large, 400/408 unreadable, 400 undecodable, then
// Record: 503 on its error, else 200 (also for a duplicate).
//
// The request's URL holds the secret: no log line names it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	log := h.log.With("remote", r.RemoteAddr)

	rest, ok := strings.CutPrefix(r.URL.Path, h.base)
	if !ok && r.URL.Path+"/" != h.base {
		if h.endsInSecret(r.URL.Path) {
			h.fail(w, log, http.StatusNotFound, OutcomeWrongPath, "not found",
				"why", "the path ends in the secret but does not start with webhook.path: webhook.url's path does not reach webhook.path (fix webhook.url or the proxy's rewrite)")
			return
		}
		h.fail(w, log, http.StatusNotFound, OutcomeNotFound, "not found")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.fail(w, log, http.StatusMethodNotAllowed, OutcomeMethod, "method not allowed")
		return
	}
	if !h.authorized(rest, r.Header.Values("Authorization")) {
		h.fail(w, log, http.StatusUnauthorized, OutcomeUnauthorized, "unauthorized")
		return
	}
	now := h.now()
	if res := h.lim.ReserveN(now, 1); !res.OK() || res.DelayFrom(now) > 0 {
		wait := time.Second
		if res.OK() {
			wait = res.DelayFrom(now)
			res.CancelAt(now)
		}
		w.Header().Set("Retry-After", strconv.Itoa(int(max(1, math.Ceil(wait.Seconds())))))
		h.fail(w, log, http.StatusTooManyRequests, OutcomeRateLimited, "too many requests")
		return
	}

	body, status, err := h.readBody(w, r)
	if err != nil {
		outcome := OutcomeReadError
		if status == http.StatusRequestEntityTooLarge {
			outcome = OutcomeTooLarge
		}
		h.fail(w, log, status, outcome, err.Error())
		return
	}
	e, err := Decode(r.Header.Get("Content-Type"), body)
	if err != nil {
		h.fail(w, log, http.StatusBadRequest, OutcomeBadRequest, err.Error())
		return
	}
	log = log.With("event", e.Name, "kind", string(e.Kind), "object", e.object(), "id", e.ID)

	ctx, cancel := context.WithTimeout(r.Context(), h.storeTO)
	dup, err := h.store.Record(ctx, e)
	cancel()
	if err != nil {
		// The Store's error may say anything; it is logged, not answered.
		log.Error("webhook: record failed; the service will retry", "outcome", OutcomeStoreError, "err", err)
		h.answer(w, http.StatusServiceUnavailable, OutcomeStoreError, "not recorded; retry later")
		return
	}
	outcome := OutcomeRecorded
	if dup {
		outcome = OutcomeDuplicate
	}
	// One line per delivery at debug: a busy day brings thousands, and
	// the counts by outcome are in the metrics.
	log.Debug("webhook: delivery", "outcome", outcome, logattr.Duration("took", time.Since(start)))
	h.answer(w, http.StatusOK, outcome, outcome)
}

// endsInSecret reports whether p's last segment is the secret, in
// constant time like authorized.
func (h *Handler) endsInSecret(p string) bool {
	i := strings.LastIndexByte(p, '/')
	got := sha256.Sum256([]byte(p[i+1:]))
	return subtle.ConstantTimeCompare(got[:], h.secret[:]) == 1
}

// authorized checks the path secret and, when the delivery carries one,
// the Authorization header, both in constant time. Both sides are hashed
// first so that not even the secret's length leaks through timing.
func (h *Handler) authorized(secret string, auth []string) bool {
	got := sha256.Sum256([]byte(secret))
	ok := subtle.ConstantTimeCompare(got[:], h.secret[:]) == 1
	if len(auth) > 1 {
		return false
	}
	if len(auth) == 1 {
		tok := strings.TrimSpace(auth[0])
		if scheme, rest, found := strings.Cut(tok, " "); found && strings.EqualFold(scheme, "Bearer") {
			tok = strings.TrimSpace(rest)
		}
		k := sha256.Sum256([]byte(tok))
		ok = subtle.ConstantTimeCompare(k[:], h.key[:]) == 1 && ok
	}
	return ok
}

// readBody reads the whole body within BodyTimeout and MaxBodyBytes. It
// returns the status to answer on failure.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int, error) {
	if r.ContentLength > h.max {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("body of %d bytes over the bound of %d", r.ContentLength, h.max)
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(h.bodyTO)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return nil, http.StatusInternalServerError, errors.New("cannot set a read deadline")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.max))
	var tooBig *http.MaxBytesError
	var ne net.Error
	switch {
	case err == nil:
		return body, 0, nil
	case errors.As(err, &tooBig):
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("body over the bound of %d bytes", h.max)
	case errors.As(err, &ne) && ne.Timeout():
		return nil, http.StatusRequestTimeout, errors.New("body not received in time")
	}
	return nil, http.StatusBadRequest, errors.New("body could not be read")
}

// fail answers a refused request, counts it (Observe) and logs it when
// the refusal log says a line is due. msg and args never hold the secret,
// the key or more than a masked excerpt of the body.
func (h *Handler) fail(w http.ResponseWriter, log *slog.Logger, status int, outcome, msg string, args ...any) {
	if n, due := h.refused.Note(outcome, h.now()); due {
		level := slog.LevelInfo
		if status == http.StatusUnauthorized || status >= 500 || outcome == OutcomeWrongPath {
			level = slog.LevelWarn
		}
		args = append([]any{"outcome", outcome, "status", status, "reason", msg, "refused", n,
			"note", "one line a minute at most per outcome; refused counts the refusals since the last line; batchd_webhook_deliveries_total counts each"}, args...)
		log.Log(context.Background(), level, "webhook: refused", args...)
	}
	h.answer(w, status, outcome, msg)
}

func (h *Handler) answer(w http.ResponseWriter, status int, outcome, msg string) {
	h.observe(outcome)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}
