package payment

import (
	"context"
	"errors"
	"time"
)

// Service is what the jobs need of the payment service's check API.
// internal/echeck implements it over HTTP; the jobs never see the wire.
//
// Errors tell what happened to the request (Failure): the key refused, the
// request refused, not acted on, or answer lost. An adapter must never
// report a request that may have been carried out as FailNotDone.
type Service interface {
	// CreateCheck creates the check of row, carrying row's identity
	// (label and number) and its payment's fields.
	CreateCheck(ctx context.Context, row *Row) (*Check, error)
	// ListChecks returns one page of the check list.
	ListChecks(ctx context.Context, q CheckQuery) (*CheckPage, error)
	// GetCheck returns one check; an unknown id is an error that Is
	// ErrNotFound.
	GetCheck(ctx context.Context, id string) (*Check, error)
	// DeleteCheck voids a check.
	DeleteCheck(ctx context.Context, id string) error
	// EditCheck replaces the fields of check id by row's (its payment's
	// fields and its identity, bank details in full): the API's edit
	// takes the whole check. Only a check in process can be edited.
	EditCheck(ctx context.Context, id string, row *Row) (*Check, error)
}

// CheckQuery selects a page of the check list. Dates are YYYY-MM-DD days
// of the service's own clock and time zone, which the spec does not name
// and batchd does not assume: a lookup that must find a check widens its
// range for both (see resolve.SkewBound); an empty date is no bound. The
// service documents the label filter
// only as finding "similar" checks, so a caller compares labels itself
// (Belongs).
type CheckQuery struct {
	Label            string
	FromDate, ToDate string
	Sort, Direction  string // date|number|name, ASC|DESC
	Page, Limit      int    // from 1; 1 to 100
}

// CheckPage is one page of the check list. A paging number the service
// left out reads 0: callers also stop at a page with no checks.
type CheckPage struct {
	Checks      []Check
	CurrentPage int
	LastPage    int
	PerPage     int
	Total       int
}

// Failure is what a failed request tells about its effect.
type Failure int

// The failures, from the service adapter's errors.
const (
	// FailLost: the request may have been carried out (a create whose
	// answer was lost, a timeout, a 5xx after it was written). For a
	// create, the row is in doubt. Any error an adapter does not classify
	// is taken as lost: the safe reading on the money path.
	FailLost Failure = iota
	// FailNotDone: the service certainly did not act (429, a refused
	// connection, 408); the request may be sent again.
	FailNotDone
	// FailRefused: the service refused this request for good (400, 402,
	// 404); the row is rejected with the service's message.
	FailRefused
	// FailKeyRefused: the service refused batchd's key (401, 403): nothing
	// will succeed until a person fixes it.
	FailKeyRefused
)

// The sentinels a Service's errors wrap, one per Failure but FailLost.
var (
	// ErrKeyRefused is the one error for "the API refused the key".
	ErrKeyRefused = errors.New("the API refused batchd's key (401/403): check api.key_file or BATCHD_API_KEY, that the key belongs to api.mode, and its permissions")
	// ErrRefused marks a request the service refused for good.
	ErrRefused = errors.New("refused by the service")
	// ErrNotDone marks a request the service certainly did not act on.
	ErrNotDone = errors.New("not processed by the service")
)

// FailureOf classifies err. A nil err has no failure; callers test err
// first.
func FailureOf(err error) Failure {
	switch {
	case errors.Is(err, ErrKeyRefused):
		return FailKeyRefused
	case errors.Is(err, ErrRefused):
		return FailRefused
	case errors.Is(err, ErrNotDone):
		return FailNotDone
	}
	return FailLost
}

// RetryAfter is the wait the service asked for (Retry-After) with err, or
// zero.
func RetryAfter(err error) time.Duration {
	var h interface{ RetryDelay() time.Duration }
	if errors.As(err, &h) {
		return h.RetryDelay()
	}
	return 0
}

// ServiceMessage is the service's own words of a refusal (its "message"),
// or err's text when it gave none. A rejected row keeps it.
func ServiceMessage(err error) string {
	var h interface{ ServiceMessage() string }
	if errors.As(err, &h) {
		if m := h.ServiceMessage(); m != "" {
			return m
		}
	}
	return err.Error()
}
