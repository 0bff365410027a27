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
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/submit"
	"github.com/batchd/batchd/internal/throttle"
)

// Env is everything the jobs share.
type Env struct {
	Cfg     *config.Config
	DB      *state.DB
	API     *echeck.Client
	Limiter *throttle.Limiter
	Log     *slog.Logger

	hooks  Hooks
	ingest *ingest.Job // keeps what it has seen of inbox files between runs
	now    func() time.Time
}

// Hooks are optional observers the daemon attaches.
type Hooks struct {
	ObserveAPI func(endpoint string, status int, d time.Duration)
	OnRetry    func(endpoint string)
}

// Open opens the ledger and builds the client and limiter.
func Open(cfg *config.Config, log *slog.Logger, hooks Hooks) (*Env, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db, err := state.Open(cfg.StateDir, state.Options{})
	if err != nil {
		return nil, err
	}
	lim := throttle.New(cfg.API.Rate, cfg.API.Burst)
	// One idle connection per worker: http.DefaultTransport keeps only 2
	// per host, so with more workers most requests would open (against the
	// real API, TLS-handshake) a new connection and close it after.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = max(cfg.API.Concurrency, 2)
	api, err := echeck.New(echeck.Options{
		BaseURL: cfg.API.BaseURL, Key: cfg.APIKey(), Timeout: cfg.API.Timeout.Std(),
		HTTPClient: &http.Client{Transport: tr},
		Limiter:    lim, Observe: hooks.ObserveAPI, Logger: log,
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("api client: %w", err)
	}
	e := &Env{Cfg: cfg, DB: db, API: api, Limiter: lim, Log: log, now: time.Now, hooks: hooks}
	e.ingest = ingest.New(db, e.ingestOptions())
	return e, nil
}

// Close closes the ledger.
func (e *Env) Close() error { return e.DB.Close() }

// ReportsDir is where local copies of every report are kept.
func (e *Env) ReportsDir() string { return filepath.Join(e.Cfg.StateDir, "reports") }

func (e *Env) ingestOptions() ingest.Options {
	c := e.Cfg
	return ingest.Options{
		Inbox: c.SFTP.Inbox, Archive: c.SFTP.Archive, Failed: c.SFTP.Failed, Outbox: c.SFTP.Outbox,
		Pattern: c.Ingest.Pattern, StableFor: c.Ingest.StableFor.Std(), DoneMarker: c.Ingest.DoneMarker,
		OnInvalid: c.Ingest.OnInvalid, IgnoreColumns: c.Ingest.IgnoreColumns, MaxFileBytes: c.Ingest.MaxFileBytes,
		TestMode: c.API.Mode == config.ModeTest, Location: c.Location(),
		SpoolDir: filepath.Join(c.StateDir, "spool"), ReportsDir: e.ReportsDir(), Logger: e.Log,
	}
}

// Dial connects to the configured SFTP server.
func (e *Env) Dial(ctx context.Context) (*remote.Client, error) {
	c := e.Cfg.SFTP
	if c.Address == "" {
		return nil, errors.New("sftp.address is not configured")
	}
	return remote.Dial(ctx, remote.Options{
		Address: c.Address, User: c.User, IdentityFile: c.IdentityFile, KnownHosts: c.KnownHosts,
		DialTimeout: c.DialTimeout.Std(), Keepalive: c.Keepalive.Std(), Logger: e.Log,
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
	return submit.New(e.DB, e.API, submit.Options{
		Concurrency: c.API.Concurrency, ResolveAfter: c.Submit.ResolveAfter.Std(),
		VoidOnRisk: c.Submit.VoidOnRisk, MaxAttempts: c.Submit.MaxAttempts,
		Backoff: retry.Backoff{Max: c.Submit.BackoffMax.Std()}, Logger: e.Log,
		OnRetry: e.hooks.OnRetry,
	})
}

// Submit sends pending rows and then delivers the results reports of the
// batches it finished. ctx's cancellation is a graceful stop.
func (e *Env) Submit(ctx context.Context) (submit.Summary, []string, error) {
	sum, err := e.Submitter().Run(ctx)
	if err != nil {
		return sum, nil, err
	}
	delivered, err := e.DeliverResults(ctx)
	return sum, delivered, err
}

// DeliverResults writes finished batches' results reports locally and to
// the SFTP outbox when one is configured.
func (e *Env) DeliverResults(ctx context.Context) ([]string, error) {
	dir := filepath.Join(e.ReportsDir(), "results")
	if e.Cfg.SFTP.Address == "" {
		return submit.DeliverResults(ctx, e.DB, dir, nil)
	}
	rem, err := e.Dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("deliver results: %w", err)
	}
	defer rem.Close()
	return submit.DeliverResults(ctx, e.DB, dir, Outbox{rem, e.Cfg.SFTP.Outbox})
}

// Outbox adapts a remote client to the reports' Outbox interface.
type Outbox struct {
	Remote *remote.Client
	Dir    string
}

// Upload writes name into the outbox directory atomically.
func (o Outbox) Upload(ctx context.Context, name string, r io.Reader) error {
	return o.Remote.Upload(ctx, o.Dir, name, r)
}
