package echeck

import (
	"github.com/batchd/batchd/internal/apiwire"
)

// Operation names. They name the Op of an apiwire.Error and the endpoint
// passed to apiwire.Options.Observe; they never contain an identifier, so they are safe as
// metric labels.
const (
	OpCheckCreate             = "check.create"
	OpCheckList               = "check.list"
	OpCheckGet                = "check.get"
	OpCheckBankInfo           = "check.bankinfo"
	OpCheckEdit               = "check.edit"
	OpCheckDelete             = "check.delete"
	OpTokenize                = "account.tokenization"
	OpPaymentLinkCreate       = "paymentlink.create"
	OpPaymentLinkList         = "paymentlink.list"
	OpPaymentLinkChangeStatus = "paymentlink.changestatus"
)

// maxBody caps how much of a response is read, against a runaway server.
const maxBody = 10 << 20

// wire is what sets the eCheck API apart in the shared HTTP core.
var wire = apiwire.Wire{Name: "echeck", MaxBody: maxBody, Message: refusalMessage, Flagged: errorFlagged,
	Conditions: conditions}

// Client speaks HTTP to the eCheck API. It is the only code in batchd that
// does. Each method sends exactly one request (after waiting on the
// Limiter) and never retries: the retry policy belongs to the caller,
// which decides with apiwire.ClassOf. A Client is safe for concurrent use.
type Client struct {
	core *apiwire.Core
}

// New checks opts (BaseURL and Key are required) and returns a Client. It
// fails on a missing or non-https BaseURL (http only to loopback), a
// missing key, or a key with characters not allowed in an HTTP header.
func New(opts apiwire.Options) (*Client, error) {
	return apiwire.Open(wire, opts, func(core *apiwire.Core) *Client { return &Client{core: core} })
}

// object is one decoded JSON object (apiwire.Object).
type object = apiwire.Object
