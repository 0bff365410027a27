package ingest

import (
	"context"

	"github.com/batchd/batchd/internal/ingest/csvfile"
)

// RoutingCheck is one file's check of its rows' routing numbers against
// the bank directory (Options.Routing): each number is asked once per
// file; a number the directory does not know refuses its rows, with a
// finding in the rejects report. A directory that cannot be asked (the
// service down, an answer lost) refuses nothing: the rest of the file is
// not checked, and the failure is said once, to the administrator
// (unchecked), not in the finance team's rejects report.
type RoutingCheck struct {
	ctx       context.Context
	check     func(ctx context.Context, routing string) (string, error)
	onFinding func(csvfile.Finding) error
	unchecked func(err error)
	seen      map[string]string // routing -> why its rows are refused ("" to pass)
	down      bool              // the directory failed: nothing more is asked
	refused   int               // rows refused, which csvfile counted valid
}

// NewRoutingCheck checks routing numbers with check (Options.Routing; nil
// checks nothing), reporting refusals to onFinding and the first failure
// to ask to unchecked: ingest's, and batchd validate --online's.
func NewRoutingCheck(ctx context.Context, check func(context.Context, string) (string, error),
	onFinding func(csvfile.Finding) error, unchecked func(error)) *RoutingCheck {
	return &RoutingCheck{ctx: ctx, check: check, onFinding: onFinding, unchecked: unchecked, seen: map[string]string{}}
}

// Pass reports whether row p may be loaded; err is onFinding's.
func (rc *RoutingCheck) Pass(p csvfile.Payment) (bool, error) {
	routing := p.Payment.BankRouting
	if rc.check == nil || rc.down || routing == "" {
		return true, nil
	}
	why, asked := rc.seen[routing]
	if !asked {
		var err error
		if why, err = rc.check(rc.ctx, routing); err != nil {
			rc.down = true
			rc.unchecked(err)
			return true, nil
		}
		rc.seen[routing] = why
	}
	if why == "" {
		return true, nil
	}
	rc.refused++
	return false, rc.onFinding(csvfile.Finding{Line: p.Line, Column: "bank_routing", Value: routing, Severity: csvfile.Error, Message: why})
}

// Adjust moves the rows the check refused from valid to invalid in sum.
func (rc *RoutingCheck) Adjust(sum csvfile.Summary) csvfile.Summary {
	sum.Valid, sum.Invalid = sum.Valid-rc.refused, sum.Invalid+rc.refused
	return sum
}
