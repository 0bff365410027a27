package sandbox

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Length limits of the ACH requests (docs/ach-wire.md).
const (
	maxCustomerName = 128 // firstName, lastName
	maxNickname     = 128
	maxDescription  = 128
	maxACHID        = 64  // user_id, source ids: ours are 36, but clients may send anything
	maxProcessorTok = 256 // processor_token
	maxProcessor    = 64  // processor name, subtype
	maxWebhookURL   = 2048
)

// achRead reads an ACH request body with the eCheck API's reader, and
// words its failures as ACH field errors.
func (s *Server) achRead(w http.ResponseWriter, r *http.Request) (params, *apiError) {
	p, aerr := readBody(w, r, s.opts.MaxBodyBytes)
	return p, achField(aerr)
}

// achField rewords a field error of fields.go ("routing_number: must be
// exactly 9 digits") as the ACH contract's example words it
// ("routing_number must be 9 digits"): the field first, then the rule.
func achField(e *apiError) *apiError {
	if e == nil || e.status != http.StatusBadRequest || e.code != "" {
		return e
	}
	name, rule, ok := strings.Cut(e.msg, ": ")
	if !ok || strings.ContainsRune(name, ' ') {
		return e
	}
	rule = strings.Replace(rule, "must be exactly ", "must be ", 1)
	return &apiError{status: e.status, msg: name + " " + rule}
}

// failed returns the first field error of f in the ACH wording.
func (f *fields) failed() *apiError { return achField(f.err) }

// sourceID reads a funding source id sent as funding_source_id (the
// specification) or source_id (public clients).
func (f *fields) sourceID(required bool) string {
	if id := f.text("funding_source_id", false, maxACHID); id != "" || f.err != nil {
		return id
	}
	id := f.text("source_id", false, maxACHID)
	if id == "" && required {
		f.fail("funding_source_id", "required")
	}
	return id
}

// bankAccount reads routing_number (9 digits) and account_number (4 to 17
// digits), both required.
func (f *fields) bankAccount() (routing, account string) {
	routing = f.digits("routing_number", true, false, 9, 9)
	account = f.digits("account_number", true, false, 4, 17)
	return routing, account
}

// amountTexts reads the verification amounts: a list "amounts" (a JSON
// array of numbers or strings, or form values amounts / amounts[]), else
// amount1 and amount2. It returns the texts as sent, unparsed; present is
// false when neither form was sent.
func (f *fields) amountTexts() (texts []string, present bool) {
	if f.err != nil {
		return nil, false
	}
	if v, ok := f.p.get("amounts"); ok && v.isJSON {
		return f.jsonAmounts(v.raw), true
	}
	if f.p.form != nil {
		vs := append(append([]string{}, f.p.form["amounts"]...), f.p.form["amounts[]"]...)
		if len(vs) == 1 {
			vs = strings.Split(vs[0], ",")
		}
		if len(vs) > 0 {
			return vs, true
		}
	}
	a1, ok1 := f.raw("amount1", true)
	a2, ok2 := f.raw("amount2", true)
	if !ok1 && !ok2 {
		return nil, false
	}
	return []string{a1, a2}, true
}

// jsonAmounts reads a JSON array whose elements are numbers or strings.
func (f *fields) jsonAmounts(raw json.RawMessage) []string {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		f.fail("amounts", "must be an array of two amounts")
		return nil
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		var s string
		switch {
		case len(e) > 0 && e[0] == '"':
			if json.Unmarshal(e, &s) != nil {
				f.fail("amounts", "must be an array of two amounts")
				return nil
			}
		case len(e) > 0 && (e[0] == '-' || (e[0] >= '0' && e[0] <= '9')):
			s = string(e)
		default:
			f.fail("amounts", "must be an array of two amounts")
			return nil
		}
		out = append(out, s)
	}
	return out
}

// depositAmounts reads the two verification amounts as cents.
func (f *fields) depositAmounts() (a, b int64) {
	texts, present := f.amountTexts()
	if f.err != nil {
		return 0, 0
	}
	if !present {
		f.fail("amounts", "required")
		return 0, 0
	}
	if len(texts) != 2 {
		f.fail("amounts", "must hold exactly two amounts")
		return 0, 0
	}
	var cents [2]int64
	for i, t := range texts {
		c, err := parseAmount(strings.TrimSpace(t))
		if err != nil || c <= 0 {
			f.fail("amounts", "must be two dollar amounts such as 0.07")
			return 0, 0
		}
		cents[i] = int64(c)
	}
	return cents[0], cents[1]
}
