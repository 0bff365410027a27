package state

import (
	"fmt"
	"slices"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// The funding rows' transitions, as onboarding drives them. Those that
// workers call concurrently go through bbolt's Batch (group commit), as
// the payment rows' do.

// SendSource marks a pending funding row in flight, counting the attempt,
// and records before: the customer's sources just before a processor
// token is sent, which is how a lost exchange's source is told from the
// customer's others (funding.Belongs). When it returns nil the intent is
// on disk, and only then may the request leave.
func (d *DB) SendSource(k payment.RowKey, before []string) (*funding.Row, error) {
	return sourceRows.send(d, k, func(r *funding.Row) { r.SourcesBefore = slices.Clone(before) })
}

// CustomerFound records the row's customer as soon as it is known, on a
// row in flight or in doubt, so that a lost answer of the source's create
// is looked up under it. The same customer recorded again without a note
// adds no step.
func (d *DB) CustomerFound(k payment.RowKey, userID, note string) (*funding.Row, error) {
	if userID == "" {
		return nil, fmt.Errorf("funding row %s: customer found without a user_id", k)
	}
	var out *funding.Row
	err := d.batch(func(tx kv.Tx) error {
		r, err := sourceRows.get(d.ring(), tx, k)
		if err != nil {
			return err
		}
		if _, err := nextSource(ViaCustomer, r.State); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if r.UserID == userID && note == "" {
			out = r
			return nil
		}
		out, err = sourceRows.apply(d, tx, k, ViaCustomer, note, func(r *funding.Row) error {
			r.UserID = userID
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s row %s: %w", ViaCustomer, k, err)
	}
	return out, nil
}

// SourceCreated settles a row in flight or in doubt as submitted: its
// source exists (created, or found after a lost answer), or its
// verification is done. It refuses (payment.ErrCheckOwned) a source
// another row owns; a Verify row names a source another row created and
// is never its owner.
func (d *DB) SourceCreated(k payment.RowKey, res funding.Result) (*funding.Row, error) {
	if res.SourceID == "" {
		return nil, fmt.Errorf("funding row %s: created without a source id", k)
	}
	seen := d.now().UTC()
	return sourceRows.batchApply(d, k, payment.Create, res.Note, func(r *funding.Row) error {
		r.SourceID, r.Status, r.StatusSeenAt = res.SourceID, res.Status, seen
		r.BankName, r.LastFour, r.NextStep = res.BankName, res.LastFour, res.NextStep
		r.Error = ""
		return nil
	})
}

// RejectSource records that the service refused the row's request for
// good, with its message and what the finance team can do instead.
func (d *DB) RejectSource(k payment.RowKey, message, nextStep string) (*funding.Row, error) {
	return sourceRows.batchApply(d, k, payment.Reject, "refused by the API", func(r *funding.Row) error {
		r.Error, r.NextStep = message, nextStep
		return nil
	})
}

// DoubtSource records that a request's answer was lost: the customer or
// the source may exist, and the row is looked up before it is sent again.
func (d *DB) DoubtSource(k payment.RowKey, reason string) (*funding.Row, error) {
	return sourceRows.doubt(d, k, reason)
}

// ReleaseSource returns a row in flight or in doubt to pending: its
// request certainly made no source (refused before it was processed, or a
// lookup proved there is none). The customer found stays recorded.
func (d *DB) ReleaseSource(k payment.RowKey, reason string) (*funding.Row, error) {
	return sourceRows.batchApply(d, k, payment.Release, reason, nil)
}

// Initiated records, on a submitted row, that micro-deposit verification
// was initiated at at (and clears the row's next step), or, when nextStep
// is given, that it cannot be (deprecated): the row keeps no initiation
// time and says what the customer must do instead.
func (d *DB) Initiated(k payment.RowKey, at time.Time, nextStep string) (*funding.Row, error) {
	if at.IsZero() {
		at = d.now()
	}
	return sourceRows.batchApply(d, k, ViaInitiate, nextStep, func(r *funding.Row) error {
		if nextStep == "" {
			r.Initiated = at.UTC()
		}
		r.NextStep = nextStep
		return nil
	})
}

// RecoverSourcesInFlight turns every funding row left in flight by an
// earlier process into a row in doubt, in one transaction: its request
// may have left before the process stopped. It returns how many.
func (d *DB) RecoverSourcesInFlight() (int, error) { return sourceRows.recoverInFlight(d) }

// ObserveSources records source statuses seen at the service in one
// transaction, and returns the rows it changed, as they now are. Only a
// submitted row whose status is Tracked (pending) changes, and only to
// another status: the row of a verified, unverified, failed or deleted
// source keeps what it has, and a status seen again adds no step.
func (d *DB) ObserveSources(obs []funding.Observation, at time.Time) (map[payment.RowKey]*funding.Row, error) {
	changed, err := observe(d, sourceRows, obs, func(o funding.Observation) payment.RowKey { return o.Key },
		func(r *funding.Row, o funding.Observation) bool { return sourceMoves(r, o.Status) },
		func(r *funding.Row, o funding.Observation) { seeSource(r, o.Status, at) })
	if err != nil {
		return nil, fmt.Errorf("observe %d source statuses: %w", len(obs), err)
	}
	return changed, nil
}

// sourceMoves is the rule for a source status seen at the service,
// polled or pushed: only a row whose status is Tracked (pending) takes
// one, and only another, non-empty one.
func sourceMoves(r *funding.Row, s funding.Status) bool {
	return sourceTracked(r) && s != "" && s != r.Status
}

// seeSource records on r that its source was seen in status s at at.
// Reconcile and webhooks both apply a status through it.
func seeSource(r *funding.Row, s funding.Status, at time.Time) {
	r.Status, r.StatusSeenAt = s, at.UTC()
}
