package funding

import (
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// Loader is the part of a payment.Loader that takes a funding-source or
// verification file's rows. The ledger's loader for a batch of such a kind
// (payment.FileMeta.Kind) implements it; the batch commits, rejects and
// aborts through the payment.Loader it came from.
type Loader interface {
	AddSource(line int, r Request) error
}

// BatchLoader loads one funding-source or verification file: a
// payment.Loader (batch, commit, reject, abort) whose rows are funding
// requests.
type BatchLoader interface {
	payment.Loader
	Loader
}

// Ledger keeps funding-source rows. Each writing method applies one
// payment.Transition atomically and durably and refuses (wrapping
// payment.ErrIllegal) one that does not fit the row's state; a failure to
// read or write the store wraps payment.ErrLedger. Rows live in their own
// batches (payment.Batch.Kind), so payment jobs never see them.
type Ledger interface {
	// BeginSourceBatch starts loading a funding-source or verification
	// file (m.Kind); like payment.FileLedger.BeginBatch it returns
	// payment.ErrDuplicate (wrapped) for content already accepted, and
	// refuses a payment kind.
	BeginSourceBatch(m payment.FileMeta) (BatchLoader, error)
	SourceRow(k payment.RowKey) (*Row, error)
	// SourceRows scans one batch's rows in line order.
	SourceRows(batch uint64, fn func(*Row) (bool, error)) error
	// OpenSourceRows scans rows without a result yet (pending, in flight,
	// in doubt) of ready batches, in batch and line order.
	OpenSourceRows(fn func(*Row) (bool, error)) error
	// TrackedSourceRows scans submitted rows whose source status is
	// Tracked (Pending).
	TrackedSourceRows(fn func(*Row) (bool, error)) error
	// SourceOwners says which rows own the given source ids, in one read.
	SourceOwners(ids []string) (map[string]payment.RowKey, error)

	// SendSource marks a pending row in flight, recording before (the
	// customer's sources just before a processor token is sent; nil for
	// other rows). When it returns nil the intent is durable.
	SendSource(k payment.RowKey, before []string) (*Row, error)
	// CustomerFound records the row's customer, created or found, on a row
	// in flight or in doubt.
	CustomerFound(k payment.RowKey, userID, note string) (*Row, error)
	// SourceCreated settles a row in flight or in doubt as submitted with
	// res. It refuses (payment.ErrCheckOwned) a source another row owns,
	// except for Verify rows, which name a source another row created.
	SourceCreated(k payment.RowKey, res Result) (*Row, error)
	RejectSource(k payment.RowKey, message, nextStep string) (*Row, error)
	DoubtSource(k payment.RowKey, reason string) (*Row, error)
	ReleaseSource(k payment.RowKey, reason string) (*Row, error)
	// Initiated records that micro-deposit verification was initiated for
	// a submitted row (or, with a nextStep, that it cannot be).
	Initiated(k payment.RowKey, at time.Time, nextStep string) (*Row, error)
	// RecoverSourcesInFlight puts every row left in flight by an earlier
	// process in doubt, and returns how many.
	RecoverSourcesInFlight() (int, error)
	// ObserveSources records statuses seen at the service in one
	// transaction and returns the rows it changed. Only a Tracked status
	// may change; the row of a verified source keeps it.
	ObserveSources(obs []Observation, at time.Time) (map[payment.RowKey]*Row, error)
}
