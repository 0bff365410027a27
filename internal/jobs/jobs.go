// Package jobs wires the configuration to the three jobs, ingest, submit
// and reconcile, over one ledger, one API client and one rate limiter.
// The command line runs a job once through it; the daemon schedules the
// same functions. Nothing here decides anything about payments: that is
// the domain packages' business.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/batchd/batchd/internal/ach"
	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/bankinfo"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/inflight"
	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/onboard"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/submit"
	"github.com/batchd/batchd/internal/throttle"
)

// Env is everything the jobs share.
type Env struct {
	Cfg *config.Config
	// DB is the ledger, the whole contract (state.Ledger): no job asks
	// it by type assertion for a feature.
	DB      state.Ledger
	API     *echeck.Client     // the wire client, for the sandbox's own calls (demo, tests)
	Service payment.Service    // the same client as the domain sees it
	Banks   bankinfo.Directory // the service's bank directory, on the same client
	ACH     *ach.Client        // the ACH API's wire client, on the same limiter
	Funding funding.Service    // the ACH client as onboarding sees it
	Limiter *throttle.Limiter
	// InFlight is the adaptive limit on creates, and onboarding's rows, in
	// flight: it follows Limiter's rate by Little's law, under
	// api.concurrency as a ceiling (internal/inflight). One for the Env,
	// so that what it learned of the API's latency carries from one run
	// to the next.
	InFlight *inflight.Limit
	Log      *slog.Logger

	onClose []func() // run by Close, in order

	hooks  Hooks
	ingest *ingest.Job // keeps what it has seen of inbox files between runs
	now    func() time.Time
	// sftp is shared by every run's SFTP client, so that "sftp connected"
	// is at info only on a change (remote.Presence).
	sftp remote.Presence
}

// Hooks are optional observers the daemon attaches.
type Hooks struct {
	ObserveAPI func(endpoint string, status int, d time.Duration)
	OnRetry    func(endpoint string)
	// OnIngestOutcome is told each file's outcome as an ingest run settles
	// it (ingest.Options.OnOutcome), so that the files counters move
	// during a long run; see FileCounter.
	OnIngestOutcome func(ingest.Outcome)
	// OnChecksCreated is told of payment checks as submit records them
	// (submit.Options.OnCreated), so that the created counter moves during
	// a long run.
	OnChecksCreated func(n int)
	// OnSendDropped is told of creates not sent because their send-by
	// deadline passed (submit.Options.OnSendDropped).
	OnSendDropped func(n int)
}

// Open opens the ledger and builds the client and limiter, on the wall
// clock.
func Open(cfg *config.Config, log *slog.Logger, hooks Hooks) (*Env, error) {
	return OpenAt(cfg, log, hooks, time.Now)
}

