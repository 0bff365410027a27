package reconcile

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/state"
)

// matcher holds what one run learns: the records of the rows it reports,
// the rows it has checked at the service, and the exceptions found. Its
// methods are safe for concurrent use by the walk's workers.
type matcher struct {
	db      *state.DB
	now     func() time.Time
	log     *slog.Logger
	batches []state.Batch

	mu            sync.Mutex
	files         map[uint64]string        // batch id -> file name
	records       map[state.RowKey]*record // rows the reports may show
	checked       map[state.RowKey]bool    // rows whose check was listed or fetched in this run
	doubts        map[string][]doubtRow    // identity -> rows in doubt when the run began
	inFlight      map[string]state.RowKey  // identity -> rows being created right now
	resolved      map[state.RowKey]bool
	unknown       map[string]*echeck.Check // listed checks no row owns
	explained     map[string]bool          // unowned checks already reported otherwise
	excs          map[string]*exception
	statusChanges int
	observed      map[state.RowKey]*state.Row // rows a page's batch of status changes just wrote

	resolveMu sync.Mutex // one resolution of a row in doubt at a time
}

// doubtRow is a row whose create answer was lost: it may own a check that
// the list shows, recognisable by its label, number and amount.
type doubtRow struct {
	key    state.RowKey
	label  string
	number string
	amount money.Cents
}

func newMatcher(db *state.DB, now func() time.Time, log *slog.Logger) (*matcher, error) {
	m := &matcher{
		db: db, now: now, log: log,
		files: map[uint64]string{}, records: map[state.RowKey]*record{}, checked: map[state.RowKey]bool{},
		doubts: map[string][]doubtRow{}, inFlight: map[string]state.RowKey{}, resolved: map[state.RowKey]bool{},
		unknown: map[string]*echeck.Check{}, explained: map[string]bool{}, excs: map[string]*exception{}, observed: map[state.RowKey]*state.Row{},
	}
	bs, err := db.Batches()
	if err != nil {
		return nil, fmt.Errorf("read batches: %w", err)
	}
	m.batches = bs
	for _, b := range bs {
		m.files[b.ID] = b.File
	}
	err = rowsIn(db, bs, func(r *state.Row) {
		id := identity(r.Label, r.Number)
		switch r.State {
		case state.InDoubt:
			m.doubts[id] = append(m.doubts[id], doubtRow{r.Key, r.Label, r.Number, r.Payment.Amount})
		case state.InFlight:
			m.inFlight[id] = r.Key
		}
	}, state.InDoubt, state.InFlight)
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

// put keeps rec unless a later version of the same row is already kept.
func (m *matcher) put(rec *record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.putLocked(rec)
}

func (m *matcher) putLocked(rec *record) {
	if old, ok := m.records[rec.key]; ok && old.version > rec.version {
		return
	}
	m.records[rec.key] = rec
}

// process matches one page of listed checks. The page's status changes
// are written first, in one ledger transaction, so that a day on which
// every check moves costs one commit per page rather than one per check.
func (m *matcher) process(ctx context.Context, checks []echeck.Check) error {
	ids := make([]string, 0, len(checks))
	for i := range checks {
		ids = append(ids, checks[i].CheckID)
	}
	owners, err := m.db.CheckOwners(ids)
	if err != nil {
		return fmt.Errorf("look up the owners of %d checks: %w", len(ids), err)
	}
	if err := m.observePage(checks, owners); err != nil {
		return err
	}
	for i := range checks {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := m.one(&checks[i], owners); err != nil {
			return err
		}
	}
	return nil
}

// observePage records, in one transaction, the new status of every listed
// check that belongs to a row whose recorded status differs.
func (m *matcher) observePage(checks []echeck.Check, owners map[string]state.RowKey) error {
	var obs []state.Observation
	for i := range checks {
		c := &checks[i]
		if c.CheckID == "" || c.Status == "" {
			continue
		}
		k, owned := owners[c.CheckID]
		if !owned {
			continue
		}
		rec, err := m.current(k)
		if err != nil {
			return err
		}
		if rec.status != c.Status && !state.FinalStatus(rec.status) {
			obs = append(obs, state.Observation{Key: k, Status: c.Status})
		}
	}
	rows, err := m.db.ObserveStatuses(obs, m.now())
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.statusChanges += len(rows)
	for k, r := range rows {
		m.observed[k] = r
	}
	return nil
}

// one matches a listed check: to the row that owns its check_id, else to a
// row in doubt with its label, number and amount, else it is unknown.
func (m *matcher) one(c *echeck.Check, owners map[string]state.RowKey) error {
	if c.CheckID == "" {
		m.log.Warn("listed check without a check_id ignored", "label", c.Label, "number", c.Number)
		return nil
	}
	k, owned := owners[c.CheckID]
	if owned {
		rec, err := m.current(k)
		if err != nil {
			return err
		}
		return m.matched(rec, c)
	}
	row, err := m.resolve(c)
	if err != nil || row != nil {
		if err == nil {
			err = m.matched(recordOf(row), c)
		}
		return err
	}
	m.mu.Lock()
	if !m.explained[c.CheckID] {
		cp := *c
		m.unknown[c.CheckID] = &cp
	}
	m.mu.Unlock()
	return nil
}

// current returns the record of row k: the one the ledger scan made, or,
// when the scan has not reached the row yet, one read now. Comparing a
// listed check with a record instead of the row saves decoding every row
// twice; anything the match writes is decided on a fresh read (matched).
func (m *matcher) current(k state.RowKey) (*record, error) {
	m.mu.Lock()
	rec := m.records[k]
	m.mu.Unlock()
	if rec != nil {
		return rec, nil
	}
	row, err := m.db.Row(k)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", k, err)
	}
	rec = recordOf(row)
	m.put(rec)
	return rec, nil
}

