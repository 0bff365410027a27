package jobs

import (
	"time"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
)

// Status is the ledger at a glance: what `batchd status --json` prints and
// what the admin server's /v1/status serves.
type Status struct {
	Batches []BatchStatus            `json:"batches"`
	Rows    map[payment.RowState]int `json:"rows"` // totals over payment batches
	// SourceRows are the totals over funding-source and verification
	// batches, kept apart: they are not payments.
	SourceRows map[payment.RowState]int `json:"source_rows,omitempty"`
	// Checks counts payment rows by their check's status (in_process,
	// printed, deposited, …), from the ledger: what webhooks and reconcile
	// recorded. Only StatusWithChecks fills it, since it reads every row.
	Checks map[payment.Status]int `json:"checks,omitempty"`
	// Restored is set from a restore of the ledger from a snapshot until
	// a reconcile covering the snapshot's date completes: information,
	// not a failure.
	Restored *state.RestoreMark `json:"restored,omitempty"`
}

// BatchStatus is one batch's line in Status.
type BatchStatus struct {
	ID              uint64                   `json:"id"`
	Kind            string                   `json:"kind"` // payments, funding-sources or verifications
	File            string                   `json:"file"`
	Status          payment.BatchStatus      `json:"status"`
	Created         time.Time                `json:"created"`
	Rows            int                      `json:"rows"`
	Invalid         int                      `json:"invalid"`
	ByState         map[payment.RowState]int `json:"by_state"`
	ResultsReported *time.Time               `json:"results_reported,omitempty"`
	Note            string                   `json:"note,omitempty"`
	// Checks are the batch's submitted rows by their check's status
	// (deposited, failed, void, in_process, …): how its payments ended
	// or stand. Only StatusWithChecks fills it.
	Checks map[payment.Status]Total `json:"checks,omitempty"`
	// Finished says every row of the batch is final: its check deposited,
	// failed, void or deleted, or the row refused. Only StatusWithChecks
	// sets it.
	Finished bool `json:"finished,omitempty"`
}

// Total is a count of payments and their amount.
type Total struct {
	Count  int         `json:"count"`
	Amount money.Cents `json:"amount"`
}

// StatusLedger is what a status reads: batches, rows and the restore
// mark. state.Ledger has it.
type StatusLedger interface {
	payment.RowReader
	state.Restorer
}

// StatusOf reads the ledger's batches and their row counts.
func StatusOf(db StatusLedger) (Status, error) {
	bs, err := db.Batches()
	if err != nil {
		return Status{}, err
	}
	st := Status{Batches: []BatchStatus{}, Rows: map[payment.RowState]int{}}
	for _, b := range bs {
		s := BatchStatus{ID: b.ID, Kind: b.Kind.String(), File: b.File, Status: b.Status, Created: b.Created,
			Rows: b.Rows, Invalid: b.Invalid, ByState: b.Counts, Note: b.Note}
		if !b.ResultsReported.IsZero() {
			t := b.ResultsReported
			s.ResultsReported = &t
		}
		totals := st.Rows
		if !b.Kind.Payments() {
			if st.SourceRows == nil {
				st.SourceRows = map[payment.RowState]int{}
			}
			totals = st.SourceRows
		}
		for k, n := range b.Counts {
			totals[k] += n
		}
		st.Batches = append(st.Batches, s)
	}
	m, err := RestoredMark(db)
	if err != nil {
		return Status{}, err
	}
	st.Restored = m
	return st, nil
}

// StatusWithChecks is StatusOf plus the count of checks by status. It
// reads every payment row, so the admin server's /v1/status uses it, not
// the frequent systemd status line.
func StatusWithChecks(db StatusLedger) (Status, error) {
	st, err := StatusOf(db)
	if err != nil {
		return st, err
	}
	st.Checks = map[payment.Status]int{}
	for i := range st.Batches {
		b := &st.Batches[i]
		if b.Kind != payment.KindPayments.String() || b.ByState[payment.Submitted] == 0 {
			continue
		}
		b.Checks, b.Finished = map[payment.Status]Total{}, true
		err := db.Rows(b.ID, func(r *payment.Row) (bool, error) {
			b.Finished = b.Finished && r.Final()
			if r.State == payment.Submitted {
				st.Checks[r.CheckStatus]++
				t := b.Checks[r.CheckStatus]
				t.Count++
				t.Amount += r.Payment.Amount
				b.Checks[r.CheckStatus] = t
			}
			return true, nil
		})
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// RestoredMark returns the ledger's restored mark, or nil when it has
// none.
func RestoredMark(db state.Restorer) (*state.RestoreMark, error) { return db.Restored() }
