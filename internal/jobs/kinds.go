package jobs

import (
	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/paymentlink"
	"github.com/batchd/batchd/internal/reconcile"
)

// The registration of kinds: payment.Kinds says which kinds of file exist
// and how each is told by its header; this is where each applied kind
// gets its rule over the ledger and the service (ingest.Options.Lines),
// and where reconcile gets the kinds of money coming in
// (reconcile.Options.Steps). A new applied kind registers here, once.

// registry is the kinds as one Env runs them.
type registry struct {
	lines map[payment.BatchKind]ingest.LineKind
	steps []reconcile.Step
}

// kindsOf registers every applied kind over e's ledger and service; a nil
// e gives kinds that check a file's form and apply nothing (LineKinds).
func kindsOf(e *Env) registry {
	var (
		release ingest.ReleaseFunc
		cancel  ingest.CancelFunc
		edit    ingest.EditFunc
		links   = paymentlink.New(nil, nil, nil)
		steps   []reconcile.Step
	)
	if e != nil {
		svc := paymentlink.NewService(e.API)
		links = paymentlink.New(e.DB, svc, e.now)
		release, cancel, edit = ApprovalRelease(e.DB), Cancel(e.DB, e.Service, svc, e.now), Edit(e.DB, e.Service, e.now)
		steps = []reconcile.Step{cancelsTooLate(e.DB), links, editsTooLate(e.DB)}
	}
	return registry{
		lines: map[payment.BatchKind]ingest.LineKind{
			payment.KindApprovals: ingest.Approvals(release),
			payment.KindCancels:   ingest.Cancels(cancel),
			payment.KindLinks:     links,
			payment.KindEdits:     ingest.Edits(edit),
		},
		steps: steps,
	}
}

// LineKinds are the applied kinds as batchd validate checks a file's
// lines: their form only, nothing applied.
func LineKinds() map[payment.BatchKind]ingest.LineKind { return kindsOf(nil).lines }
