package jobs

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/batchd/batchd/internal/reconcile"
	"github.com/batchd/batchd/internal/report"
)

// Reconcile runs one reconcile over window (nil: the default window, from
// the oldest check not final, capped at reconcile.lookback_days, to today)
// and delivers the reports to the outbox when SFTP is configured.
func (e *Env) Reconcile(ctx context.Context, window *reconcile.Window) (*reconcile.Summary, error) {
	c := e.Cfg
	opts := reconcile.Options{
		ReportsDir: filepath.Join(e.ReportsDir(), "daily"), Location: c.Location(),
		LookbackDays: c.Reconcile.LookbackDays, StuckAfterBusinessDays: c.Reconcile.StuckAfterBusinessDays,
		KeepDays: c.Reconcile.KeepDays, Retry: e.retryPolicy(), Logger: e.Log,
	}
	if c.SFTP.Address != "" {
		rem, err := e.Dial(ctx)
		if err != nil {
			return nil, fmt.Errorf("reconcile: %w", err)
		}
		defer rem.Close()
		opts.Outbox = report.Destination{Outbox: rem, Dir: c.SFTP.Outbox}
	}
	r, err := reconcile.New(e.DB, e.Service, opts)
	if err != nil {
		return nil, err
	}
	w := window
	if w == nil {
		dw, err := reconcile.DefaultWindow(e.DB, e.now(), c.Location(), c.Reconcile.LookbackDays)
		if err != nil {
			return nil, err
		}
		w = &dw
	}
	return r.Run(ctx, *w)
}
