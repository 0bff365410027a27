package reconcile

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/bankinfo"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/resolve"
)

// matcher holds what one run learns: the rows it has checked at the
// service (a bit each), the exceptions found, and the few rows and checks
// that need a second look. It holds no copy of the rows it reports: the
// status report is written by a pass over the ledger alongside the walk
// (stream.go), so a run's memory does not grow with its window. Its
// methods are safe for concurrent use by the walk's workers.
type matcher struct {
	db      payment.Ledger
	now     func() time.Time
	log     *slog.Logger
	batches []payment.Batch
	window  Window // the run's window: the reports show the rows created in it

	mu      sync.Mutex
	files   map[uint64]string  // batch id -> file name
	checked rowSet             // rows whose check was listed or fetched in this run
	twins   map[string]*record // identity key -> a reported row carrying an unknown check's identity (findTwins)

	// The pass that writes the status report alongside the walk
	// (stream.go) waits on cond for rows to settle.
	cond          *sync.Cond
	walked        bool                       // the walk is over
	listedW       []Window                   // the date ranges it listed, once over
	fresh         map[payment.RowKey]*record // rows looked at that the pass has not written yet (at most keep)
	keep          int                        // freshCap, unless a test lowers it
	written       rowSet                     // rows the pass has taken
	doubts        map[string][]*payment.Row  // Identity.Key -> rows in doubt when the run began
	inFlight      map[string]payment.RowKey  // identity -> rows being created right now
	resolved      map[payment.RowKey]bool
	unknown       map[string]*payment.Check // listed (or heard of) checks no row owns
	heard         map[string]UnknownEvent   // unknown checks known only from a webhook event
	explained     map[string]bool           // unowned checks already reported otherwise
	excs          map[string]*exception
	statusChanges int
	observed      map[payment.RowKey]*payment.Row // rows a page's batch of status changes just wrote
	outcomes      outcomeWindow                   // which checks that ended not paid are exceptions (outcomes.go)
	finals        map[payment.Status]int          // rows whose check this run saw reach each final status
	receipts      map[uint64]time.Time            // payment batch -> when its results report was last delivered
	finalBatches  map[uint64]bool                 // batches whose receipt is to be written again (noteReceipt)
	steps         []*StepReport                   // what each Step reported, once finish has run (step.go)
	banks         *bankinfo.Names                 // the banks' names, read once a run

	resolveMu sync.Mutex // one resolution of a row in doubt at a time
}

func newMatcher(db payment.Ledger, now func() time.Time, log *slog.Logger) (*matcher, error) {
	m := &matcher{
		db: db, now: now, log: log,
		files: map[uint64]string{}, twins: map[string]*record{},
		doubts: map[string][]*payment.Row{}, inFlight: map[string]payment.RowKey{}, resolved: map[payment.RowKey]bool{},
		unknown: map[string]*payment.Check{}, heard: map[string]UnknownEvent{}, explained: map[string]bool{}, excs: map[string]*exception{}, observed: map[payment.RowKey]*payment.Row{},
		fresh: map[payment.RowKey]*record{}, keep: freshCap, banks: bankinfo.NewNames(db),
	}
	m.cond = sync.NewCond(&m.mu)
	bs, err := db.Batches()
	if err != nil {
		return nil, fmt.Errorf("read batches: %w", err)
	}
	m.batches = bs
	m.receipts = map[uint64]time.Time{}
	for _, b := range bs {
		m.files[b.ID] = b.File
		if b.Kind.Payments() && !b.ResultsReported.IsZero() {
			m.receipts[b.ID] = b.ResultsReported
		}
	}
	err = rowsIn(db, bs, func(r *payment.Row) {
		id := r.Identity().Key()
		switch r.State {
		case payment.InDoubt:
			m.doubts[id] = append(m.doubts[id], r)
		case payment.InFlight:
			m.inFlight[id] = r.Key
		}
	}, payment.InDoubt, payment.InFlight)
	if err != nil {
		return nil, fmt.Errorf("read rows in doubt: %w", err)
	}
	return m, nil
}

