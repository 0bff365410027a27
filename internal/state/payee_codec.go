package state

import (
	"errors"

	"github.com/batchd/batchd/internal/payment"
)

// markCodecV1 is the layout of a payee mark in bucketPayeeMarks. Every
// payment row of a checked file has one, so it is written tight (91
// bytes, against 230 as JSON) rather than as JSON:
//
//	byte     markCodecV1
//	str      Payee, Account.KeyID, Account.Hash, Account.Last4
//	uvarint  Account.Length
//	uvarint  1 when a change follows, else 0
//	[str     Change.From, Change.To, Change.Action]
//
// The account's Row and At are not kept: they are the row's own key and
// the time its check was recorded (bucketPayees).
const markCodecV1 = 1

func encodeMark(m *payment.PayeeMark) []byte {
	e := enc([]byte{markCodecV1})
	e.str(m.Payee)
	e.str(m.Account.KeyID)
	e.str(m.Account.Hash)
	e.str(m.Account.Last4)
	e.uint(uint64(m.Account.Length))
	if c := m.Change; c != nil {
		e.uint(1)
		e.str(c.From)
		e.str(c.To)
		e.str(c.Action)
	} else {
		e.uint(0)
	}
	return []byte(e)
}

var errMark = errors.New("payee mark does not decode")

func decodeMark(raw []byte) (payment.PayeeMark, error) {
	var m payment.PayeeMark
	if len(raw) == 0 || raw[0] != markCodecV1 {
		return m, errMark
	}
	d := dec{b: raw[1:]}
	m.Payee = d.str()
	m.Account.KeyID = d.str()
	m.Account.Hash = d.str()
	m.Account.Last4 = d.str()
	m.Account.Length = int(d.uint() & 0xffff)
	switch d.uint() {
	case 0:
	case 1:
		m.Change = &payment.AccountChange{From: d.str(), To: d.str(), Action: d.str()}
	default:
		d.failWith(errMark)
	}
	if d.err == nil && len(d.b) > 0 {
		d.err = errMark
	}
	if d.err != nil {
		return payment.PayeeMark{}, errMark
	}
	return m, nil
}
