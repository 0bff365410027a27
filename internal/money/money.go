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
	"math/big"
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

// ParseWire reads an amount as a JSON API writes it: a decimal literal that
// may carry an exponent or more than two decimal places (a float artefact of
// the sender, such as 0.29000000000000004). It rounds half away from zero to
// the nearest cent using exact rational arithmetic. Quotes around the value
// are accepted, because public clients see amounts both as numbers and as
// strings.
func ParseWire(s string) (Cents, error) {
	s = strings.Trim(strings.TrimSpace(s), `"`)
	if s == "" || strings.ContainsAny(s, "xXpP_") || strings.ContainsAny(s, "/") {
		return 0, ErrSyntax
	}
	// big.Rat would build a number of millions of digits for "1e999999"
	// (about 0.4 s); no amount needs more than 64 characters or an
	// exponent beyond ±30.
	if len(s) > 64 {
		return 0, ErrRange
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		if exp, err := strconv.Atoi(s[i+1:]); err != nil || exp > 30 || exp < -30 {
			return 0, ErrRange
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, ErrSyntax
	}
	r.Mul(r, big.NewRat(100, 1))
	neg := r.Sign() < 0
	r.Abs(r)
	// Round half away from zero: floor(r + 1/2).
	r.Add(r, big.NewRat(1, 2))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if !q.IsInt64() {
		return 0, ErrRange
	}
	c := q.Int64()
	if neg {
		c = -c
	}
	return Cents(c), nil
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
