package funding

import (
	"context"
	"errors"

	"github.com/batchd/batchd/internal/money"
)

// Service is what onboarding needs of the ACH API. internal/ach implements
// it over HTTP. Its errors classify by payment.FailureOf as the eCheck
// service's do (payment.ErrKeyRefused, ErrRefused, ErrNotDone; anything
// else may have been carried out), and wrap the sentinels below where the
// row's outcome depends on which refusal it was.
type Service interface {
	// CreateCustomer creates a customer and returns its user_id.
	CreateCustomer(ctx context.Context, c Customer) (string, error)
	// FindCustomer walks the whole customer list for one whose email is
	// c's (EmailKey); found is false only after a complete walk.
	FindCustomer(ctx context.Context, email string) (userID string, found bool, err error)
	// CreateSource creates the funding source of r for customer userID by
	// r.Method: OnDemand, MicroDeposits (Pending; no initiation) or
	// Processor.
	CreateSource(ctx context.Context, userID string, r *Request) (*Source, error)
	// Sources lists every funding source of a customer (no paging).
	Sources(ctx context.Context, userID string) ([]Source, error)
	// Source reads one funding source.
	Source(ctx context.Context, id string) (*Source, error)
	// InitiateVerification sends the two micro-deposits; from
	// DeprecationDate on it fails with ErrDeprecated.
	InitiateVerification(ctx context.Context, sourceID string) error
	// Verify completes a micro-deposit verification.
	Verify(ctx context.Context, sourceID string, amounts [2]money.Cents) (*Source, error)
}

// Refusals a Service's errors wrap (beside payment.ErrRefused) so that a
// row can say what to do next.
var (
	// ErrDeprecated: micro-deposit initiation is deprecated (HTTP 410).
	ErrDeprecated = errors.New("micro-deposit verification is deprecated")
	// ErrInvalidToken: the processor token is not valid for this service
	// (issued for another processor or environment, revoked, or used).
	ErrInvalidToken = errors.New("invalid processor token")
	// ErrAccountTaken: the account is linked to another customer.
	ErrAccountTaken = errors.New("bank account associated with another customer")
	// ErrTooManySources: the customer has the most sources allowed.
	ErrTooManySources = errors.New("customer has the maximum number of bank accounts")
	// ErrCustomerNotFound: the user_id does not exist or is another
	// merchant's.
	ErrCustomerNotFound = errors.New("customer not found")
)