// OpenAt is Open with the clock every job of the Env reads: run dates,
// archive folders, reconcile's window and today, prune horizons, ingest's
// waits. Tests give a clocktest.Clock's Now (shared with the emulator);
// `--date` rehearsals give a clock on another day (ClockOn). A frozen
// clock never lets ingest's stable_for pass: with one, use
// ingest.done_marker.
func OpenAt(cfg *config.Config, log *slog.Logger, hooks Hooks, now func() time.Time) (*Env, error) {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db, err := OpenLedger(cfg, state.Options{Now: now}) // the ledger's stamps on the same clock
	if err != nil {
		return nil, err
	}
	lim := throttle.New(cfg.API.Rate, cfg.API.Burst)
	// One idle connection per worker (api.concurrency, the in-flight
	// limit's ceiling): http.DefaultTransport keeps only 2
	// per host, so with more workers most requests would open (against the
	// real API, TLS-handshake) a new connection and close it after.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = max(cfg.API.Concurrency, 2)
	api, err := echeck.New(apiwire.Options{
		BaseURL: cfg.API.BaseURL, Key: cfg.APIKey(), Timeout: cfg.API.Timeout.Std(),
		HTTPClient: &http.Client{Transport: tr},
		Limiter:    lim, Observe: hooks.ObserveAPI, Logger: log,
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("api client: %w", err)
	}
	achc, err := ach.New(apiwire.Options{
		BaseURL: cfg.ACHBaseURL(), Key: cfg.APIKey(), Timeout: cfg.API.Timeout.Std(),
		HTTPClient: &http.Client{Transport: tr},
		Limiter:    lim, Observe: hooks.ObserveAPI, Logger: log,
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("ach client: %w", err)
	}
	e := &Env{Cfg: cfg, DB: db, API: api, Banks: echeck.NewService(api), ACH: achc,
		Funding: ach.NewFundingService(achc, cfg.ACH.Provider), Limiter: lim, Log: log, now: now, hooks: hooks,
		InFlight: inflight.New(inflight.Options{Ceiling: cfg.API.Concurrency, Rate: lim.Rate, Now: now})}
	e.Service = e.checkService(echeck.NewService(api))
	e.ingest = ingest.New(db, e.ingestOptions())
	return e, nil
}

// Close closes the ledger.
func (e *Env) Close() error {
	for _, f := range e.onClose {
		f()
	}
	e.onClose = nil
	return e.DB.Close()
}

// OnClose has Close call f before it closes the ledger (a one-shot
// command gives up the ledger's lease there: HoldLease).
func (e *Env) OnClose(f func()) { e.onClose = append(e.onClose, f) }

// Now reads the Env's clock, the one every job uses.
func (e *Env) Now() time.Time { return e.now() }

// ReportsDir is where local copies of every report are kept.
func (e *Env) ReportsDir() string { return filepath.Join(e.Cfg.StateDir, "reports") }

func (e *Env) ingestOptions() ingest.Options {
	c := e.Cfg
	return ingest.Options{
		Inbox: c.SFTP.Inbox, Archive: c.SFTP.Archive, Failed: c.SFTP.Failed, Outbox: c.SFTP.Outbox,
		Claim: c.SFTP.Claim, Instance: e.DB.Instance(), // the ledger's id names this instance's claim folder
		ClaimTimeout: c.Ingest.ClaimTimeout.Std(),
		NoDotNames:   c.SFTP.TempUpload != config.TempUploadDot,
		SubmitRate:   c.API.Rate, SubmitTimeout: c.Schedule.SubmitTimeout.Std(),
		Pattern: c.Ingest.Pattern, StableFor: c.Ingest.StableFor.Std(), MaxWait: c.Ingest.MaxWait.Std(), DoneMarker: c.Ingest.DoneMarker,
		OnInvalid: c.Ingest.OnInvalid, IgnoreColumns: c.Ingest.IgnoreColumns, MaxFileBytes: c.Ingest.MaxFileBytes,
		Delimiter: c.Ingest.Delimiter, Sheet: c.Ingest.Sheet, TestMode: c.API.Mode == config.ModeTest, Location: c.Location(),
		SpoolDir: filepath.Join(c.StateDir, "spool"), ReportsDir: e.ReportsDir(), Logger: e.Log,
		SweepDirs: sweepDirs(c), ReportFormats: ReportFormats(c), Now: e.now, OnOutcome: e.hooks.OnIngestOutcome,
		Payees:  ingest.Payees{KeyDir: c.StateDir, Mode: c.Ingest.OnAccountChange, Memory: e.DB},
		Lines:   kindsOf(e).lines,
		Routing: e.routingCheck(),
		Kinds:   c.Ingest.PinnedKinds(),
	}
}

// routingCheck is ingest's check of routing numbers against the bank
// directory (ingest.check_routing), or nil when it is off.
func (e *Env) routingCheck() func(ctx context.Context, routing string) (string, error) {
	if !e.Cfg.Ingest.CheckRouting {
		return nil
	}
	return bankinfo.New(e.Banks, e.DB, e.Cfg.Ingest.RoutingRefresh.Std(), e.now).Refusal
}

// ReportFormats are the formats every report is written in
// (report.formats).
func ReportFormats(c *config.Config) []report.Format { return report.FormatsOf(c.Report.Formats) }

// sweepDirs are the folders besides the outbox and the failed folder that
// batchd uploads to, whose failed uploads' leftovers ingest removes.
func sweepDirs(c *config.Config) []string {
	if c.Backup.Upload && c.SFTP.Backups != "" {
		return []string{c.SFTP.Backups}
	}
	return nil
}

// Dial connects to the configured SFTP server.
func (e *Env) Dial(ctx context.Context) (*remote.Client, error) {
	c := e.Cfg.SFTP
	if c.Address == "" {
		return nil, errors.New("sftp.address is not configured")
	}
	return remote.Dial(ctx, remote.Options{
		Address: c.Address, User: c.User, IdentityFile: c.IdentityFile, KnownHosts: c.KnownHosts,
		DialTimeout: c.DialTimeout.Std(), Keepalive: c.Keepalive.Std(), TempUpload: c.TempUpload, Logger: e.Log,
		Presence: &e.sftp,
	})
}

// Ingest runs one pickup cycle.
func (e *Env) Ingest(ctx context.Context) ([]ingest.Outcome, error) {
	rem, err := e.Dial(ctx)
	if err != nil {
		return nil, err
	}
	defer rem.Close()
	return e.ingest.Run(ctx, rem)
}

// Submitter returns a submit runner configured from the submit and api
// sections, over the shared ledger, client and limiter.
func (e *Env) Submitter() *submit.Runner {
	c := e.Cfg
	return submit.New(e.DB, e.Service, submit.Options{
		Concurrency: c.API.Concurrency, Limit: e.InFlight, ResolveAfter: c.Submit.ResolveAfter.Std(),
		VoidOnRisk: c.Submit.VoidOnRisk, Retry: e.retryPolicy(), Logger: e.Log,
		OnRetry: e.hooks.OnRetry, Now: e.now, OnCreated: e.hooks.OnChecksCreated,
		OnSendDropped: e.hooks.OnSendDropped,
		// The circuit breaker: at twice health.failing_after of failed
		// creates (when /healthz has been red for as long), the run stops.
		BreakAfter: 2 * c.Health.FailingAfter.Std(),
	})
}

// retryPolicy is how every job retries a request to the service:
// submit.backoff_max caps the wait, submit.max_attempts bounds the tries.
func (e *Env) retryPolicy() retry.Policy {
	return retry.Policy{Max: e.Cfg.Submit.BackoffMax.Std(), MaxAttempts: e.Cfg.Submit.MaxAttempts}
}

// SubmitSummary is what one submit did: payments, then onboarding.
type SubmitSummary struct {
	submit.Summary
	Sources onboard.Summary
}

// Submit sends pending rows and then delivers the results reports of the
// batches it finished; then it does the same for funding-source rows.
// ctx's cancellation is a graceful stop. Onboarding runs even when
// payments failed with the service, but not after a ledger failure or a
// refused key, which stop everything.
func (e *Env) Submit(ctx context.Context) (SubmitSummary, []string, error) {
	var out SubmitSummary
	sum, err := e.Submitter().Run(ctx)
	out.Summary = sum
	if !CanDeliver(err) {
		return out, nil, err
	}
	delivered, derr := e.DeliverResults(context.WithoutCancel(ctx))
	err = errors.Join(err, derr)
	if errors.Is(err, payment.ErrKeyRefused) {
		return out, delivered, err
	}
	osum, more, oerr := e.Onboard(ctx)
	out.Sources = osum
	return out, append(delivered, more...), errors.Join(err, oerr)
}

// CanDeliver reports whether the results of finished batches may still be
// delivered after a submit run that ended with err: yes unless the ledger
// failed (its record of those batches is then in question) or the run was
// interrupted (the process is stopping).
func CanDeliver(err error) bool {
	return !errors.Is(err, payment.ErrLedger) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// resultsDir keeps the local copies of the files' results reports.
func (e *Env) resultsDir() string { return filepath.Join(e.ReportsDir(), "results") }

// DeliverResults writes finished batches' results reports locally and to
// the SFTP outbox when one is configured.
func (e *Env) DeliverResults(ctx context.Context) ([]string, error) {
	dir, formats := e.resultsDir(), ReportFormats(e.Cfg)
	return e.deliver(ctx, func(ctx context.Context, out report.Destination) ([]string, error) {
		return submit.DeliverResults(ctx, e.DB, dir, out, formats)
	})
}
