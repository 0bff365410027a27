package state

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

// rowCodecV2 is rowCodecV1 made smaller where rows spend their bytes
// (docs/benchmarks.md, "Ledger size per row"): a submitted row of a
// typical file takes about 180 bytes instead of 310.
//
//   - The row's states, transitions and check statuses are one-byte codes
//     from the fixed tables below (a word not in a table is written out),
//     and each history step packs its four of them into one uvarint.
//   - Times are milliseconds, plus the sub-millisecond nanoseconds only
//     when there are any. A step's time is the difference from the step
//     before it, and the row's own times the difference from its first
//     step, so most take two or three bytes instead of ten.
//   - Empty payment fields take no byte: a bitmap says which are present.
//   - The row's label and number are not written again when they are the
//     payment's own (a file that gives them).
//
// The layout, after the version byte:
//
//	uvarint  row flags: bit 0 label is the payment's, bit 1 number is the
//	         payment's, bit 2 HeardAt follows at the end; other bits must
//	         be 0
//	code     State (rowStateCodes)
//	payment  uvarint presence bits over paymentV1.head, AccountLast4 and
//	         paymentV1.ints, in that order; each present value in the same
//	         order (text as str, cents and ints as varint); then the flags
//	         as in rowCodecV1
//	[str Label] [str Number]    when not the payment's
//	uvarint  steps; each: uvarint header (stepHeader), its literal words,
//	         time (from the step before; the first from the Unix epoch)
//	varint   Attempts
//	time     AttemptAt, CheckCreated, StatusSeenAt, DepositedSeenAt (from
//	         the first step, or the epoch when there is none)
//	str      CheckID
//	code     CheckStatus (statusCodes)
//	str      Risk, FundConfirmation, Error
//	[time    HeardAt (from the first step)]    when flag bit 2 is set
//	[time    SendBy (from the first step)]     when flag bit 3 is set
//	[str     Payment.FirstName, Payment.LastName] when flag bit 4 is set
//
// A code is a uvarint index into its table; the table's literal code is
// followed by the word as a str. The tables only ever grow at their end
// (before the literal code), so rows already written keep their meaning.
// TestRowCodecV2Layout pins the bytes.
//
// HeardAt came after the layout was first written: a row without it has
// no flag bit 2 and ends at Error, byte for byte as before, so rows
// already stored read with a zero HeardAt and rows webhooks never touched
// are written exactly as earlier builds wrote them. A build from before
// HeardAt refuses a row that has it (an unknown flag), never misreads it.

// The code tables of rowCodecV2. Index 0 is the empty word.
var (
	rowStateCodes = []string{"", string(payment.Pending), string(payment.InFlight), string(payment.InDoubt),
		string(payment.Submitted), string(payment.Rejected), string(payment.Held)}
	transitionCodes = []string{"", string(payment.Send), string(payment.Create), string(payment.Doubt),
		string(payment.Reject), string(payment.Release), string(payment.Observe), string(payment.Suspect),
		string(payment.Approve), string(payment.Rehold)}
	statusCodes = []string{"", string(payment.StatusInProcess), string(payment.StatusInReview), string(payment.StatusPrinted),
		string(payment.StatusDeposited), string(payment.StatusFailed), string(payment.StatusVoid),
		string(payment.StatusDeleted), string(payment.StatusUnknown)}
	noteCodes = []string{"", "ingested"}
)

// The literal codes, and the bits of a step header: state in bits 0-2,
// transition in 3-6, check status in 7-10, note in 11-12.
const (
	stateLiteral      = 7
	transitionLiteral = 15
	statusLiteral     = 15
	noteLiteral       = 3

	rowFlagLabel  = 1 << 0
	rowFlagNumber = 1 << 1
	rowFlagHeard  = 1 << 2
	rowFlagSendBy = 1 << 3
	rowFlagNames  = 1 << 4
)

// maxMilliSec bounds the seconds of a time written in milliseconds;
// beyond it (some 35,000 years from 1970) a time is written literally.
const maxMilliSec = 1 << 40

var errBadCode = errors.New("row value has an unknown code")

