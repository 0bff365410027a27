package jobs

import (
	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/onboard"
	"github.com/batchd/batchd/internal/payee"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/submit"
	"github.com/batchd/batchd/internal/webhook"
)

// The ledger the jobs hold (state.Ledger) is handed to each domain
// package as that package's own interface. These checks make a missing
// method a compile error here, where the contract is composed, rather
// than a feature quietly switched off at run time.
var (
	_ payment.Ledger        = state.Ledger(nil)
	_ funding.Ledger        = state.Ledger(nil)
	_ webhook.Store         = state.Ledger(nil)
	_ ingest.Ledger         = state.Ledger(nil)
	_ onboard.Ledger        = state.Ledger(nil)
	_ onboard.ResultsLedger = state.Ledger(nil)
	_ submit.ResultsLedger  = state.Ledger(nil)
	_ ReleaseLedger         = state.Ledger(nil)
	_ CancelLedger          = state.Ledger(nil)
	_ EditLedger            = state.Ledger(nil)
	_ payee.Memory          = state.Ledger(nil)
	_ StatusLedger          = state.Ledger(nil)
)
