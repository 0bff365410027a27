package onboard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/rowrun"
)

// ErrLookup wraps a lookup of a row in doubt that could not be completed:
// the row stays in doubt and is never resent on its account. It is a
// failure of the service, filed under "api".
var ErrLookup = fmt.Errorf("lookup of funding-source rows in doubt failed: %w", payment.ErrService)

// Resolution is what Resolve did with a row in doubt.
type Resolution int

// The resolutions.
const (
	// Unresolved: the row is as it was, or another job settled it.
	Unresolved Resolution = iota
	// Bound: the row's source (or verification) was found and recorded.
	Bound
	// Released: the service certainly holds nothing of the row; it is
	// pending, to be sent again.
	Released
)

// Resolver looks rows in doubt up at the service.
type Resolver struct {
	Ledger  funding.Ledger
	Service funding.Service
	// Retry governs each read of a lookup; a read that still fails leaves
	// the row in doubt (ErrLookup).
	Retry retry.Policy
	Log   *slog.Logger
}

// Resolve settles one row in doubt (or in flight). It is the only code
// that binds a source to such a row, and the only code that releases one
// to be sent again:
//
//   - a Verify row: the source is read; verified, it is recorded (the
//     verification took effect), else the row is released;
//   - a row with no customer recorded never had its source created (the
//     customer is recorded before): its customer, when the file gave
//     one, is looked for by email (a complete walk) and recorded if found,
//     and the row is released;
//   - a row with its customer: the customer's sources are listed and the
//     first that funding.Belongs to the row is recorded; when none does,
//     the row is released.
//
// A lookup that fails returns an error wrapping ErrLookup (or
// payment.ErrKeyRefused, or a ledger failure) and changes nothing more.
func (v *Resolver) Resolve(ctx context.Context, row *funding.Row) (Resolution, error) {
	if row.State != payment.InDoubt && row.State != payment.InFlight {
		return Unresolved, nil
	}
	switch {
	case row.Request.Method == funding.Verify:
		return v.resolveVerify(ctx, row)
	case row.UserID == "":
		return v.resolveCustomer(ctx, row)
	}
	var srcs []funding.Source
	if err := v.read(ctx, "list the customer's funding sources", func(ctx context.Context) (err error) {
		srcs, err = v.Service.Sources(ctx, row.UserID)
		return err
	}); err != nil {
		return Unresolved, err
	}
	ids := make([]string, 0, len(srcs))
	for _, s := range srcs {
		if s.ID != "" {
			ids = append(ids, s.ID)
		}
	}
	owners, err := v.Ledger.SourceOwners(ids)
	if err != nil {
		return Unresolved, fmt.Errorf("look up the owners of %d funding sources: %w", len(ids), err)
	}
	for i := range srcs {
		s := &srcs[i]
		k, owned := owners[s.ID]
		if !funding.Belongs(row, s, funding.Owner{Key: k, Owned: owned}) {
			continue
		}
		_, err := v.Ledger.SourceCreated(row.Key, funding.ResultOf(s, "found among the customer's funding sources after a lost answer"))
		switch {
		case errors.Is(err, payment.ErrCheckOwned):
			continue // bound to another row meanwhile
		case errors.Is(err, payment.ErrIllegal):
			return Unresolved, nil // settled by another job since it was read
		case err != nil:
			return Unresolved, fmt.Errorf("record funding source %s for %s: %w", s.ID, row.Key, err)
		}
		v.log().Info("funding source found after a lost answer", "row", row.Key.String(), "source_id", s.ID)
		return Bound, nil
	}
	return v.release(row.Key, "no funding source of this row at the service; sending again")
}