func encodeRowV2(dst []byte, r *payment.Row) []byte {
	e := enc(append(dst, rowCodecV2))
	var flags uint64
	if r.Label == r.Payment.Label {
		flags |= rowFlagLabel
	}
	if r.Number == r.Payment.Number {
		flags |= rowFlagNumber
	}
	if !r.HeardAt.IsZero() {
		flags |= rowFlagHeard
	}
	if !r.SendBy.IsZero() {
		flags |= rowFlagSendBy
	}
	if r.Payment.FirstName != "" || r.Payment.LastName != "" {
		flags |= rowFlagNames
	}
	e.uint(flags)
	e.code(string(r.State), rowStateCodes, stateLiteral)
	e = e.paymentV2(&r.Payment)
	if flags&rowFlagLabel == 0 {
		e.str(r.Label)
	}
	if flags&rowFlagNumber == 0 {
		e.str(r.Number)
	}
	e.uint(uint64(len(r.History)))
	var prev, base time.Time
	for i, s := range r.History {
		st, stLit := codeOf(string(s.State), rowStateCodes, stateLiteral)
		via, viaLit := codeOf(string(s.Via), transitionCodes, transitionLiteral)
		cs, csLit := codeOf(string(s.CheckStatus), statusCodes, statusLiteral)
		note, noteLit := codeOf(s.Note, noteCodes, noteLiteral)
		e.uint(st | via<<3 | cs<<7 | note<<11)
		for _, lit := range []struct {
			is bool
			s  string
		}{{stLit, string(s.State)}, {viaLit, string(s.Via)}, {csLit, string(s.CheckStatus)}, {noteLit, s.Note}} {
			if lit.is {
				e.str(lit.s)
			}
		}
		e.timeFrom(s.At, prev)
		prev = s.At
		if i == 0 {
			base = s.At
		}
	}
	e.int(int64(r.Attempts))
	e.timeFrom(r.AttemptAt, base)
	e.timeFrom(r.CheckCreated, base)
	e.timeFrom(r.StatusSeenAt, base)
	e.timeFrom(r.DepositedSeenAt, base)
	e.str(r.CheckID)
	e.code(string(r.CheckStatus), statusCodes, statusLiteral)
	e.str(r.Risk)
	e.str(r.FundConfirmation)
	e.str(r.Error)
	if flags&rowFlagHeard != 0 {
		e.timeFrom(r.HeardAt, base)
	}
	if flags&rowFlagSendBy != 0 {
		e.timeFrom(r.SendBy, base)
	}
	if flags&rowFlagNames != 0 {
		e.str(r.Payment.FirstName)
		e.str(r.Payment.LastName)
	}
	return []byte(e)
}

func decodeRowV2(raw []byte, r *payment.Row) error {
	d := dec{b: raw}
	flags := d.uint()
	if flags&^(rowFlagLabel|rowFlagNumber|rowFlagHeard|rowFlagSendBy|rowFlagNames) != 0 {
		return errors.New("row value has unknown flags")
	}
	r.State = payment.RowState(d.code(rowStateCodes, stateLiteral))
	d = d.paymentV2(&r.Payment)
	r.Label, r.Number = r.Payment.Label, r.Payment.Number
	if flags&rowFlagLabel == 0 {
		r.Label = d.str()
	}
	if flags&rowFlagNumber == 0 {
		r.Number = d.str()
	}
	n := d.uint()
	if n > uint64(len(d.b))/2 { // every step takes at least two bytes
		return errShortRow
	}
	r.History = make([]payment.Step, n)
	var prev, base time.Time
	for i := range r.History {
		s := &r.History[i]
		h := d.uint()
		if h>>13 != 0 {
			d.failWith(errBadCode)
		}
		s.State = payment.RowState(d.lookup(h&7, rowStateCodes, stateLiteral))
		s.Via = payment.Transition(d.lookup(h>>3&15, transitionCodes, transitionLiteral))
		s.CheckStatus = payment.Status(d.lookup(h>>7&15, statusCodes, statusLiteral))
		s.Note = d.lookup(h>>11&3, noteCodes, noteLiteral)
		s.At = d.timeFrom(prev)
		prev = s.At
		if i == 0 {
			base = s.At
		}
	}
	r.Attempts = int(d.int())
	r.AttemptAt = d.timeFrom(base)
	r.CheckCreated = d.timeFrom(base)
	r.StatusSeenAt = d.timeFrom(base)
	r.DepositedSeenAt = d.timeFrom(base)
	r.CheckID = d.str()
	r.CheckStatus = payment.Status(d.code(statusCodes, statusLiteral))
	r.Risk = d.str()
	r.FundConfirmation = d.str()
	r.Error = d.str()
	if flags&rowFlagHeard != 0 {
		if r.HeardAt = d.timeFrom(base); r.HeardAt.IsZero() {
			d.failWith(errors.New("row value flags a HeardAt it does not hold"))
		}
	}
	if flags&rowFlagSendBy != 0 {
		if r.SendBy = d.timeFrom(base); r.SendBy.IsZero() {
			d.failWith(errors.New("row value flags a SendBy it does not hold"))
		}
	}
	if flags&rowFlagNames != 0 {
		r.Payment.FirstName, r.Payment.LastName = d.str(), d.str()
	}
	if d.err == nil && len(d.b) > 0 {
		return errors.New("trailing bytes after row")
	}
	return d.err
}

