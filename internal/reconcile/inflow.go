package reconcile

import (
	"context"
	"fmt"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
)

// Inflows: kinds of money coming in (payment links, internal/paymentlink).
// A check a payer made through such a kind belongs to the kind's line,
// not to a payment row: reconcile hands every Inflow the listed checks no
// row owns, and each takes its own out of them, so that none is reported
// a stranger to void. Each writes its own daily report, whose totals are
// kept apart from the payments going out in the status and settlement
// reports, and raises its own exceptions. The checks are those the run
// listed (the window's dates): a check outside the window is not seen.

// Inflow is a kind of money coming in, as reconcile asks it.
type Inflow interface {
	// Claim takes out of unknown (the listed checks no row owns, by id)
	// those that are the kind's, and says what it reports of them.
	Claim(ctx context.Context, unknown map[string]*payment.Check) (*InflowReport, error)
}

// InflowReport is what one Inflow reports in one run.
type InflowReport struct {
	// Name names the daily report: "links" is links-YYYY-MM-DD.csv.
	Name  string
	Table report.Table
	// Rows are the report's rows, in Table's column order; none writes
	// no report, so that a ledger that never saw the kind reports as
	// before.
	Rows       [][]any
	Exceptions []Exception
	// Counts are the lines by status; Words, the counts in one line for
	// the log and the command's output ("payment links: 15 open, 5 paid").
	Counts map[string]int
	Words  string
}

// Exception is an exception an Inflow raises on a check: Kind names it in
// the exceptions report (after reconcile's own kinds), File is the
// inflow file the check's line came from.
type Exception struct {
	Kind, File, Detail, Action string
	Check                      *payment.Check
}

// InflowSummary is what a run's Summary keeps of one Inflow's report.
type InflowSummary struct {
	Name   string
	Counts map[string]int
	Words  string
}

// claimInflows asks each Inflow for its checks among the unknown ones, and
// returns their reports and exceptions.
func (m *matcher) claimInflows(ctx context.Context, inflows []Inflow) ([]*InflowReport, []*exception, error) {
	var reps []*InflowReport
	var excs []*exception
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, in := range inflows {
		rep, err := in.Claim(ctx, m.unknown)
		if err != nil {
			return nil, nil, fmt.Errorf("money coming in: %w", err)
		}
		if rep == nil || len(rep.Rows) == 0 {
			continue
		}
		for _, x := range rep.Exceptions {
			e := checkException(x.Kind, x.Check)
			e.file, e.detail, e.action = x.File, x.Detail, x.Action
			excs = append(excs, e)
		}
		reps = append(reps, rep)
	}
	return reps, excs, nil
}