// resolveVerify settles a Verify row: the verification took effect
// exactly when the source is verified.
func (v *Resolver) resolveVerify(ctx context.Context, row *funding.Row) (Resolution, error) {
	var src *funding.Source
	err := v.read(ctx, "read the funding source", func(ctx context.Context) (err error) {
		src, err = v.Service.Source(ctx, row.Request.SourceID)
		return err
	})
	if errors.Is(err, payment.ErrRefused) {
		// No such source: no verification can have taken effect. Sent
		// again, the row is refused with the service's words.
		return v.release(row.Key, "the funding source is unknown at the service; sending again")
	}
	if err != nil {
		return Unresolved, err
	}
	if src.Status != funding.StatusVerified {
		return v.release(row.Key, fmt.Sprintf("the funding source is %s at the service, not verified; verifying again", src.Status))
	}
	_, err = v.Ledger.SourceCreated(row.Key, funding.ResultOf(src, "found verified after a lost answer"))
	switch {
	case errors.Is(err, payment.ErrIllegal):
		return Unresolved, nil
	case err != nil:
		return Unresolved, fmt.Errorf("record the verification of %s: %w", row.Key, err)
	}
	return Bound, nil
}

// resolveCustomer settles a row whose customer step had not finished: its
// source was never requested, so it is sent again, under its customer if
// the lost create made one.
func (v *Resolver) resolveCustomer(ctx context.Context, row *funding.Row) (Resolution, error) {
	email := row.Request.Customer.Email
	if row.Request.UserID != "" || email == "" {
		return v.release(row.Key, "no request of this row had left; sending again")
	}
	var id string
	var found bool
	if err := v.read(ctx, "find the customer by email", func(ctx context.Context) (err error) {
		id, found, err = v.Service.FindCustomer(ctx, email)
		return err
	}); err != nil {
		return Unresolved, err
	}
	if !found {
		return v.release(row.Key, "no customer with this email at the service; sending again")
	}
	_, err := v.Ledger.CustomerFound(row.Key, id, "found by email after a lost answer")
	switch {
	case errors.Is(err, payment.ErrIllegal):
		return Unresolved, nil
	case err != nil:
		return Unresolved, fmt.Errorf("record the customer of %s: %w", row.Key, err)
	}
	return v.release(row.Key, "customer found by email after a lost answer; sending the funding source")
}

// release returns a row in doubt to pending, unless another job settled
// it meanwhile.
func (v *Resolver) release(k payment.RowKey, reason string) (Resolution, error) {
	_, err := v.Ledger.ReleaseSource(k, reason)
	switch {
	case errors.Is(err, payment.ErrIllegal):
		return Unresolved, nil
	case err != nil:
		return Unresolved, fmt.Errorf("release %s: %w", k, err)
	}
	return Released, nil
}

// read runs one read of a lookup, retried; a read that still fails is an
// ErrLookup, unless the key was refused.
func (v *Resolver) read(ctx context.Context, what string, op func(ctx context.Context) error) error {
	err := rowrun.Read(ctx, v.Retry, op)
	if err == nil || errors.Is(err, payment.ErrKeyRefused) || errors.Is(err, payment.ErrRefused) || ctx.Err() != nil {
		return err
	}
	return fmt.Errorf("%w: %s: %w", ErrLookup, what, err)
}

func (v *Resolver) log() *slog.Logger {
	if v.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return v.Log
}

// resolveDue looks up the due rows in doubt one at a time, before anything
// is sent. A row whose lookup fails stays in doubt, is given up on for
// this run and is never resent on its account.
func (r *Runner) resolveDue(ctx context.Context, due []*funding.Row) error {
	v := &Resolver{Ledger: r.led, Service: r.svc, Retry: r.run.Retry(), Log: r.log}
	for _, row := range due {
		if r.run.Stopping(ctx) {
			break
		}
		res, err := v.Resolve(ctx, row)
		switch {
		case errors.Is(err, payment.ErrKeyRefused):
			return r.run.Stop(err)
		case errors.Is(err, ErrLookup), errors.Is(err, payment.ErrRefused):
			r.run.GiveUp(row.Key, err)
			continue
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return r.run.LedgerFailed(err)
		}
		r.resolved(row, res)
	}
	if err := r.run.HaltedBy(); err != nil {
		return err
	}
	return ctx.Err()
}

// resolved counts what a lookup did.
func (r *Runner) resolved(row *funding.Row, res Resolution) {
	switch {
	case res == Bound && row.Request.Method == funding.Verify:
		r.run.count(func(s *Summary) { s.Verified++ })
	case res == Bound:
		r.run.count(func(s *Summary) { s.Created++ })
	case res == Released:
		r.run.count(func(s *Summary) { s.Resent++ })
	}
}
