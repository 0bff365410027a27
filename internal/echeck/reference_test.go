package echeck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/batchd/batchd/internal/apiwire"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/redact"
)

// This file keeps the client's first answer decoder, which read every
// level of an answer into a map of json.RawMessage with encoding/json and
// every member through a json.Unmarshaler. It was simple and slow. The
// decoder in use must agree with it on every input: the same values, and
// the same error, word for word (see FuzzDecodeMatchesReference).

type refString string

func (s *refString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return errors.New("empty value")
	case b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = refString(v)
	case apiwire.IsEmptyJSON(b):
		*s = ""
	case b[0] == '{' || b[0] == '[':
		return fmt.Errorf("want a string, got %s", apiwire.KindOf(b))
	default:
		*s = refString(b)
	}
	return nil
}

type refInt int64

func (n *refInt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if apiwire.IsEmptyJSON(b) {
		*n = 0
		return nil
	}
	text := string(b)
	if b[0] == '"' {
		if err := json.Unmarshal(b, &text); err != nil {
			return err
		}
		text = strings.TrimSpace(text)
		if text == "" {
			*n = 0
			return nil
		}
	}
	v, err := apiwire.ParseInteger(text)
	if err != nil {
		return err
	}
	*n = refInt(v)
	return nil
}

type refBool bool

func (v *refBool) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if apiwire.IsEmptyJSON(b) {
		*v = false
		return nil
	}
	switch b[0] {
	case 't', 'f':
		var x bool
		if err := json.Unmarshal(b, &x); err != nil {
			return err
		}
		*v = refBool(x)
		return nil
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		x, ok := apiwire.BoolText(s)
		if !ok {
			return fmt.Errorf("not a boolean: %.40q", s)
		}
		*v = refBool(x)
		return nil
	case '{', '[':
		return fmt.Errorf("want a boolean, got %s", apiwire.KindOf(b))
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("not a boolean: %.40q", b)
	}
	*v = f != 0
	return nil
}

type refCents money.Cents

func (c *refCents) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if apiwire.IsEmptyJSON(b) || bytes.Equal(b, []byte(`""`)) {
		*c = 0
		return nil
	}
	var v money.Cents
	if err := v.UnmarshalJSON(b); err != nil {
		return err
	}
	*c = refCents(v)
	return nil
}

func refDecodeObject(b []byte) (object, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, errors.New("response is not a JSON object")
	}
	var m object
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("response is not valid JSON: %w", err)
	}
	return m, nil
}

func refObjectOf(raw json.RawMessage) (object, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var m object
	if err := json.Unmarshal(raw, &m); err != nil || len(m) == 0 {
		return nil, false
	}
	return m, true
}

func refListOf(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || apiwire.IsEmptyJSON(raw) || bytes.Equal(raw, []byte(`""`)) {
		return nil, nil
	}
	switch raw[0] {
	case '[':
		var l []json.RawMessage
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, err
		}
		return l, nil
	case '{':
		var m object
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return apiwire.KeyLess(keys[i], keys[j]) })
		l := make([]json.RawMessage, len(keys))
		for i, k := range keys {
			l[i] = m[k]
		}
		return l, nil
	}
	return nil, errors.New("want a list")
}

type refFields struct {
	m   object
	err error
}

func (f *refFields) read(key string, v json.Unmarshaler, strict bool) {
	raw, ok := f.m[key]
	if !ok {
		return
	}
	if err := v.UnmarshalJSON(raw); err != nil && strict && f.err == nil {
		f.err = fmt.Errorf("field %q: %w", key, err)
	}
}

func (f *refFields) str(key string) string {
	var s refString
	f.read(key, &s, false)
	return strings.TrimSpace(string(s))
}

func (f *refFields) strictStr(key string) string {
	var s refString
	f.read(key, &s, true)
	return strings.TrimSpace(string(s))
}

// number reads a check number: text, except that a JSON number holding a
// whole number that is not negative is written as plain digits.
func (f *refFields) number(key string) string {
	s := f.strictStr(key)
	var n refInt
	if raw := bytes.TrimSpace(f.m[key]); len(raw) > 0 && raw[0] != '"' && raw[0] != '[' && raw[0] != '{' &&
		raw[0] != 't' && raw[0] != 'f' && raw[0] != 'n' && n.UnmarshalJSON(raw) == nil && n >= 0 {
		return strconv.FormatInt(int64(n), 10)
	}
	return s
}

func (f *refFields) integer(key string) int {
	var n refInt
	f.read(key, &n, false)
	return int(n)
}

func (f *refFields) strictInt(key string) int {
	var n refInt
	f.read(key, &n, true)
	return int(n)
}

func (f *refFields) boolean(key string) bool {
	var v refBool
	f.read(key, &v, false)
	return bool(v)
}

func (f *refFields) strictCents(key string) money.Cents {
	var c refCents
	f.read(key, &c, true)
	return money.Cents(c)
}

