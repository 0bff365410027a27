package sandbox

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/batchd/batchd/internal/redact"
)

// Key prefixes of the two environments.
const (
	testKeyPrefix = "sk_test_"
	liveKeyPrefix = "sk_live_"
)

// maxKeyLen bounds the keys the sandbox keeps state for.
const maxKeyLen = 256

// Key is an API key the sandbox accepts.
type Key struct {
	// Value is the secret key, "sk_test_…".
	Value string
	// FundConfirmation is true when the key's plan includes fund
	// confirmation. Without it a create or edit that asks for fund
	// confirmation is answered 403 "Fund Confirmation Limit Reached".
	FundConfirmation bool
	// Inactive marks a key whose application is disabled: the ACH API
	// answers it 403 "App inactive" (docs/ach-wire.md); /v1 still serves it.
	Inactive bool
}

// ParseKey reads a key as given on the command line: "sk_test_abc" for the
// full plan, "sk_test_abc:basic" for a plan without fund confirmation
// (":full" is accepted too), "sk_test_abc:inactive" for a full-plan key
// whose application is disabled (refused by /ach/v2). Only test keys are
// accepted. Errors never repeat the key.
func ParseKey(flag string) (Key, error) {
	value, plan, _ := strings.Cut(strings.TrimSpace(flag), ":")
	k := Key{Value: value, FundConfirmation: true}
	switch plan {
	case "", "full":
	case "basic":
		k.FundConfirmation = false
	case "inactive":
		k.Inactive = true
	default:
		return Key{}, fmt.Errorf("parse sandbox key %s: plan must be basic, full or inactive", redact.Secret(value))
	}
	if err := checkKeyValue(value); err != nil {
		return Key{}, fmt.Errorf("parse sandbox key %s: %w", redact.Secret(value), err)
	}
	return k, nil
}

// checkKeyValue accepts "sk_test_" followed by printable ASCII without
// spaces or colons.
func checkKeyValue(v string) error {
	if !strings.HasPrefix(v, testKeyPrefix) || len(v) == len(testKeyPrefix) {
		return errors.New("a sandbox key begins with sk_test_ and has more after it")
	}
	if len(v) > maxKeyLen {
		return fmt.Errorf("longer than %d characters", maxKeyLen)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c >= 0x7f || c == ':' {
			return errors.New("only printable ASCII without spaces or colons")
		}
	}
	return nil
}

func isLiveKey(v string) bool { return strings.HasPrefix(v, liveKeyPrefix) }

// keyState is everything one key owns. Each key is an island: no request
// ever sees another key's data.
type keyState struct {
	key        Key
	limiter    *rate.Limiter // nil when unlimited
	offsetDays atomic.Int64  // days the sandbox clock is ahead of the real one

	mu         sync.Mutex
	checks     []*check            // in creation order: date, then seq
	byID       map[string]*check   // check_id → check
	byLabel    map[string][]*check // label → checks in creation order
	settled    int                 // checks[:settled] are past their processing time
	seq        int64               // creation sequence of checks and links
	nextNumber int64               // next automatic check number
	lastDate   time.Time           // newest creation time; dates never go back
	tokens     map[string]tokenEntry
	links      []*paymentLink
	linkByTok  map[string]*paymentLink

	// ach is the key's part of the ACH API. It is guarded by the
	// server's ach.mu, not by mu, because customers and accounts are
	// also indexed server-wide.
	ach achKey

	// hook is the key's webhook endpoint and delivery queue, with a
	// mutex of its own (webhook.go).
	hook hookState
}

// firstAutoNumber is the first automatic check number of a key.
const firstAutoNumber = 1001

func (s *Server) newKeyState(k Key) *keyState {
	ks := &keyState{
		key:        k,
		byID:       make(map[string]*check),
		byLabel:    make(map[string][]*check),
		nextNumber: firstAutoNumber,
		tokens:     make(map[string]tokenEntry),
		linkByTok:  make(map[string]*paymentLink),
	}
	ks.offsetDays.Store(s.startOffset())
	if r := s.opts.RateLimit; r > 0 {
		ks.limiter = rate.NewLimiter(rate.Limit(r), max(1, int(math.Ceil(r))))
	}
	return ks
}

// bearerKey takes the key from an Authorization header, with or without
// the "Bearer" scheme.
func bearerKey(h string) string {
	h = strings.TrimSpace(h)
	if scheme, rest, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(rest)
	}
	return h
}

// authenticate returns the state of the request's key, or 401.
func (s *Server) authenticate(r *http.Request) (*keyState, *apiError) {
	v := bearerKey(r.Header.Get("Authorization"))
	switch {
	case v == "":
		return nil, errorf(http.StatusUnauthorized, "Authorization: API key required")
	case isLiveKey(v):
		return nil, errorf(http.StatusUnauthorized, "Authorization: live keys are not accepted in test mode")
	}
	if ks := s.lookupKey(v); ks != nil {
		return ks, nil
	}
	return nil, errorf(http.StatusUnauthorized, "Authorization: invalid API key")
}

// lookupKey returns the state of key v, creating it on first use when any
// sk_test_ key is welcome, or nil when v is not accepted. Both APIs share
// it, so that a key has one clock and one rate limit whichever it calls.
func (s *Server) lookupKey(v string) *keyState {
	if isLiveKey(v) {
		return nil
	}
	s.mu.RLock()
	ks := s.keys[v]
	s.mu.RUnlock()
	if ks != nil {
		return ks
	}
	if !s.anyKey || checkKeyValue(v) != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ks = s.keys[v]; ks == nil {
		ks = s.newKeyState(Key{Value: v, FundConfirmation: true})
		s.keys[v] = ks
	}
	return ks
}
