package csvfile

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"slices"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

// dupIndex remembers what a file has shown so far, as hashes: no account
// number stays in memory, and a row costs one map entry of 16 bytes plus map
// overhead (about 30 MB for a million rows).
//
// A row with a check number is remembered under the number, together with a
// 32-bit fingerprint of its payment identity; a row without a number under
// its payment identity and authorization_date. Since check numbers must be
// unique, a payment that repeats an earlier row with the same number is found
// through the number alone, and the fingerprint only chooses the wording of
// the finding. The seed is random per file. A 64-bit collision (about 1 in
// 10^7 for a million rows) makes a row look like a duplicate, which rejects
// it rather than paying twice.
type dupIndex struct {
	h        maphash.Hash
	numbers  map[uint64]numberEntry
	payments map[uint64]uint32 // identity+date -> first line, rows without a number
}

type numberEntry struct {
	line    uint32
	payment uint32 // fingerprint of the payment identity; 0 when not well formed
}

func newDupIndex() dupIndex {
	d := dupIndex{numbers: map[uint64]numberEntry{}, payments: map[uint64]uint32{}}
	d.h.SetSeed(maphash.MakeSeed())
	return d
}

// sum hashes strings separated by NUL, which no cell holds after checkText,
// and an amount as its 8 bytes.
func (d *dupIndex) sum(amount money.Cents, parts ...string) uint64 {
	d.h.Reset()
	for _, p := range parts {
		d.h.WriteString(p)
		d.h.WriteByte(0)
	}
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], uint64(amount))
	_, _ = d.h.Write(buf[:])
	return d.h.Sum64()
}

func line32(line int) uint32 { return uint32(min(line, 1<<32-1)) }

// duplicates flags a row that would create the same payment as an earlier
// row (same account or token, amount, and check number, or, without a
// number, the same authorization_date), and a check number used before.
// Every row whose identifying cells are well formed is remembered, even a row
// with other findings: once that row is fixed and sent again, the later copy
// would pay twice.
func (v *validator) duplicates() {
	c, bad := v.cells, v.bad
	ok := func(col int) bool { return c[col] != "" && !bad[col] }
	var src, a, b string
	switch {
	case ok(colBankRouting) && ok(colBankAccount):
		src, a, b = "bank account", c[colBankRouting], c[colBankAccount]
	case ok(colToken) && ok(colStore):
		src, a, b = "token", c[colToken], c[colStore]
	}
	amount, _ := money.Parse(c[colAmount])
	formed := src != "" && ok(colAmount)
	switch {
	case ok(colNumber):
		var fp uint32 // 0: no well-formed payment identity to compare
		if formed {
			fp = uint32(v.dup.sum(amount, src, a, b)) | 1
		}
		v.repeatedNumber(fp, src)
	case c[colNumber] == "" && formed && !bad[colAuthorizationDate]:
		key := v.dup.sum(amount, src, a, b, c[colAuthorizationDate])
		if first, seen := v.dup.payments[key]; seen {
			v.addRow(v.paymentValue(), fmt.Sprintf("same payment as line %d (same %s, %s, and no check number)", first, src, v.dupSame()))
		} else {
			v.dup.payments[key] = line32(v.line)
		}
	}
}

// repeatedNumber checks a well-formed check number. Leading zeros do not
// make a number different, as for payment.SameNumber. fp is the fingerprint of the row's payment
// identity without authorization_date: with the same number, a different
// date is still the same check.
func (v *validator) repeatedNumber(fp uint32, src string) {
	number := payment.NumberKey(v.cells[colNumber]) // the identity rule's own comparison
	key := v.dup.sum(0, "number", number)
	first, seen := v.dup.numbers[key]
	switch {
	case !seen:
		v.dup.numbers[key] = numberEntry{line: line32(v.line), payment: fp}
	case fp != 0 && first.payment == fp:
		v.addRow(v.paymentValue(), fmt.Sprintf("same payment as line %d (same %s, amount and check number)", first.line, src))
	default:
		v.add(colNumber, fmt.Sprintf("check number already used on line %d", first.line))
	}
}

// paymentValue is the Finding.Value of a duplicate payment: the masked
// account (or token) and the amount, "****0016 10.00".
func (v *validator) paymentValue() string {
	c := v.cells
	src := shownValue(colBankAccount, c[colBankAccount])
	if c[colBankAccount] == "" {
		src = shownValue(colToken, c[colToken])
	}
	amount, _ := money.Parse(c[colAmount])
	return src + " " + amount.String()
}

// dupSame names what else two rows without a check number share when one
// repeats the other: the authorization_date too only when the file has
// that column, so that the message names only columns the file has.
func (v *validator) dupSame() string {
	if slices.Contains(v.fields, colAuthorizationDate) {
		return "amount and authorization_date"
	}
	return "amount"
}
