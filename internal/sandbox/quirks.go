package sandbox

import (
	"strconv"
	"strings"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/redact"
)

// Quirks mode (Options.Quirks) makes the sandbox answer like a less tidy
// service than its exact default, which echoes every stored value as it
// was sent. The specification leaves the create, get, edit and list
// answers "not shown"; what it does say, and what public clients of the
// real service show (public-api-notes.md), suggests a service that keeps
// check numbers as integers, amounts as floats and masks accounts its own
// way. Each quirk below cites its evidence. They change only how values
// are stored and written; validation, faults and lifecycle are the same
// in both modes, and the exact mode's answers are unchanged byte for byte.
//
// Quirks mode draws nothing from the fault generator (Seed), so a run
// with the same seed meets the same faults in either mode.

// quirkNumber is a check number as a service that stores it as an integer
// keeps it: without leading zeros ("0000123" is "123", "000" is "0").
// Every answer then shows the stored form; it stays a JSON string, as
// public clients read it.
//
// Evidence: spec 2.1 types number as digits of length 1 to 10, and public
// clients read it as a string ("number: a string"), yet the official JS
// client sends it as a JSON number (public-api-notes.md, "Behaviour public
// clients observed"): a service that accepts 42 for "0042" most plausibly
// stores an integer. No client shows a zero-padded number coming back.
func quirkNumber(n string) string {
	if n == "" {
		return "" // not given: the service assigns one
	}
	if t := strings.TrimLeft(n, "0"); t != "" {
		return t
	}
	return "0"
}

// quirkLabelFilter is the check list's label filter in quirks mode: the
// checks whose label contains label, ignoring case, in creation order.
// (The exact mode matches the whole label exactly, from the label index.)
// Both modes store a label trimmed of surrounding white space, and trim
// the filter the same way, so "  Batch-7 " is stored and found as
// "Batch-7".
//
// Evidence: spec 2.1 describes label only as "Label used to find similar
// checks", which reads as a search rather than an equality; batchd's
// resolver (internal/submit) already compares the label again for that
// reason.
func quirkLabelFilter(cs []*check, label string) []*check {
	needle := strings.ToLower(label)
	out := make([]*check, 0, len(cs)/8)
	for _, c := range cs {
		if c.in.Label != "" && strings.Contains(strings.ToLower(c.in.Label), needle) {
			out = append(out, c)
		}
	}
	return out
}

// quirkNoLinkSearch is the payment-link list's answer, in quirks mode, to
// the search parameter: 400 "search: not a filter of this list", the
// refusal of a service whose search parameter has another name. Its
// exact mode searches (listLinks). A client that needs a link by memo
// then walks the whole list, which batchd does on this answer.
//
// Evidence: spec 4.1 gives the link list "a search parameter that
// searches by memo, amount or created_at, whose name is not shown";
// "search" is the sandbox's guess, and a client built on a guess must
// survive the guess being wrong.
func quirkNoLinkSearch() *apiError {
	return badField("search", "not a filter of this list")
}

// amount is a check or payment link amount as an answer writes it:
// exactly, as money.Cents does ("12.34"), or in quirks mode as the
// float64 cents × 0.01 written as encoding/json (and JavaScript) write a
// float64, which for many amounts carries a binary artefact: 0.57 is
// 0.5700000000000001, 19.99 is 19.990000000000002 and 1234567.89 is
// 1234567.8900000001 (about one amount in seven below 1000.00). Above 2^53
// cents a float64 no longer holds every cent, and the amount written may
// be a cent off, as a float-storing service's would.
//
// Evidence: spec 2.1 types amount as "number, float", and public clients
// read it as a JSON number ("amount: a number"); a service that keeps or
// computes amounts as binary floats writes such artefacts.
type amount struct {
	c     money.Cents
	float bool // quirks mode: the float64 rendering
}

// MarshalJSON writes the amount exactly, or as a float64 in quirks mode.
func (a amount) MarshalJSON() ([]byte, error) {
	if !a.float {
		return a.c.MarshalJSON()
	}
	return strconv.AppendFloat(nil, float64(a.c)*0.01, 'f', -1, 64), nil
}

// pageNum is a paging number of the list envelope (spec 2.7): a JSON
// string, or in quirks mode on some fields a JSON number.
type pageNum struct {
	n      int64
	number bool // quirks mode: written as a JSON number
}

// MarshalJSON writes the number as a JSON string or a JSON number.
func (p pageNum) MarshalJSON() ([]byte, error) {
	if p.number {
		return strconv.AppendInt(nil, p.n, 10), nil
	}
	b := append([]byte{'"'}, strconv.FormatInt(p.n, 10)...)
	return append(b, '"'), nil
}

// mixPaging makes the paging numbers of a quirks-mode list answer half
// strings and half numbers, alternating with the page: on odd pages from,
// last_page and total are numbers, on even pages current_page, to and
// per_page, so that every field appears in both forms over two pages.
// It is deterministic and draws nothing from the fault generator.
//
// Evidence: spec 2.7 types every paging field as a string, while
// public-api-notes.md says "Paging numbers may come as strings or
// numbers: accept both".
func (lp *listPage) mixPaging(page int64) {
	for i, p := range []*pageNum{&lp.CurrentPage, &lp.From, &lp.To, &lp.LastPage, &lp.PerPage, &lp.Total} {
		p.number = (int64(i)+page)%2 == 0
	}
}

// quirkMask masks an account number as public clients show the service
// doing: its first digit, a dot for each hidden digit, and its last three
// digits, the length of the account ("12345678909876" is
// "1..........876"). An account of 4 digits (the shortest spec 2.1
// allows) is thus shown whole; clients must mask again what they show.
//
// Evidence: public-api-notes.md, "bank_account: masked, e.g.
// 1..........876" and "A returned bank_account is masked as first digit,
// dots, last three".
func quirkMask(acct string) string {
	if len(acct) < 4 {
		return redact.Account(acct) // not an account the sandbox stores
	}
	return acct[:1] + strings.Repeat(".", len(acct)-4) + acct[len(acct)-3:]
}

// quirkKeepPhone applies the edit rule for phone in quirks mode:
// /v1/check/edit ignores phone, whether left out, empty or given, and the
// check keeps the phone it was created with. The exact mode replaces every
// field an edit sends and clears the optional ones it leaves out.
//
// Evidence: a public client's test observed that an edit does not change
// the phone (public-api-notes.md, "Behaviour public clients observed at
// the real sandbox": "An edit that omits phone leaves the phone as it
// was"). The observation cannot tell "omitted" from "ignored", so the
// quirk takes the less tidy reading: batchd must not rely on an edit
// changing a phone.
func quirkKeepPhone(in *checkInput, old *check) {
	in.Phone = old.in.Phone
}

// storeInput normalises a validated create or edit request before it is
// stored: in quirks mode the number loses its leading zeros.
func (s *Server) storeInput(in *checkInput) {
	if s.opts.Quirks {
		in.Number = quirkNumber(in.Number)
	}
}

// render is c as an answer shows it, with the quirks applied in quirks
// mode: a float amount and the service's own account mask.
func (s *Server) render(c *check) checkView {
	v := c.view()
	if s.opts.Quirks {
		v.Amount.float = true
		v.BankAccount = quirkMask(c.in.Account)
	}
	return v
}

// renderLink is a payment link as an answer shows it: in quirks mode its
// amount is a float, as a check's.
func (s *Server) renderLink(v linkView) linkView {
	if s.opts.Quirks && v.Amount != nil {
		a := *v.Amount
		a.float = true
		v.Amount = &a
	}
	return v
}
