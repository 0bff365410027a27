package paymentlink

import (
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// Ledger is what the kind keeps and reads in the ledger: its line
// records and the cancel lines that closed a link (payment.CancelLines),
// and the files they came from (for the reports' names).
type Ledger interface {
	payment.LineLedger
	File(sha256 string) (*payment.File, error)
}

// Kind is the payment-link kind as batchd registers it: an ingest
// LineKind (file.go) and a reconcile Step (reconcile.go).
type Kind struct {
	db  Ledger
	svc Service // nil: lines are refused, saying this batchd makes no links
	now func() time.Time
	// memos finds another line of a line's memo and amount, for lines
	// without batchd's reference (unfindable).
	memos memoIndex
}

// New is the kind over db and svc, recording times from now. svc may be
// nil for a batchd that only checks files (batchd validate).
func New(db Ledger, svc Service, now func() time.Time) *Kind {
	return &Kind{db: db, svc: svc, now: now}
}
