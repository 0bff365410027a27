package payment

import (
	"context"
	"errors"
	"fmt"
)

// Void is the one void rule: batchd's risk voids (submit.void_on_risk) and
// cancel files both stop a check through it. It voids check id if it is
// in process and says how the request settles; a check found in another
// status is settled by that status (SettledBy) without a request. A void
// refused or unanswered is settled by reading the check again: the void
// may have been done (void), or the check moved on (too late). sentBefore
// is true when an earlier attempt's void may have left, so that a check
// found void is batchd's. An error leaves the void undone, to try again.
func Void(ctx context.Context, svc Service, id string, sentBefore bool) (CancelOutcome, Status, string, error) {
	ck, err := svc.GetCheck(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return CancelNotFound, "", "the service does not know check " + id + ": check the id with the status report", nil
	case err != nil && FailureOf(err) == FailRefused:
		return CancelRefused, "", ServiceMessage(err), nil
	case err != nil:
		return "", "", "", fmt.Errorf("read check %s before voiding it: %w", id, err)
	case ck.Status != StatusInProcess:
		o, note := SettledBy(ck.Status, sentBefore)
		return o, ck.Status, note, nil
	}
	derr := svc.DeleteCheck(ctx, id)
	if derr == nil {
		return CancelVoided, StatusVoid, "", nil
	}
	if f := FailureOf(derr); f != FailRefused && f != FailLost {
		return "", "", "", fmt.Errorf("void check %s: %w", id, derr)
	}
	// Refused or lost: the check may have moved on, or the void may have
	// been done; only the check's status now says which.
	again, err := svc.GetCheck(ctx, id)
	if err != nil {
		return "", "", "", fmt.Errorf("read check %s after its void went unanswered (%v): %w", id, derr, err)
	}
	switch {
	case again.Status != StatusInProcess:
		o, note := SettledBy(again.Status, true)
		return o, again.Status, note, nil
	case FailureOf(derr) == FailRefused:
		return CancelRefused, again.Status, ServiceMessage(derr), nil
	}
	return "", "", "", fmt.Errorf("void check %s: the answer was lost and the check is still in process: %w", id, derr)
}

// SettledBy is how a void settles on a check found in status s, not in
// process; ours is true when batchd may have voided it itself.
func SettledBy(s Status, ours bool) (CancelOutcome, string) {
	switch s {
	case StatusVoid:
		if ours {
			return CancelVoided, "voided: the answer to an earlier void was lost, and the check is now void"
		}
		return CancelAlreadyVoid, "the check was already void: nothing to do"
	case StatusPrinted, StatusDeposited:
		return CancelTooLate, "too late to void: the check is " + string(s)
	case StatusFailed, StatusDeleted:
		return CancelFinal, "the check is already " + string(s) + ": there is nothing to void"
	case StatusInReview:
		return CancelRefused, "the check is held for review at the service, which voids only checks in process: ask the service to cancel it"
	}
	return CancelRefused, fmt.Sprintf("the check's status is %q, which batchd cannot void", s)
}
