package sourcefile

import (
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
)

// dupIndex remembers what a file has shown so far, as 64-bit hashes with a
// random seed per file: no account number or token stays in memory, and a
// row costs a map entry or two. A collision (about 1 in 10^7 for a million
// rows) makes a row look like a duplicate, which refuses it rather than
// linking an account twice.
type dupIndex struct {
	h        maphash.Hash
	accounts map[uint64]accountEntry // routing and account -> first row
	once     map[uint64]uint32       // processor token or funding source id -> first line
	emails   map[uint64]accountEntry // email -> first row, with a fingerprint of its names
}

// accountEntry is the first row of an account (or of an email), with a
// fingerprint of its customer (or its names); 0 when not known.
type accountEntry struct {
	line uint32
	fp   uint32
}

func newDupIndex() dupIndex {
	d := dupIndex{accounts: map[uint64]accountEntry{}, once: map[uint64]uint32{}, emails: map[uint64]accountEntry{}}
	d.h.SetSeed(maphash.MakeSeed())
	return d
}

// sum hashes strings separated by NUL, which no cell holds.
func (d *dupIndex) sum(parts ...string) uint64 {
	d.h.Reset()
	for _, p := range parts {
		d.h.WriteString(p)
		d.h.WriteByte(0)
	}
	return d.h.Sum64()
}

func line32(line int) uint32 { return uint32(min(line, 1<<32-1)) }

// duplicates flags a row that repeats an earlier one: the same account
// (routing and account number) for the same customer or for another (an
// account belongs to one customer at a time; a user_id and an email are
// not compared), the same processor token (a
// token is exchanged once), the same funding source to verify. Every row
// whose identifying cells are well formed is remembered, even one with
// other findings. Rows of one email with other names get a warning: they
// share one customer, created with the first row's names.
func (v *validator) duplicates() {
	c := &v.cells
	ok := func(col column) bool { return c[col] != "" && !v.bad[col] }
	d := &v.dup
	switch {
	case v.hdr.kind == payment.KindVerifications:
		if ok(colSourceID) {
			v.once(colSourceID, d.sum("source", strings.ToLower(c[colSourceID])),
				"same funding_source_id as line %d: a funding source is verified once")
		}
	case ok(colToken) && c[colRouting] == "" && c[colAccount] == "":
		v.once(colToken, d.sum("token", c[colToken]), "same processor_token as line %d: a token is exchanged once")
	case ok(colRouting) && ok(colAccount) && c[colToken] == "":
		// The customer's fingerprint: its low bits say whether it is a
		// user_id (1) or an email (2), which cannot be compared; 0 when
		// the customer is not well formed.
		var fp uint32
		switch {
		case ok(colUserID):
			fp = uint32(d.sum("user", c[colUserID]))&^3 | 1
		case c[colUserID] == "" && ok(colEmail):
			fp = uint32(d.sum("email", funding.EmailKey(c[colEmail])))&^3 | 2
		}
		key := d.sum("account", c[colRouting], c[colAccount])
		first, seen := d.accounts[key]
		switch {
		case !seen:
			d.accounts[key] = accountEntry{line: line32(v.line), fp: fp}
		case fp != 0 && first.fp == fp:
			v.addRow(csvfile.MaskAccount(c[colAccount]), fmt.Sprintf("same customer and account as line %d", first.line))
		case fp&3 != 0 && first.fp&3 == fp&3:
			v.addRow(csvfile.MaskAccount(c[colAccount]), fmt.Sprintf("same account as line %d, for another "+
				"customer: an account belongs to one customer at a time", first.line))
		default:
			v.addRow(csvfile.MaskAccount(c[colAccount]), fmt.Sprintf("same account as line %d: an account is "+
				"linked once, to one customer", first.line))
		}
	}
	if c[colUserID] == "" && ok(colEmail) && ok(colFirstName) && ok(colLastName) {
		key := d.sum("email", funding.EmailKey(c[colEmail]))
		fp := uint32(d.sum("names", strings.ToLower(c[colFirstName]), strings.ToLower(c[colLastName]))) | 1
		if first, seen := d.emails[key]; !seen {
			d.emails[key] = accountEntry{line: line32(v.line), fp: fp}
		} else if first.fp != fp {
			v.warn(colEmail, fmt.Sprintf("has other names on line %d: rows of one email share one customer, "+
				"created with the names of the first row", first.line))
		}
	}
}

// once refuses a value seen before on another line, or remembers it.
func (v *validator) once(col column, key uint64, format string) {
	if first, seen := v.dup.once[key]; seen {
		v.add(col, fmt.Sprintf(format, first))
		return
	}
	v.dup.once[key] = line32(v.line)
}

// zeroExamples is how many lines the file-level verdict names.
const zeroExamples = 5

// zeroDamage collects the routing numbers of a file whose leading zeros a
// spreadsheet dropped. Account numbers lose theirs the same way, and
// nothing shows it, so such a file is refused whole, as a payment file is.
type zeroDamage struct {
	n      int
	shown  string // the first number, masked
	digits int
	lines  []int // the distinct lines of the first numbers, at most zeroExamples
	more   bool
}

func (z *zeroDamage) add(line int, s string) {
	if z.n == 0 {
		z.shown, z.digits = csvfile.MaskAccount(s), len(s)
	}
	z.n++
	switch {
	case len(z.lines) < zeroExamples:
		z.lines = append(z.lines, line)
	default:
		z.more = true
	}
}

// err is the file-level verdict, or nil when no routing number lost its
// zeros.
func (z *zeroDamage) err() error {
	if z.n == 0 {
		return nil
	}
	// The first number's sentence restates its row's finding: batchd
	// validate prints the verdict without it (FileError.Verdict).
	cell := fmt.Sprintf("routing number %s has %d digits instead of 9: a spreadsheet dropped its leading zero "+
		"(with it, it is a valid routing number). ", z.shown, z.digits)
	var b strings.Builder
	if z.n > 1 {
		fmt.Fprintf(&b, "%d routing numbers of this file lost leading zeros (lines %s). ", z.n, csvfile.ExampleLines(z.lines, z.more))
	}
	b.WriteString("Account numbers in the same file may have lost their leading zeros too, and a wrong account " +
		"number links the wrong account, so every row of this file is refused. In the spreadsheet, format the " +
		"routing_number and account_number columns as text, re-enter the numbers with their leading zeros, and " +
		"save the file again.")
	return &csvfile.FileError{Line: z.lines[0], Column: colRouting.String(), Restates: cell, Reason: b.String(),
		Damaged: true}
}