// file names the payment file of a batch, reading batches that arrived
// after the run began.
func (m *matcher) file(batch uint64) string {
	m.mu.Lock()
	f, ok := m.files[batch]
	m.mu.Unlock()
	if ok {
		return f
	}
	if b, err := m.db.Batch(batch); err == nil {
		f = b.File
	}
	m.mu.Lock()
	m.files[batch] = f
	m.mu.Unlock()
	return f
}

// process matches one page of listed checks. The page's status changes
// are written first, in one ledger transaction, so that a day on which
// every check moves costs one commit per page rather than one per check.
func (m *matcher) process(ctx context.Context, checks []payment.Check) error {
	ids := make([]string, 0, len(checks))
	for i := range checks {
		ids = append(ids, checks[i].ID)
	}
	rows, err := m.db.OwnerRows(ids)
	if err != nil {
		return fmt.Errorf("look up the owners of %d checks: %w", len(ids), err)
	}
	owners, recs := pageRecords(rows)
	if err := m.observePage(checks, owners, recs); err != nil {
		return err
	}
	for i := range checks {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := m.one(ctx, &checks[i], owners, recs); err != nil {
			return err
		}
	}
	return nil
}

// pageRecords is, for the rows owning a page's checks (read in one
// transaction), the owner of each check id and the record of each row:
// both the page's status commit and the matching compare with them.
func pageRecords(rows map[string]*payment.Row) (map[string]payment.RowKey, map[payment.RowKey]*record) {
	owners := make(map[string]payment.RowKey, len(rows))
	recs := make(map[payment.RowKey]*record, len(rows))
	for id, r := range rows {
		owners[id] = r.Key
		if recs[r.Key] == nil {
			recs[r.Key] = recordOf(r)
		}
	}
	return owners, recs
}

// observePage records, in one transaction, the new status of every listed
// check that belongs to a row whose recorded status differs.
func (m *matcher) observePage(checks []payment.Check, owners map[string]payment.RowKey, recs map[payment.RowKey]*record) error {
	var obs []payment.Observation
	for i := range checks {
		c := &checks[i]
		if c.ID == "" || c.Status == "" {
			continue
		}
		k, owned := owners[c.ID]
		if !owned {
			continue
		}
		if rec := recs[k]; rec.status != c.Status && !rec.status.Final() {
			obs = append(obs, payment.Observation{Key: k, Status: c.Status})
		}
	}
	rows, err := m.db.ObserveStatuses(obs, m.now())
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.statusChanges += len(rows)
	m.finalsLocked(rows)
	for k, r := range rows {
		m.observed[k] = r
	}
	return nil
}

// one matches a listed check: to the row that owns its check_id, else to a
// row in doubt with its label, number and amount, else it is unknown.
func (m *matcher) one(ctx context.Context, c *payment.Check, owners map[string]payment.RowKey, recs map[payment.RowKey]*record) error {
	if c.ID == "" {
		m.log.Warn("listed check without a check_id ignored", "label", c.Label, "number", c.Number)
		return nil
	}
	if k, owned := owners[c.ID]; owned {
		return m.matched(recs[k], c)
	}
	row, err := m.resolve(ctx, c)
	if err != nil || row != nil {
		if err == nil {
			err = m.matched(recordOf(row), c)
		}
		return err
	}
	m.mu.Lock()
	if !m.explained[c.ID] {
		cp := *c
		m.unknown[c.ID] = &cp
	}
	m.mu.Unlock()
	return nil
}

// current returns the record of row k, read now. It is not kept: the
// reports read the ledger again when they are written. Anything the match
// writes is decided on a fresh read (matched).
func (m *matcher) current(k payment.RowKey) (*record, error) {
	row, err := m.db.Row(k)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", k, err)
	}
	return recordOf(row), nil
}

