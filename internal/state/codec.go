package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"time"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

// Row layouts. A stored row starts with its layout: '{' for the JSON of
// the first builds, rowCodecV1 or rowCodecV2 for the binary layouts.
// encodeRow writes rowCodecV2; decodeRowValue reads all three, so a
// ledger may hold rows of every layout, and a row is rewritten in the
// current one the next time it changes.
const (
	rowCodecV1 = 0x01
	rowCodecV2 = 0x02
)

var errShortRow = errors.New("row value truncated")

// encodeRow appends r in the current layout, rowCodecV2.
func encodeRow(dst []byte, r *payment.Row) []byte { return encodeRowV2(dst, r) }

// encodeRowV1 appends r in rowCodecV1: the version byte, then every
// field in a fixed order, strings as uvarint length and bytes, integers as
// varints, times as (unix seconds, nanoseconds) with 0 for the zero time.
// batchd no longer writes it; it stays so that tests can write rows as
// earlier builds did, which ledgers still hold.
func encodeRowV1(dst []byte, r *payment.Row) []byte {
	e := enc(append(dst, rowCodecV1))
	e.str(string(r.State))
	e = e.payment(&r.Payment)
	e.str(r.Label)
	e.str(r.Number)
	e.int(int64(r.Attempts))
	e.time(r.AttemptAt)
	e.str(r.CheckID)
	e.str(string(r.CheckStatus))
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
		e.str(string(s.CheckStatus))
		e.str(s.Note)
		e.str(string(s.Via))
	}
	return []byte(e)
}

// paymentV1 is the payment part of rowCodecV1, derived from
// payment.Fields: the text and cents fields in spec order, then
// AccountLast4 (the ledger's own field), the int fields, and last the
// flags as the bits of one uvarint, in spec order from bit 0. A field
// added to payment.Fields changes this layout, which rows already stored
// were written in: TestRowCodecV1Layout then fails, and the change needs a
// new layout version, with the old one kept for decoding. rowCodecV2
// takes its payment fields in the same order (TestRowCodecV2Layout).
var paymentV1 = layoutOf(payment.Fields)

type paymentLayout struct {
	head  []payment.Field // Text and Cents, in spec order
	ints  []payment.Field
	flags []payment.Field
}

func layoutOf(fields []payment.Field) paymentLayout {
	var l paymentLayout
	for _, f := range fields {
		switch f.Kind {
		case payment.Text, payment.Cents:
			l.head = append(l.head, f)
		case payment.Int:
			l.ints = append(l.ints, f)
		case payment.Bool:
			l.flags = append(l.flags, f)
		}
	}
	return l
}

// payment appends p in paymentV1. It takes and returns e by value, so
// that e lives on the stack while the fields go in.
func (e enc) payment(p *payment.Payment) enc {
	for i := range paymentV1.head {
		f := &paymentV1.head[i]
		if f.Kind == payment.Cents {
			e.int(int64(*f.Cents(p)))
		} else {
			e.str(*f.Text(p))
		}
	}
	e.str(p.AccountLast4)
	for i := range paymentV1.ints {
		e.int(int64(*paymentV1.ints[i].Int(p)))
	}
	e.uint(paymentFlags(p))
	return e
}

// paymentFlags packs p's flags (paymentV1.flags), one bit each, as both
// layouts store them.
func paymentFlags(p *payment.Payment) uint64 {
	var flags uint64
	for i := range paymentV1.flags {
		if *paymentV1.flags[i].Bool(p) {
			flags |= 1 << i
		}
	}
	return flags
}

// setPaymentFlags unpacks flags into p.
func setPaymentFlags(p *payment.Payment, flags uint64) {
	for i := range paymentV1.flags {
		*paymentV1.flags[i].Bool(p) = flags&(1<<i) != 0
	}
}

// payment reads p in paymentV1, taking and returning d by value as
// enc.payment does.
func (d dec) payment(p *payment.Payment) dec {
	for i := range paymentV1.head {
		f := &paymentV1.head[i]
		if f.Kind == payment.Cents {
			*f.Cents(p) = money.Cents(d.int())
		} else {
			*f.Text(p) = d.str()
		}
	}
	p.AccountLast4 = d.str()
	for i := range paymentV1.ints {
		*paymentV1.ints[i].Int(p) = int(d.int())
	}
	setPaymentFlags(p, d.uint())
	return d
}

// decodeRowValue reads a stored row in any layout.
func decodeRowValue(raw []byte, r *payment.Row) error {
	switch {
	case len(raw) == 0:
		return errors.New("empty row value")
	case raw[0] == '{':
		return json.Unmarshal(raw, r)
	case raw[0] == rowCodecV1:
		return decodeRowV1(raw[1:], r)
	case raw[0] == rowCodecV2:
		return decodeRowV2(raw[1:], r)
	}
	return errors.New("unknown row layout")
}

func decodeRowV1(raw []byte, r *payment.Row) error {
	d := dec{b: raw}
	r.State = payment.RowState(d.str())
	d = d.payment(&r.Payment)
	r.Label = d.str()
	r.Number = d.str()
	r.Attempts = int(d.int())
	r.AttemptAt = d.time()
	r.CheckID = d.str()
	r.CheckStatus = payment.Status(d.str())
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
	r.History = make([]payment.Step, n)
	for i := range r.History {
		s := &r.History[i]
		s.At = d.time()
		s.State = payment.RowState(d.str())
		s.CheckStatus = payment.Status(d.str())
		s.Note = d.str()
		s.Via = payment.Transition(d.str())
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

// int reads a signed varint: the zigzag encoding of an unsigned one, as
// binary.Varint reads it.
func (d *dec) int() int64 {
	ux := d.uint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
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
