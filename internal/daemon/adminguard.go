package daemon

import (
	"crypto/sha256"
	"crypto/subtle"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/batchd/batchd/internal/logevery"
)

// Defaults of AdminOptions' trigger limit: a burst of 3 triggers of one
// job, then one every 20 seconds (3 a minute). A person or a script that
// starts a job by hand needs no more; a loop or a hostile page gets 429.
const (
	DefaultTriggerEvery = 20 * time.Second
	DefaultTriggerBurst = 3
)

// adminRefusalLogEvery bounds the log lines about refused admin requests:
// one a minute per reason, with the count.
const adminRefusalLogEvery = time.Minute

// adminGuard holds what the admin handler checks before it serves: the
// Host (against DNS rebinding), the bearer token and the trigger rate.
type adminGuard struct {
	hosts []string          // admin.hosts, lower-case
	token [sha256.Size]byte // sha256 of the token; valid when hasToken
	// hasToken says POST endpoints and /v1/status need the token.
	hasToken bool
	every    time.Duration
	burst    int
	now      func() time.Time
	log      func(reason string, n int)

	mu   sync.Mutex
	lims map[string]*rate.Limiter // by job name; only names of jobs
	gate logevery.Gate
}

func newAdminGuard(opts AdminOptions, now func() time.Time, log func(reason string, n int)) *adminGuard {
	g := &adminGuard{
		every: opts.TriggerEvery, burst: opts.TriggerBurst, now: now, log: log,
		lims: make(map[string]*rate.Limiter),
		gate: logevery.Gate{Every: adminRefusalLogEvery},
	}
	if g.every <= 0 {
		g.every = DefaultTriggerEvery
	}
	if g.burst <= 0 {
		g.burst = DefaultTriggerBurst
	}
	for _, h := range opts.Hosts {
		g.hosts = append(g.hosts, strings.ToLower(h))
	}
	if opts.Token != "" {
		g.token, g.hasToken = sha256.Sum256([]byte(opts.Token)), true
	}
	return g
}

// refuse answers a refused request with a fixed message (nothing of the
// server's state) and logs it, at most once a minute per reason.
func (g *adminGuard) refuse(w http.ResponseWriter, code int, reason, msg string) {
	if n, due := g.gate.Note(reason, g.now()); due {
		g.log(reason, n)
	}
	writeJSON(w, code, errorBody{msg})
}

// hostOK wraps h: a request whose Host is not the address it arrived on
// (or, on loopback, localhost or another loopback address with the same
// port) nor one of admin.hosts is answered 421 Misdirected Request. A page
// on another site that rebinds its own name to this address sends its own
// name as Host, so it reads nothing.
func (g *adminGuard) hostOK(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if !g.allowedHost(r.Host, local) {
			g.refuse(w, http.StatusMisdirectedRequest, "host",
				"misdirected request: this server does not answer to that Host; an administrator can add the name to admin.hosts")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// allowedHost decides hostOK's question. local is the connection's local
// address, nil when unknown (then only admin.hosts match).
func (g *adminGuard) allowedHost(hostHeader string, local net.Addr) bool {
	host, port := splitHost(strings.ToLower(hostHeader))
	if host == "" {
		return false
	}
	for _, a := range g.hosts {
		ah, ap := a, ""
		if h, p, err := net.SplitHostPort(a); err == nil {
			ah, ap = h, p
		}
		if strings.Trim(ah, "[]") == host && (ap == "" || ap == port) {
			return true
		}
	}
	tcp, ok := local.(*net.TCPAddr)
	if !ok || port != strconv.Itoa(tcp.Port) {
		return false
	}
	if ip := net.ParseIP(host); ip != nil && ip.Equal(tcp.IP) {
		return true
	}
	if !tcp.IP.IsLoopback() {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// splitHost splits a Host header into host (without IPv6 brackets) and
// port, "80" when it has none.
func splitHost(h string) (host, port string) {
	if hp, p, err := net.SplitHostPort(h); err == nil {
		return hp, p
	}
	if strings.Contains(strings.Trim(h, "[]"), ":") && !strings.HasPrefix(h, "[") {
		return "", "" // a bare IPv6 address or junk: not a valid Host
	}
	return strings.Trim(h, "[]"), "80"
}

// tokenOK wraps h: when a token is configured, a request without
// "Authorization: Bearer <token>" is answered 401 with WWW-Authenticate.
// The comparison hashes both sides and runs in constant time.
func (g *adminGuard) tokenOK(h http.Handler) http.Handler {
	if !g.hasToken {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Values("Authorization")
		var tok string
		if len(auth) == 1 {
			if scheme, rest, ok := strings.Cut(strings.TrimSpace(auth[0]), " "); ok && strings.EqualFold(scheme, "Bearer") {
				tok = strings.TrimSpace(rest)
			}
		}
		sum := sha256.Sum256([]byte(tok))
		if tok == "" || subtle.ConstantTimeCompare(sum[:], g.token[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="batchd admin"`)
			g.refuse(w, http.StatusUnauthorized, "token",
				"unauthorized: send Authorization: Bearer <the token in admin.token_file>")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// allowTrigger takes a token from job's bucket. It returns 0 when the
// trigger may go ahead, else how long until it may.
func (g *adminGuard) allowTrigger(job string) time.Duration {
	g.mu.Lock()
	lim := g.lims[job]
	if lim == nil {
		lim = rate.NewLimiter(rate.Every(g.every), g.burst)
		g.lims[job] = lim
	}
	g.mu.Unlock()
	now := g.now()
	res := lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d
	}
	return 0
}

// retryAfter is d in whole seconds, at least 1, for Retry-After.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(int(max(1, math.Ceil(d.Seconds()))))
}
