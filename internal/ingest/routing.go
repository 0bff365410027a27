package ingest

import (
	"context"

	"github.com/batchd/batchd/internal/ingest/csvfile"
)

// RoutingCheck is one file's check of its rows' routing numbers against
// the bank directory (Options.Routing): each number is asked once per
// file; a number the directory does not know refuses its rows, with a
// finding in the rejects report; a number that could not be asked is a
// warning on the first row that carries it, and refuses nothing.
type RoutingCheck struct {
	ctx       context.Context
	check     func(ctx context.Context, routing string) (string, error)
	onFinding func(csvfile.Finding) error
	seen      map[string]string // routing -> why its rows are refused ("" to pass)
	refused   int               // rows refused, which csvfile counted valid
	warned    int               // warnings added to the findings
}

// NewRoutingCheck checks routing numbers with check (Options.Routing; nil
// checks nothing), reporting to onFinding: ingest's, and batchd validate
// --online's.
func NewRoutingCheck(ctx context.Context, check func(context.Context, string) (string, error), onFinding func(csvfile.Finding) error) *RoutingCheck {
	return &RoutingCheck{ctx: ctx, check: check, onFinding: onFinding, seen: map[string]string{}}
}

// Pass reports whether row p may be loaded; err is onFinding's.
func (rc *RoutingCheck) Pass(p csvfile.Payment) (bool, error) {
	routing := p.Payment.BankRouting
	if rc.check == nil || routing == "" {
		return true, nil
	}
	why, asked := rc.seen[routing]
	if !asked {
		var err error
		why, err = rc.check(rc.ctx, routing)
		rc.seen[routing] = why
		if err != nil {
			rc.warned++
			return true, rc.onFinding(csvfile.Finding{Line: p.Line, Column: "bank_routing", Value: routing, Severity: csvfile.Warning,
				Message: "the routing number could not be checked with the service's bank directory (" + err.Error() + "); the row goes on unchecked"})
		}
	}
	if why == "" {
		return true, nil
	}
	rc.refused++
	return false, rc.onFinding(csvfile.Finding{Line: p.Line, Column: "bank_routing", Value: routing, Severity: csvfile.Error, Message: why})
}

// Adjust moves the rows the check refused from valid to invalid in sum,
// and counts its warnings.
func (rc *RoutingCheck) Adjust(sum csvfile.Summary) csvfile.Summary {
	sum.Valid, sum.Invalid, sum.Warnings = sum.Valid-rc.refused, sum.Invalid+rc.refused, sum.Warnings+rc.warned
	return sum
}