// matched records what the service says of a row's check: a new status
// goes into the ledger; a difference in amount, number or label, or a
// final status that moved, becomes an exception. Records are never
// changed once made, only replaced, so rec may be read without the lock.
func (m *matcher) matched(rec *record, c *payment.Check) error {
	diffs := differences(rec, c)
	if c.Status != "" && c.Status != rec.status {
		fresh, err := m.observe(rec.key, c.Status)
		if err != nil {
			return err
		}
		if fresh.CheckStatus != c.Status {
			diffs = append(diffs, fmt.Sprintf("status: batchd recorded %s, which is final; the service shows %s", fresh.CheckStatus, c.Status))
		}
		rec = recordOf(fresh)
	}
	file := m.file(rec.key.Batch)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.settleLocked(rec)
	delete(m.unknown, c.ID)
	k := KindMismatch + ":" + c.ID
	if len(diffs) == 0 {
		delete(m.excs, k)
		return nil
	}
	e := rowException(KindMismatch, rec, file)
	e.detail = strings.Join(diffs, "; ")
	e.action = actionMismatch
	m.excs[k] = e
	return nil
}

// observe records status on row k unless the row's check is already final
// (a final status never changes; the caller reports the contradiction),
// and returns the row as it now is. It reads the row afresh, so that the
// decision never rests on an old copy.
func (m *matcher) observe(k payment.RowKey, status payment.Status) (*payment.Row, error) {
	m.mu.Lock()
	row := m.observed[k]
	delete(m.observed, k)
	m.mu.Unlock()
	if row != nil && row.CheckStatus == status {
		return row, nil // written by observePage
	}
	row, err := m.db.Row(k)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", k, err)
	}
	if row.CheckStatus == status || row.CheckStatus.Final() {
		return row, nil
	}
	changed, err := m.db.ObserveStatuses([]payment.Observation{{Key: k, Status: status}}, m.now())
	if err != nil {
		return nil, err
	}
	if len(changed) > 0 {
		m.mu.Lock()
		m.statusChanges++
		m.finalsLocked(changed)
		m.mu.Unlock()
	}
	if row, err = m.db.Row(k); err != nil {
		return nil, fmt.Errorf("read %s: %w", k, err)
	}
	return row, nil
}

// differences lists how the check at the service differs from the row,
// by the domain's identity rule: what the service may normalise (leading
// zeros, a label's case and spaces) is no difference.
func differences(rec *record, c *payment.Check) []string {
	return rec.identity().Differences(c.Identity())
}

// resolve looks for a row in doubt that c belongs to and records c as its
// check, through resolve.Bind, the one function that binds a check to a
// row in doubt. It returns nil when there is none. A row that submit
// settled meanwhile is left to submit.
func (m *matcher) resolve(ctx context.Context, c *payment.Check) (*payment.Row, error) {
	m.resolveMu.Lock()
	defer m.resolveMu.Unlock()
	m.mu.Lock()
	var cands []*payment.Row
	for _, r := range m.doubts[c.Identity().Key()] {
		if !m.resolved[r.Key] {
			cands = append(cands, r)
		}
	}
	m.mu.Unlock()
	if len(cands) == 0 {
		return nil, nil
	}
	bound, err := resolve.Bind(ctx, m.db, cands, []payment.Check{*c},
		"found by reconcile: a listed check carries the row's label, number and amount")
	if err != nil {
		return nil, err
	}
	for k, row := range bound {
		m.mu.Lock()
		m.resolved[k] = true
		m.mu.Unlock()
		m.log.Info("row in doubt resolved by a listed check", "row", k.String(), "check_id", c.ID)
		return row, nil
	}
	m.doubtAmountMismatch(cands[0], c)
	return nil, nil
}

// doubtAmountMismatch reports a check that carries the label and number of
// a row in doubt but not its amount (or that the row could not take). The
// row stays in doubt.
func (m *matcher) doubtAmountMismatch(d *payment.Row, c *payment.Check) {
	if d.Payment.Amount == c.Amount {
		return // the row was settled meanwhile, or c is another row's
	}
	file := m.file(d.Key.Batch)
	m.mu.Lock()
	defer m.mu.Unlock()
	e := &exception{kind: KindMismatch, checkID: c.ID, key: d.Key, hasRow: true, file: file,
		label: d.Label, number: d.Number, amount: d.Payment.Amount, status: c.Status,
		detail: fmt.Sprintf("row in doubt: a check with its label and number exists with amount %s, the row's amount is %s", c.Amount, d.Payment.Amount),
		action: actionDoubtMismatch}
	m.excs[KindMismatch+":"+c.ID] = e
	m.explained[c.ID] = true
	delete(m.unknown, c.ID)
}
