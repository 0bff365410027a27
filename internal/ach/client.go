package ach

import (
	"errors"
	"fmt"

	"github.com/batchd/batchd/internal/apiwire"
)

// Operation names. They name the Op of an apiwire.Error and the endpoint
// passed to apiwire.Options.Observe; they never contain an identifier, so they are safe as
// metric labels, and their "ach." prefix keeps them apart from the eCheck
// client's operations in the same metric.
const (
	OpUserCreate            = "ach.user.create"                        // POST /user
	OpUserGet               = "ach.user.get"                           // GET /user/:{id}
	OpUserList              = "ach.user.list"                          // GET /user
	OpSourceCreate          = "ach.fundingsource.create"               // POST /funding-source
	OpSourceCreateOnDemand  = "ach.fundingsource.ondemand"             // POST /on-demand/funding-source
	OpSourceCreateProcessor = "ach.fundingsource.processor"            // POST /funding-source/processor/{provider}
	OpSourceList            = "ach.fundingsource.list"                 // GET /funding-source/user/:{id}
	OpSourceGet             = "ach.fundingsource.get"                  // GET /funding-source/:{id}
	OpSourceRemove          = "ach.fundingsource.remove"               // POST /funding-source/remove
	OpVerificationInitiate  = "ach.fundingsource.initiateverification" // POST /funding-source/initiate/verification
	OpVerify                = "ach.fundingsource.verify"               // POST /funding-source/verify
	OpAccountAvailable      = "ach.accounts.available"                 // GET /accounts
	OpAccountDelete         = "ach.accounts.delete"                    // POST /accounts/delete
	OpDebit                 = "ach.debit"                              // POST /ach-debit
	OpCredit                = "ach.credit"                             // POST /check/send
	OpWebhookRegister       = "ach.webhook.register"                   // POST /webhooks
	OpWebhookGet            = "ach.webhook.get"                        // GET /webhooks
)

// Ops lists every Op constant, so that a metrics registry can pre-create
// its label values.
var Ops = []string{
	OpUserCreate, OpUserGet, OpUserList, OpSourceCreate, OpSourceCreateOnDemand,
	OpSourceCreateProcessor, OpSourceList, OpSourceGet, OpSourceRemove,
	OpVerificationInitiate, OpVerify, OpAccountAvailable, OpAccountDelete,
	OpDebit, OpCredit, OpWebhookRegister, OpWebhookGet,
}

// PathPrefix is where the ACH API lives below the service's base URL
// (spec 9), so that one BaseURL serves both the eCheck and the ACH client.
const PathPrefix = "/ach/v2"

// maxBody caps how much of a response is read, against a runaway server.
const maxBody = 4 << 20

// wire is what sets the ACH API apart in the shared HTTP core.
var wire = apiwire.Wire{Name: "ach", PathPrefix: PathPrefix, MaxBody: maxBody, Message: apiMessage,
	Flagged: errorFlagged, Conditions: conditions}

// Client speaks HTTP to the ACH API. Each method sends exactly one request
// (after waiting on the Limiter) and never retries: the retry policy
// belongs to the caller, which decides with apiwire.ClassOf and errors.Is. A
// Client is safe for concurrent use.
type Client struct {
	core *apiwire.Core
}

// New checks opts (BaseURL and Key are required; pass the eCheck
// client's Limiter) and returns a Client. It fails on a missing or
// non-https BaseURL (http only to loopback), a missing key, or a key with
// characters not allowed in an HTTP header. Its errors never show the key.
func New(opts apiwire.Options) (*Client, error) {
	return apiwire.Open(wire, opts, func(core *apiwire.Core) *Client { return &Client{core: core} })
}

// object is one decoded JSON object (apiwire.Object).
type object = apiwire.Object

// UserIDOf is the customer a refusal named, such as the existing customer
// of an email that is taken (ErrEmailTaken); "" when it named none.
func UserIDOf(err error) string {
	var e *apiwire.Error
	if !errors.As(err, &e) || !e.Refused || e.Answer == nil {
		return ""
	}
	f := fields{m: e.Answer}
	if id := f.str("user_id", "customer_id"); id != "" {
		return id
	}
	if u := nested(e.Answer, "user", "customer"); u != nil {
		return (&fields{m: u}).str("user_id", "customer_id", "id")
	}
	return ""
}

// validID is apiwire.ValidID, naming what the identifier is.
func validID(what, id string) error {
	if err := apiwire.ValidID(id); err != nil {
		return fmt.Errorf("%s %w", what, err)
	}
	return nil
}