// paymentV2 appends p in rowCodecV2's payment part. The values go in
// first, after room for the presence bits, which are known only then;
// the room left over is closed up at the end.
func (e enc) paymentV2(p *payment.Payment) enc {
	start := len(e)
	e = append(e, make([]byte, presenceRoom)...)
	var present uint64
	bit := uint(0)
	for i := range paymentV1.head {
		if f := &paymentV1.head[i]; f.Kind == payment.Cents {
			if v := *f.Cents(p); v != 0 {
				present |= 1 << bit
				e.int(int64(v))
			}
		} else if v := *f.Text(p); v != "" {
			present |= 1 << bit
			e.str(v)
		}
		bit++
	}
	if p.AccountLast4 != "" {
		present |= 1 << bit
		e.str(p.AccountLast4)
	}
	bit++
	for i := range paymentV1.ints {
		if v := *paymentV1.ints[i].Int(p); v != 0 {
			present |= 1 << bit
			e.int(int64(v))
		}
		bit++
	}
	var bits [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(bits[:], present)
	copy(e[start:], bits[:n])
	if n < presenceRoom {
		e = append(e[:start+n], e[start+presenceRoom:]...)
	}
	e.uint(paymentFlags(p))
	return e
}

// presenceRoom is the most bytes the presence bits of paymentV2 take.
var presenceRoom = (len(paymentV1.head) + 1 + len(paymentV1.ints) + 6) / 7

// paymentV2 reads rowCodecV2's payment part into p.
func (d dec) paymentV2(p *payment.Payment) dec {
	present := d.uint()
	if present>>(len(paymentV1.head)+1+len(paymentV1.ints)) != 0 {
		d.failWith(errors.New("row value has unknown payment fields"))
	}
	bit := uint(0)
	for i := range paymentV1.head {
		if f := &paymentV1.head[i]; present&(1<<bit) != 0 {
			if f.Kind == payment.Cents {
				*f.Cents(p) = money.Cents(d.int())
			} else {
				*f.Text(p) = d.str()
			}
		}
		bit++
	}
	if present&(1<<bit) != 0 {
		p.AccountLast4 = d.str()
	}
	bit++
	for i := range paymentV1.ints {
		if present&(1<<bit) != 0 {
			*paymentV1.ints[i].Int(p) = int(d.int())
		}
		bit++
	}
	flags := d.uint()
	if flags>>len(paymentV1.flags) != 0 {
		d.failWith(errors.New("row value has unknown payment flags"))
	}
	setPaymentFlags(p, flags)
	return d
}

// codeOf returns the code of s in table, or literal (and true) when s is
// not in it.
func codeOf(s string, table []string, literal uint64) (uint64, bool) {
	for i, t := range table {
		if t == s {
			return uint64(i), false
		}
	}
	return literal, true
}

// code appends s as a code of table, followed by s itself when literal.
func (e *enc) code(s string, table []string, literal uint64) {
	c, lit := codeOf(s, table, literal)
	e.uint(c)
	if lit {
		e.str(s)
	}
}

// code reads what enc.code wrote.
func (d *dec) code(table []string, literal uint64) string {
	return d.lookup(d.uint(), table, literal)
}

// lookup returns the word of code c, reading it when c is literal.
func (d *dec) lookup(c uint64, table []string, literal uint64) string {
	switch {
	case c == literal:
		return d.str()
	case c < uint64(len(table)):
		return table[c]
	}
	d.failWith(errBadCode)
	return ""
}

// timeFrom appends t as the difference from base, in milliseconds, with
// the sub-millisecond nanoseconds when there are any: one uvarint u,
// where 0 is the zero time, 1 a literal time (varint seconds and uvarint
// nanoseconds follow, for times too far out for milliseconds), and
// otherwise u-2 holds the zigzag difference shifted left by one, whose
// low bit says a uvarint of nanoseconds (1 to 999,999) follows. A zero
// base counts from the Unix epoch.
func (e *enc) timeFrom(t, base time.Time) {
	if t.IsZero() {
		e.uint(0)
		return
	}
	sec, ns := t.Unix(), int64(t.Nanosecond())
	if sec > maxMilliSec || sec < -maxMilliSec {
		e.uint(1)
		e.int(sec)
		e.uint(uint64(ns))
		return
	}
	diff := sec*1000 + ns/1e6 - millisOf(base)
	u := (uint64(diff<<1) ^ uint64(diff>>63)) << 1
	sub := ns % 1e6
	if sub != 0 {
		u |= 1
	}
	e.uint(u + 2)
	if sub != 0 {
		e.uint(uint64(sub))
	}
}

// timeFrom reads what enc.timeFrom wrote.
func (d *dec) timeFrom(base time.Time) time.Time {
	u := d.uint()
	switch u {
	case 0:
		return time.Time{}
	case 1:
		sec := d.int()
		ns := d.uint()
		if ns >= 1e9 {
			d.fail()
		}
		return time.Unix(sec, int64(ns)).UTC()
	}
	u -= 2
	var sub uint64
	if u&1 != 0 {
		if sub = d.uint(); sub >= 1e6 {
			d.fail()
		}
	}
	z := u >> 1
	ms := int64(z>>1) ^ -int64(z&1) + millisOf(base)
	sec := ms / 1000
	if ms%1000 < 0 {
		sec--
	}
	return time.Unix(sec, (ms-sec*1000)*1e6+int64(sub)).UTC()
}

// millisOf is t in milliseconds since the Unix epoch, or 0 for the zero
// time and for times written literally.
func millisOf(t time.Time) int64 {
	sec := t.Unix()
	if t.IsZero() || sec > maxMilliSec || sec < -maxMilliSec {
		return 0
	}
	return sec*1000 + int64(t.Nanosecond())/1e6
}

func (d *dec) failWith(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}
