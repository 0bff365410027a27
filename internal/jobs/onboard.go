package jobs

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/onboard"
	"github.com/batchd/batchd/internal/report"
)

// Sources is the ledger as onboarding sees it: funding-source rows. It
// is never nil: every ledger keeps them (state.Ledger).
func (e *Env) Sources() funding.Ledger { return e.DB }

// Onboarder returns the onboarding runner over the shared ledger, ACH
// client, limiter and in-flight limit (the one submit takes its slots
// of). reports receives its reconcile report.
func (e *Env) Onboarder(reports report.Destination) *onboard.Runner {
	c := e.Cfg
	return onboard.New(e.DB, e.Funding, onboard.Options{
		Now: e.now, Logger: e.Log, Retry: e.retryPolicy(), ResolveAfter: c.Submit.ResolveAfter.Std(),
		Location: c.Location(), StuckAfterBusinessDays: c.Reconcile.StuckAfterBusinessDays,
		ReportsDir: filepath.Join(e.ReportsDir(), "daily"), Reports: reports, Formats: ReportFormats(c),
		Limit: e.InFlight,
	})
}

// Onboard sends the funding-source and verification rows, then delivers
// the results reports of the funding batches it finished. It runs after
// payments in every submit, under the same limiter.
func (e *Env) Onboard(ctx context.Context) (onboard.Summary, []string, error) {
	sum, err := e.Onboarder(report.Destination{}).Run(ctx)
	if !CanDeliver(err) {
		return sum, nil, err
	}
	delivered, derr := e.deliver(context.WithoutCancel(ctx), func(ctx context.Context, out report.Destination) ([]string, error) {
		return onboard.DeliverResults(ctx, e.DB, filepath.Join(e.ReportsDir(), "results"), out, ReportFormats(e.Cfg))
	})
	return sum, delivered, errors.Join(err, derr)
}

// ReconcileSources reads every funding source still pending, records what
// changed (Pending to Verified), and delivers the funding-sources report
// with the ones stuck past reconcile.stuck_after_business_days.
func (e *Env) ReconcileSources(ctx context.Context) (onboard.ReconcileSummary, error) {
	var sum onboard.ReconcileSummary
	_, err := e.deliver(ctx, func(ctx context.Context, out report.Destination) ([]string, error) {
		var err error
		sum, err = e.Onboarder(out).Reconcile(ctx, e.now())
		return nil, err
	})
	return sum, err
}
