package state

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
	"github.com/batchd/batchd/internal/state/kv"
)

// keyBytes is k as stored: big-endian batch then line, so that keys sort
// in the order submit works in.
func keyBytes(k payment.RowKey) []byte {
	var b [12]byte
	binary.BigEndian.PutUint64(b[:8], k.Batch)
	binary.BigEndian.PutUint32(b[8:], k.Line)
	return b[:]
}

func keyFrom(b []byte) payment.RowKey {
	return payment.RowKey{Batch: binary.BigEndian.Uint64(b[:8]), Line: binary.BigEndian.Uint32(b[8:12])}
}

// paymentRows is the payment rows' rowType: the rows, open, track and
// checks buckets, the binary codec (codec.go), the payment.Transition
// table. A row is tracked while its check is not final, and owns the
// check it names.
var paymentRows = withFacts(&rowType[payment.Row]{
	rowKind: rowKind{payments: true, rows: bucketRows, open: bucketOpen, track: bucketTrack, owners: bucketChecks},
	noun:    "row", idNoun: "check",
	rowsName: "rows", openName: "open", trackName: "track", idsName: "checks",
	head: func(r *payment.Row) rowHead {
		return rowHead{Key: &r.Key, State: &r.State, History: &r.History, Attempts: &r.Attempts, AttemptAt: &r.AttemptAt, SendBy: &r.SendBy, Error: &r.Error,
			HeardAt: &r.HeardAt}
	},
	unmarshal:  decodeRowValue,
	marshal:    func(r *payment.Row) ([]byte, error) { return encodeRow(nil, r), nil },
	account:    func(r *payment.Row) *string { return &r.Payment.BankAccount },
	next:       payment.Transition.Next,
	status:     func(r *payment.Row) payment.Status { return r.CheckStatus },
	tracked:    func(r *payment.Row) bool { return r.State == payment.Submitted && !r.CheckStatus.Final() },
	owned:      func(r *payment.Row) (string, bool) { return r.CheckID, r.CheckID != "" },
	final:      (*payment.Row).Final,
	lastChange: lastChange,
	settle:     settlePayment,
	checks: rowChecks[payment.Row]{
		wrongBatch: func(k payment.RowKey, b *payment.Batch) string {
			return fmt.Sprintf("is a payment row of batch %d, a %s batch", k.Batch, b.Kind)
		},
		trackMissing: "has a check not final (%s)",
		counts:       func(r *Report) (rows, ids *int) { return nil, &r.Checks },
		countFaulty:  true,
	},
})

// settlePayment settles the payee's mark of a row that leaves the open
// states (payees.go), and keeps of a row that will never be sent again
// only the digits of its account a report may show.
func settlePayment(tx kv.Tx, r *payment.Row, before payment.RowState, t payment.Transition, at time.Time) error {
	if before.Open() && !r.State.Open() {
		if err := settleMark(tx, r.Key, t == payment.Create, at); err != nil {
			return err
		}
	}
	if !r.State.Open() && r.Payment.BankAccount != "" {
		r.Payment.AccountLast4 = redact.Last4(r.Payment.BankAccount)
		r.Payment.BankAccount = ""
	}
	return nil
}

// rowFill is how full bbolt fills a page of rows before splitting it.
// Rows are written in key order and then rewritten, growing, as they move
// through their states; splitting pages half-full (bbolt's default)
// leaves the ledger about twice the size of its data, and reconcile, which
// reads every row, keeps all of it in memory.
const rowFill = 0.9

// loadFill is how full the loader fills a page of new rows. A row grows
// by about 40% on its way to submitted (its check, two history steps) and
// a little more as reconcile records its statuses. Pages packed to
// rowFill at ingest split as their rows grow, one row at a time, and end
// about half full; filled to loadFill they end 83% full after submit and
// 89% once every check is deposited, without a split (docs/benchmarks.md,
// "Ledger size per row").
const loadFill = 0.65
