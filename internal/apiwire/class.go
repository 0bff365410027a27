package apiwire

import (
	"context"
	"errors"
	"strconv"

	"github.com/batchd/batchd/internal/payment"
)

// Class tells a caller what it may do after a failed call. It is the one
// class of both clients, so that batchd's retry policy treats both APIs
// alike. The zero Class is not a class: ClassOf returns it only for a nil
// error.
//
// The domain keeps its own enum of the same outcomes, payment.Failure,
// because the jobs decide by it and must never depend on HTTP (their
// fakes produce it without a wire). The wire owns Class because only the
// wire sees the answer; the one table between the two is outcomes below,
// here because this is the one package that knows both.
type Class int

const (
	// Retryable: the service did not act on the request (it was never
	// fully sent, or the service said so with 429, 408, or a 5xx to a
	// call without an effect). Sending it again is safe.
	// payment.FailNotDone.
	Retryable Class = iota + 1
	// Ambiguous: a call with an effect (a create, a debit or credit, a
	// verification step) was sent but its answer was lost or unreadable,
	// so the effect may or may not have happened. The caller must find
	// out (look the check or source up) before sending it again.
	// payment.FailLost.
	Ambiguous
	// Permanent: the service refused this request (400, 402, 404, 410,
	// ...). Sending it again will fail the same way. payment.FailRefused.
	Permanent
	// Fatal: the key is missing, wrong, of the other environment, or
	// lacks permission (401, 403). Every further call will fail too; the
	// run should stop. payment.FailKeyRefused.
	Fatal
)

// classNames are the classes' names, as texts and logs show them.
var classNames = map[Class]string{Retryable: "retryable", Ambiguous: "ambiguous", Permanent: "permanent", Fatal: "fatal"}

// String returns the lower-case name of c.
func (c Class) String() string {
	if s, ok := classNames[c]; ok {
		return s
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

// outcomes is the one table from a Class to the domain's failure: an
// error filed by Domain is the sentinel of its class, which
// payment.FailureOf reads back. Ambiguous has none on purpose: the domain
// reads an error without one as lost (payment.FailLost), the safe reading
// on the money path.
var outcomes = map[Class]error{
	Retryable: payment.ErrNotDone,
	Permanent: payment.ErrRefused,
	Fatal:     payment.ErrKeyRefused,
}

// byEffect is the class of one kind of answer to a call without an effect
// (plain) and to one with an effect, which must not happen twice.
type byEffect struct{ plain, effect Class }

func (b byEffect) of(effect bool) Class {
	if effect {
		return b.effect
	}
	return b.plain
}

// statuses is the table from a non-2xx HTTP status to a Class, first
// range first. A 5xx may follow an effect carried out before the server
// failed, so it is Ambiguous for a call with an effect; 408 means the
// server did not receive the whole request, so it is Retryable even then.
// A status outside the table (a redirect, which the client never follows)
// is otherStatus: it does not say whether the effect happened.
var statuses = []struct {
	from, to int
	class    byEffect
}{
	{401, 401, byEffect{Fatal, Fatal}},
	{403, 403, byEffect{Fatal, Fatal}},
	{408, 408, byEffect{Retryable, Retryable}},
	{429, 429, byEffect{Retryable, Retryable}},
	{400, 499, byEffect{Permanent, Permanent}},
	{500, 599, byEffect{Retryable, Ambiguous}},
}

// The answers that are not a status of the table, by what happened.
var (
	otherStatus = byEffect{Permanent, Ambiguous}
	// notSent: the request never left (the Limiter's wait or the send
	// gate stopped it, or it did not reach the connection whole).
	notSent = byEffect{Retryable, Retryable}
	// mayBeSent: the answer was lost after the request may have reached
	// the service.
	mayBeSent = byEffect{Retryable, Ambiguous}
	// unreadable: a 2xx that cannot be read; resending a call without an
	// effect would not change its shape.
	unreadable = byEffect{Permanent, Ambiguous}
	// flagged: a 2xx that says it failed; flaggedShowing, one that says so
	// yet shows the created object: trust neither.
	flagged        = byEffect{Permanent, Permanent}
	flaggedShowing = byEffect{Permanent, Ambiguous}
)

// Classify classifies a non-2xx answer to a call with or without an
// effect, by the table statuses.
func Classify(effect bool, status int) Class {
	for _, s := range statuses {
		if status >= s.from && status <= s.to {
			return s.class.of(effect)
		}
	}
	return otherStatus.of(effect)
}

// ClassOf classifies any error:
//   - nil gives the zero Class;
//   - an *Error anywhere in the chain gives its Class. The client already
//     folded cancellation into it: a call with an effect whose request
//     may have been written when the caller's context ended is Ambiguous,
//     anything else Retryable;
//   - context.Canceled or context.DeadlineExceeded without an *Error gives
//     Retryable: the clients wrap every error they return, so such an
//     error did not come from a request in flight;
//   - any other error gives Ambiguous: it did not come from a client, and
//     Ambiguous is the one class under which a caller neither resends
//     blindly nor gives up: it finds out first.
func ClassOf(err error) Class {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Retryable
	}
	return Ambiguous
}
