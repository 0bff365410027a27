// Package money is batchd's one representation of an amount: a count of
// whole cents in an int64.
//
// Every amount in batchd, whether read from a CSV cell, sent to or received
// from the API, or summed into a report, is a Cents value. Conversion to and
// from decimal text is exact: it works on the digits, never through float64,
// so 1234.56 is always 123456 cents and 0.29 is always 29 cents.
package money

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Cents is an amount of money in hundredths of the currency unit.
type Cents int64

// maxWhole is the largest whole-unit part that still fits in Cents.
const maxWhole = math.MaxInt64 / 100

// ErrSyntax reports text that is not a plain decimal amount.
var ErrSyntax = errors.New("not a decimal amount like 1234.56")

// ErrPrecision reports an amount with more than two decimal places.
var ErrPrecision = errors.New("more than two decimal places")

// ErrRange reports an amount too large to represent.
var ErrRange = errors.New("amount out of range")

// Parse reads a non-negative decimal amount with at most two decimal places,
// such as "1234.56", "0.5" or "12". Surrounding spaces are ignored. Signs,
// exponents, thousands separators and currency symbols are refused, because
// a payment file that carries them is ambiguous and must be fixed by a person.
func Parse(s string) (Cents, error) {
	s = strings.TrimSpace(s)
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" && (!hasDot || frac == "") {
		return 0, ErrSyntax
	}
	if !allDigits(whole) || !allDigits(frac) {
		return 0, ErrSyntax
	}
	if len(frac) > 2 {
		return 0, ErrPrecision
	}
	var w int64
	if whole != "" {
		whole = strings.TrimLeft(whole, "0")
		if len(whole) > 17 {
			return 0, ErrRange
		}
		if whole != "" {
			var err error
			if w, err = strconv.ParseInt(whole, 10, 64); err != nil || w > maxWhole {
				return 0, ErrRange
			}
		}
	}
	var f int64
	switch len(frac) {
	case 1:
		f = int64(frac[0]-'0') * 10
	case 2:
		f = int64(frac[0]-'0')*10 + int64(frac[1]-'0')
	}
	c := w*100 + f
	if c < 0 {
		return 0, ErrRange
	}
	return Cents(c), nil
}

// ErrSubCent reports an amount on the wire whose digits beyond the cent are
// more than a float rounding artefact. It wraps ErrPrecision.
var ErrSubCent = fmt.Errorf("%w, and more than 0.000001 from a whole cent, so not a float rounding artefact", ErrPrecision)

// wireTolerance is how far, in digits of a fraction of one cent, an amount
// on the wire may lie from a whole cent and still be read as that cent:
// 0.0001 of a cent, that is 0.000001 of the currency unit. A float64 that
// was meant to be a whole number of cents is far closer than that for any
// amount below about 10^9 units (0.29000000000000004 is 4e-17 away), while
// a value such as 0.285 or 12.3456 is a real fraction of a cent, which is
// never guessed.
const wireTolerance = "0001"

// wireBelow is 1 − wireTolerance: a fraction of a cent at least this large
// lies within the tolerance of the next cent up.
const wireBelow = "9999"

// ParseWire reads an amount as a JSON API writes it: a decimal literal,
// with an optional sign and exponent ("1e2", "2.9e-1"). Digits beyond the
// cent are accepted only as a float artefact of the sender, within
// 0.000001 of a whole cent (0.29000000000000004, 12.340000000000001,
// 0.28999999999999998), and are then rounded to that cent; any other
// fraction of a cent is ErrSubCent. It works on the decimal digits, never
// through float64. Quotes around the value are accepted, because public
// clients see amounts both as numbers and as strings.
func ParseWire(s string) (Cents, error) {
	s = strings.Trim(strings.TrimSpace(s), `"`)
	if s == "" {
		return 0, ErrSyntax
	}
	// No amount needs more than 64 characters or an exponent beyond ±30;
	// the limits keep the digit strings below short.
	if len(s) > 64 {
		return 0, ErrRange
	}
	neg := false
	switch s[0] {
	case '-':
		neg, s = true, s[1:]
	case '+':
		s = s[1:]
	}
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e := s[i+1:]
		body := e
		if body != "" && (body[0] == '+' || body[0] == '-') {
			body = body[1:]
		}
		if body == "" || !allDigits(body) {
			return 0, ErrSyntax
		}
		x, err := strconv.Atoi(e)
		if err != nil || x > 30 || x < -30 {
			return 0, ErrRange
		}
		exp = x
	}
	whole, frac, _ := strings.Cut(mant, ".")
	if (whole == "" && frac == "") || !allDigits(whole) || !allDigits(frac) {
		return 0, ErrSyntax
	}
	// The amount in cents is digits × 10^shift.
	digits := whole + frac
	shift := exp - len(frac) + 2
	var cents, excess string
	switch k := len(digits) + shift; {
	case shift >= 0:
		cents = digits + strings.Repeat("0", shift)
	case k <= 0:
		excess = strings.Repeat("0", -k) + digits
	default:
		cents, excess = digits[:k], digits[k:]
	}
	up := false
	if excess = strings.TrimRight(excess, "0"); excess != "" {
		switch {
		case compareFraction(excess, wireTolerance) <= 0:
		case compareFraction(excess, wireBelow) >= 0:
			up = true
		default:
			return 0, ErrSubCent
		}
	}
	var c int64
	if cents = strings.TrimLeft(cents, "0"); cents != "" {
		if len(cents) > 19 {
			return 0, ErrRange
		}
		var err error
		if c, err = strconv.ParseInt(cents, 10, 64); err != nil {
			return 0, ErrRange
		}
	}
	if up {
		if c == math.MaxInt64 {
			return 0, ErrRange
		}
		c++
	}
	if neg {
		c = -c
	}
	return Cents(c), nil
}

// compareFraction compares two digit strings read as decimal fractions
// (the digits after a point): "05" and "050" are equal, "1" > "09".
func compareFraction(a, b string) int {
	n := max(len(a), len(b))
	a += strings.Repeat("0", n-len(a))
	b += strings.Repeat("0", n-len(b))
	return strings.Compare(a, b)
}

// String formats c as a plain decimal with exactly two places, such as
// "1234.56" or "-0.05". It is the format of every report and of the wire.
func (c Cents) String() string {
	neg := c < 0
	u := uint64(c)
	if neg {
		u = uint64(-(c + 1)) + 1 // safe for math.MinInt64
	}
	s := fmt.Sprintf("%d.%02d", u/100, u%100)
	if neg {
		return "-" + s
	}
	return s
}

// MarshalJSON writes c as a JSON number with two decimal places, exactly.
func (c Cents) MarshalJSON() ([]byte, error) {
	return []byte(c.String()), nil
}

// UnmarshalJSON accepts a JSON number or a string holding one, as ParseWire.
func (c *Cents) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	v, err := ParseWire(string(b))
	if err != nil {
		return fmt.Errorf("amount %.40q: %w", b, err)
	}
	*c = v
	return nil
}

// Add returns c+d, or an error when the sum would overflow. Report totals
// use it so that a corrupt amount can never wrap around silently.
func (c Cents) Add(d Cents) (Cents, error) {
	s := c + d
	if (d > 0 && s < c) || (d < 0 && s > c) {
		return 0, ErrRange
	}
	return s, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
