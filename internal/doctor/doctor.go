// Package doctor checks whether a batchd installation can work, one
// thing at a time: the configuration, the secret files' modes, the SFTP
// server (reach, host key, each folder), the API key, the ledger, the
// webhook registration and the clock. Each check returns typed results
// that name the item, what was found and, for a fault, the fix; `batchd
// doctor` prints them.
//
// Every check only reads, except the probe file written to and removed
// from each SFTP folder batchd writes to: nothing here creates a ledger,
// registers a webhook or moves a payment file. No result holds a secret
// (API key, DSN, private key, webhook path secret).
package doctor

import (
	"context"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/config"
)

// Status is a result's verdict.
type Status int

// The verdicts: OK works; Warn works but deserves a look; Fail keeps
// batchd from working.
const (
	OK Status = iota
	Warn
	Fail
)

// String is the word `batchd doctor` prints: ok, warn or FAIL (capitals,
// so that a fault stands out in a column of oks).
func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Warn:
		return "warn"
	default:
		return "FAIL"
	}
}

// Result is one finding of one check.
type Result struct {
	Status Status
	Check  string // what was checked: "config", "sftp.outbox", "api", ...
	What   string // what was found, never a secret
	Fix    string // what to do; empty when nothing needs doing
}

func ok(check, what string) Result { return Result{Status: OK, Check: check, What: what} }

func warn(check, what, fix string) Result {
	return Result{Status: Warn, Check: check, What: what, Fix: fix}
}

func fail(check, what, fix string) Result {
	return Result{Status: Fail, Check: check, What: what, Fix: fix}
}

// DefaultMaxSkew is how far this host's clock may be from the service's
// before the clock check warns: batchd stamps the ledger and judges send-by
// deadlines and authorization dates on this host's clock.
const DefaultMaxSkew = 2 * time.Minute

// DefaultTimeout bounds each network check.
const DefaultTimeout = 20 * time.Second

// Options tune Run.
type Options struct {
	// Now is this host's clock, compared with the service's Date header;
	// nil means time.Now.
	Now func() time.Time
	// MaxSkew is the clock difference beyond which the clock check warns;
	// 0 means DefaultMaxSkew.
	MaxSkew time.Duration
	// Timeout bounds each network check; 0 means DefaultTimeout.
	Timeout time.Duration
	// Load loads the configuration the way the other commands do (the
	// command's own loader, with its fallbacks); nil means config.Load
	// with the Env given to Run.
	Load func(path string) (*config.Config, error)
}

func (o Options) normalize() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxSkew <= 0 {
		o.MaxSkew = DefaultMaxSkew
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// Run loads the configuration at path and, when it loads, runs every
// other check on it, in the order an administrator fixes things. When the
// configuration does not load, the results say why, and the other checks
// are not run: they need it.
func Run(ctx context.Context, path string, env config.Env, o Options) []Result {
	o = o.normalize()
	load := o.Load
	if load == nil {
		load = func(p string) (*config.Config, error) { return config.Load(p, env) }
	}
	cfg, res := Config(path, load)
	if cfg == nil {
		return res
	}
	res = append(res, Secrets(cfg, env)...)
	res = append(res, SFTP(ctx, cfg, o.Timeout)...)
	api, clock := API(ctx, cfg, o)
	res = append(res, api, clock)
	ledger, rep := checkLedger(cfg)
	res = append(res, ledger)
	res = append(res, AccountKeys(cfg, rep)...)
	res = append(res, Webhook(ctx, cfg, o.Timeout))
	return res
}

// Failed reports whether any result is a Fail.
func Failed(res []Result) bool {
	for _, r := range res {
		if r.Status == Fail {
			return true
		}
	}
	return false
}

// splitFix separates a message's "; fix: ..." tail, the way batchd's
// errors state their remedy, into what was found and the fix.
func splitFix(msg string) (what, fix string) {
	if i := strings.Index(msg, "; fix: "); i >= 0 {
		return msg[:i], msg[i+len("; fix: "):]
	}
	return msg, ""
}