func refCheckFrom(m object) (Check, error) {
	f := refFields{m: m}
	c := Check{
		CheckID: f.strictStr("check_id"), Number: f.number("number"),
		Amount: f.strictCents("amount"), Label: f.strictStr("label"), Status: f.strictStr("status"),
		Date: f.str("date"), Memo: f.str("memo"), Name: f.str("name"), Email: f.str("email"),
		Phone: f.str("phone"), Address: f.str("address"), City: f.str("city"),
		State: f.str("state"), Zip: f.str("zip"), AuthorizationDate: f.str("authorization_date"),
		BankAccount: refMaskAccount(f.str("bank_account")), BankRouting: f.str("bank_routing"),
		BankName: f.str("bank_name"), BankAddress: f.str("bank_address"), BankCity: f.str("bank_city"),
		BankState: f.str("bank_state"), BankZip: f.str("bank_zip"),
		Recurring: f.boolean("recurring"), RecurringCycle: f.str("recurring_cycle"),
		RecurringStartDate: f.str("recurring_start_date"), RecurringInstallments: f.integer("recurring_installments"),
	}
	if v, ok := refObjectOf(m["basic_verification"]); ok {
		f := refFields{m: v}
		c.BasicVerification = &BasicVerification{Risk: f.str("risk_bv"), Pass: f.boolean("pass_bv"),
			Code: f.str("code_bv"), Description: f.str("description_bv"), Verification: f.str("verification_bv")}
	}
	fc, ok := refObjectOf(m["funds_confirmation"])
	if !ok {
		fc, ok = refObjectOf(m["fund_confirmation"])
	}
	if ok {
		f := refFields{m: fc}
		c.FundsConfirmation = &FundsConfirmation{Verification: f.str("verification_fc"),
			Pass: f.boolean("pass_fc"), Description: f.str("description_fc")}
	}
	return c, f.err
}

func refMaskAccount(s string) string {
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
	if len(digits) > 4 || 2*len(digits) > len(s) {
		return redact.Account(digits)
	}
	return s
}

func refCheckUnmarshal(b []byte) (Check, error) {
	m, err := refDecodeObject(b)
	if err != nil {
		return Check{}, err
	}
	return refCheckFrom(m)
}

func refPageOf(m object) (Paging, []json.RawMessage, error) {
	_, hasList := m["list"]
	if _, hasData := m["data"]; !hasList && !hasData {
		return Paging{}, nil, errors.New(`the answer holds no list (neither "list" nor "data")`)
	}
	src, data := m, m["data"]
	if l, ok := refObjectOf(m["list"]); ok {
		src, data = l, l["data"]
	} else if raw := m["list"]; bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		data = raw
	}
	f := refFields{m: src}
	pg := Paging{
		CurrentPage: f.strictInt("current_page"),
		LastPage:    f.strictInt("last_page"),
		PerPage:     f.strictInt("per_page"),
		Total:       f.strictInt("total"),
	}
	if f.err != nil {
		return Paging{}, nil, f.err
	}
	items, err := refListOf(data)
	if err != nil {
		return Paging{}, nil, fmt.Errorf("field \"data\": %w", err)
	}
	return pg, items, nil
}

func refErrorFlagged(m object) bool {
	if raw, ok := m["error"]; ok {
		raw = bytes.TrimSpace(raw)
		var s refString
		switch {
		case len(raw) > 0 && (raw[0] == '{' || raw[0] == '[') && !apiwire.IsEmptyJSON(raw):
			return true
		case s.UnmarshalJSON(raw) == nil:
			if v, known := apiwire.BoolText(string(s)); v || !known {
				return true
			}
		}
	}
	if raw, ok := m["success"]; ok {
		raw = bytes.TrimSpace(raw)
		var v refBool
		if !apiwire.IsEmptyJSON(raw) && string(raw) != `""` && v.UnmarshalJSON(raw) == nil && !bool(v) {
			return true
		}
	}
	return false
}

// refListAnswer is decodeListAnswer with the reference decoder.
func refListAnswer(body []byte) (Paging, []Check, error) {
	m, err := refDecodeObject(body)
	if err != nil {
		return Paging{}, nil, err
	}
	if refErrorFlagged(m) {
		return Paging{}, nil, fmt.Errorf("flagged as an error")
	}
	pg, items, err := refPageOf(m)
	if err != nil {
		return pg, nil, err
	}
	out := make([]Check, 0, len(items))
	for i, it := range items {
		obj, ok := refObjectOf(it)
		if !ok {
			return pg, nil, fmt.Errorf("entry %d is not an object", i)
		}
		v, err := refCheckFrom(obj)
		if err != nil {
			return pg, nil, fmt.Errorf("entry %d: %w", i, err)
		}
		out = append(out, v)
	}
	return pg, out, nil
}
