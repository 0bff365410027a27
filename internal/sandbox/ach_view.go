package sandbox

import (
	"strconv"
	"strings"

	"github.com/batchd/batchd/internal/redact"
)

// Wire layouts of ACH times: customers as the eCheck API writes dates,
// funding sources as the specification (§2.5) shows created_at.
const (
	customerTimeLayout = timeLayout
	sourceDateLayout   = "01/02/2006"
)

// achBool is a boolean of an ACH answer: JSON true/false, or 0/1 in
// quirks mode (docs/ach-wire.md, Faults). Envelope fields (success,
// error) stay JSON booleans in both modes, because clients test them
// first; only data fields use achBool.
type achBool struct {
	v, num bool
}

// MarshalJSON writes the boolean as true/false or as 1/0.
func (b achBool) MarshalJSON() ([]byte, error) {
	if b.num {
		return strconv.AppendInt(nil, int64(boolInt(b.v)), 10), nil
	}
	return strconv.AppendBool(nil, b.v), nil
}

// sourceView is the funding source object, the same in every answer.
// In quirks mode a source that is an element of a list carries its id
// under "id" only.
type sourceView struct {
	SourceID        string  `json:"source_id,omitempty"`
	FundingSourceID string  `json:"funding_source_id,omitempty"`
	ID              string  `json:"id,omitempty"`
	UserID          string  `json:"user_id"`
	Status          string  `json:"status"`
	IsPrimary       achBool `json:"is_primary"`
	Routing         string  `json:"routing"`
	Bank            string  `json:"bank"`
	BankName        string  `json:"bank_name"`
	Lbacc           string  `json:"lbacc"`
	LastFour        string  `json:"last_four"`
	Type            string  `json:"type"`
	Nickname        string  `json:"nickname"`
	CreatedAt       string  `json:"created_at"`
}

// sourceSummary is a source as a customer object lists it.
type sourceSummary struct {
	SourceID  string  `json:"source_id,omitempty"`
	ID        string  `json:"id,omitempty"`
	Status    string  `json:"status"`
	IsPrimary achBool `json:"is_primary"`
}

// userView is the customer object. In quirks mode a customer that is an
// element of a list carries its id under "id" only.
type userView struct {
	UserID    string          `json:"user_id,omitempty"`
	ID        string          `json:"id,omitempty"`
	FirstName string          `json:"firstName"`
	LastName  string          `json:"lastName"`
	Email     string          `json:"email"`
	Phone     string          `json:"phone"`
	CreatedAt string          `json:"created_at"`
	Sources   []sourceSummary `json:"sources"`
}

// srcStatus is a funding-source status as answers write it: lowercase in
// quirks mode ("pending", "unverified"), as public clients' status words
// suggest the real service may.
func (s *Server) srcStatus(st string) string {
	if s.opts.Quirks {
		return strings.ToLower(st)
	}
	return st
}

// viewSource renders src; inList says it is an element of a list.
func (s *Server) viewSource(src *fundingSource, inList bool) sourceView {
	b, _ := lookupBank(src.routing)
	last4 := redact.Last4(src.account)
	v := sourceView{
		UserID: src.cust.id, Status: s.srcStatus(src.status),
		IsPrimary: achBool{src.primary, s.opts.Quirks}, Routing: src.routing,
		Bank: b.Name, BankName: b.Name, Lbacc: last4, LastFour: last4,
		Type: src.kind, Nickname: src.nickname, CreatedAt: src.created.Format(sourceDateLayout),
	}
	if inList && s.opts.Quirks {
		v.ID = src.id
	} else {
		v.SourceID, v.FundingSourceID = src.id, src.id
	}
	return v
}

// viewUser renders c with a summary of its sources, deleted ones too.
func (s *Server) viewUser(c *customer, inList bool) userView {
	v := userView{
		FirstName: c.first, LastName: c.last, Email: c.email, Phone: c.tel,
		CreatedAt: c.created.Format(customerTimeLayout), Sources: make([]sourceSummary, 0, len(c.sources)),
	}
	if inList && s.opts.Quirks {
		v.ID = c.id
	} else {
		v.UserID = c.id
	}
	for _, src := range c.sources {
		sum := sourceSummary{Status: s.srcStatus(src.status), IsPrimary: achBool{src.primary, s.opts.Quirks}}
		if s.opts.Quirks {
			sum.ID = src.id
		} else {
			sum.SourceID = src.id
		}
		v.Sources = append(v.Sources, sum)
	}
	return v
}
