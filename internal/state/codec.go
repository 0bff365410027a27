package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"time"

	"github.com/batchd/batchd/internal/money"
)

// rowCodecV1 prefixes a row stored in the binary layout. Rows written by
// earlier builds are JSON and start with '{'; decodeRowValue reads both.
const rowCodecV1 = 0x01

var errShortRow = errors.New("row value truncated")

// encodeRow appends r in the binary layout: the version byte, then every
// field in a fixed order, strings as uvarint length and bytes, integers as
// varints, times as (unix seconds, nanoseconds) with 0 for the zero time.
func encodeRow(dst []byte, r *Row) []byte {
	e := enc(append(dst, rowCodecV1))
	e.str(string(r.State))
	p := &r.Payment
	e.str(p.Number)
	e.int(int64(p.Amount))
	for _, s := range []string{p.Memo, p.Name, p.Email, p.AuthorizationDate, p.Label, p.Phone, p.Address, p.City,
		p.State, p.Zip, p.BankAccount, p.BankRouting, p.Token, p.Store, p.TypeInfo, p.RecurringCycle, p.RecurringStartDate, p.AccountLast4} {
		e.str(s)
	}
	e.int(int64(p.RecurringInstallments))
	var flags uint64
	if p.Recurring {
		flags |= 1
	}
	if p.VerifyBeforeSave {
		flags |= 2
	}
	if p.FundConfirmation {
		flags |= 4
	}
	e.uint(flags)
	e.str(r.Label)
	e.str(r.Number)
	e.int(int64(r.Attempts))
	e.time(r.AttemptAt)
	e.str(r.CheckID)
	e.str(r.CheckStatus)
	e.time(r.CheckCreated)
	e.time(r.StatusSeenAt)
	e.time(r.DepositedSeenAt)
	e.str(r.Risk)
	e.str(r.FundConfirmation)
	e.str(r.Error)
	e.uint(uint64(len(r.History)))
	for _, s := range r.History {
		e.time(s.At)
		e.str(string(s.State))
		e.str(s.CheckStatus)
		e.str(s.Note)
		e.str(string(s.Via))
	}
	return []byte(e)
}

// decodeRowValue reads a stored row in either layout.
func decodeRowValue(raw []byte, r *Row) error {
	if len(raw) > 0 && raw[0] == '{' {
		return json.Unmarshal(raw, r)
	}
	if len(raw) == 0 || raw[0] != rowCodecV1 {
		return errors.New("unknown row layout")
	}
	d := dec{b: raw[1:]}
	r.State = RowState(d.str())
	p := &r.Payment
	p.Number = d.str()
	p.Amount = money.Cents(d.int())
	for _, s := range []*string{&p.Memo, &p.Name, &p.Email, &p.AuthorizationDate, &p.Label, &p.Phone, &p.Address, &p.City,
		&p.State, &p.Zip, &p.BankAccount, &p.BankRouting, &p.Token, &p.Store, &p.TypeInfo, &p.RecurringCycle, &p.RecurringStartDate, &p.AccountLast4} {
		*s = d.str()
	}
	p.RecurringInstallments = int(d.int())
	flags := d.uint()
	p.Recurring, p.VerifyBeforeSave, p.FundConfirmation = flags&1 != 0, flags&2 != 0, flags&4 != 0
	r.Label = d.str()
	r.Number = d.str()
	r.Attempts = int(d.int())
	r.AttemptAt = d.time()
	r.CheckID = d.str()
	r.CheckStatus = d.str()
	r.CheckCreated = d.time()
	r.StatusSeenAt = d.time()
	r.DepositedSeenAt = d.time()
	r.Risk = d.str()
	r.FundConfirmation = d.str()
	r.Error = d.str()
	n := d.uint()
	if n > uint64(len(d.b)) { // every step takes at least one byte
		return errShortRow
	}
	r.History = make([]Step, n)
	for i := range r.History {
		s := &r.History[i]
		s.At = d.time()
		s.State = RowState(d.str())
		s.CheckStatus = d.str()
		s.Note = d.str()
		s.Via = Transition(d.str())
	}
	if d.err == nil && len(d.b) > 0 {
		return errors.New("trailing bytes after row")
	}
	return d.err
}

type enc []byte

func (e *enc) uint(v uint64) { *e = binary.AppendUvarint(*e, v) }
func (e *enc) int(v int64)   { *e = binary.AppendVarint(*e, v) }
func (e *enc) str(s string) {
	*e = binary.AppendUvarint(*e, uint64(len(s)))
	*e = append(*e, s...)
}
func (e *enc) time(t time.Time) {
	if t.IsZero() {
		e.uint(0)
		return
	}
	e.uint(1)
	e.int(t.Unix())
	e.uint(uint64(t.Nanosecond()))
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) int() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) str() string {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *dec) time() time.Time {
	if d.uint() == 0 {
		return time.Time{}
	}
	sec := d.int()
	return time.Unix(sec, int64(d.uint())).UTC()
}

func (d *dec) fail() {
	if d.err == nil {
		d.err = errShortRow
	}
	d.b = nil
}