// matched records what the service says of a row's check: a new status
// goes into the ledger; a difference in amount, number or label, or a
// final status that moved, becomes an exception. Records are never
// changed once made, only replaced, so rec may be read without the lock.
func (m *matcher) matched(rec *record, c *echeck.Check) error {
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
	m.putLocked(rec)
	m.checked[rec.key] = true
	delete(m.unknown, c.CheckID)
	k := KindMismatch + ":" + c.CheckID
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
func (m *matcher) observe(k state.RowKey, status string) (*state.Row, error) {
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
	if row.CheckStatus == status || state.FinalStatus(row.CheckStatus) {
		return row, nil
	}
	changed, err := m.db.ObserveStatus(k, status, m.now())
	if err != nil {
		return nil, err
	}
	if changed {
		m.mu.Lock()
		m.statusChanges++
		m.mu.Unlock()
	}
	if row, err = m.db.Row(k); err != nil {
		return nil, fmt.Errorf("read %s: %w", k, err)
	}
	return row, nil
}

// differences lists how the check at the service differs from the row.
func differences(rec *record, c *echeck.Check) []string {
	var d []string
	if c.Amount != rec.amount {
		d = append(d, fmt.Sprintf("amount: batchd %s, service %s", rec.amount, c.Amount))
	}
	if normNumber(c.Number) != normNumber(rec.number) {
		d = append(d, fmt.Sprintf("number: batchd %s, service %s", rec.number, c.Number))
	}
	if strings.TrimSpace(c.Label) != strings.TrimSpace(rec.label) {
		d = append(d, fmt.Sprintf("label: batchd %q, service %q", rec.label, c.Label))
	}
	return d
}

// resolve looks for a row in doubt that c belongs to, by label, number and
// amount, and records c as its check. It returns nil when there is none.
func (m *matcher) resolve(c *echeck.Check) (*state.Row, error) {
	id := identity(c.Label, c.Number)
	m.resolveMu.Lock()
	defer m.resolveMu.Unlock()
	m.mu.Lock()
	cands := m.doubts[id]
	m.mu.Unlock()
	var match *doubtRow
	for i := range cands {
		if cands[i].amount == c.Amount {
			match = &cands[i]
		}
	}
	if match == nil {
		if len(cands) > 0 {
			m.doubtAmountMismatch(cands[0], c)
		}
		return nil, nil
	}
	m.mu.Lock()
	done := m.resolved[match.key]
	m.mu.Unlock()
	if done {
		return nil, nil // the row took another check: c is the unknown one
	}
	row, err := m.db.Created(match.key, state.CheckResult{
		CheckID: c.CheckID, Status: c.Status, Created: serviceTime(c.Date), Risk: riskOf(c),
		FundConfirmation: fundsOf(c), Note: "found by reconcile: a listed check carries the row's label, number and amount",
	})
	if err != nil {
		// submit may have resolved the row meanwhile, to this check or another.
		if r2, err2 := m.db.RowByCheck(c.CheckID); err2 == nil {
			return r2, nil
		}
		if cur, err2 := m.db.Row(match.key); err2 == nil && cur.State != state.InDoubt {
			return nil, nil
		}
		return nil, fmt.Errorf("resolve %s with check %s: %w", match.key, c.CheckID, err)
	}
	m.mu.Lock()
	m.resolved[match.key] = true
	m.mu.Unlock()
	m.log.Info("row in doubt resolved by a listed check", "row", match.key.String(), "check_id", c.CheckID)
	return row, nil
}

// doubtAmountMismatch reports a check that carries the label and number of
// a row in doubt but another amount. The row stays in doubt.
func (m *matcher) doubtAmountMismatch(d doubtRow, c *echeck.Check) {
	file := m.file(d.key.Batch)
	m.mu.Lock()
	defer m.mu.Unlock()
	e := &exception{kind: KindMismatch, checkID: c.CheckID, key: d.key, hasRow: true, file: file,
		label: d.label, number: d.number, amount: d.amount, status: c.Status,
		detail: fmt.Sprintf("row in doubt: a check with its label and number exists with amount %s, the row's amount is %s", c.Amount, d.amount),
		action: actionDoubtMismatch}
	m.excs[KindMismatch+":"+c.CheckID] = e
	m.explained[c.CheckID] = true
	delete(m.unknown, c.CheckID)
}

// serviceTime reads a check's date, "YYYY-MM-DD HH:MM:SS" in UTC, as
// submit does; an unreadable date gives the zero time.
func serviceTime(s string) time.Time {
	t, err := time.Parse(time.DateTime, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

func riskOf(c *echeck.Check) string {
	if c.BasicVerification != nil {
		return c.BasicVerification.Risk
	}
	return ""
}

func fundsOf(c *echeck.Check) string {
	if c.FundsConfirmation != nil {
		return c.FundsConfirmation.Verification
	}
	return ""
}
