package money

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want Cents
		err  error
	}{
		{"0.01", 1, nil},
		{"0.29", 29, nil},
		{"1234567.89", 123456789, nil},
		{"1234.5", 123450, nil},
		{" 12 ", 1200, nil},
		{".5", 50, nil},
		{"5.", 500, nil},
		{"007.10", 710, nil},
		{"0", 0, nil},
		{"92233720368547758.07", math.MaxInt64, nil},
		{"92233720368547758.08", 0, ErrRange},
		{"1.234", 0, ErrPrecision},
		{"", 0, ErrSyntax},
		{".", 0, ErrSyntax},
		{"-1.00", 0, ErrSyntax},
		{"+1", 0, ErrSyntax},
		{"1e3", 0, ErrSyntax},
		{"1,234.56", 0, ErrSyntax},
		{"$5", 0, ErrSyntax},
		{"1.2.3", 0, ErrSyntax},
		{"999999999999999999999", 0, ErrRange},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if !errors.Is(err, c.err) || got != c.want {
			t.Errorf("Parse(%q) = %d, %v; want %d, %v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestStringRoundTrip(t *testing.T) {
	for _, c := range []Cents{0, 1, 29, 100, 123456, 123456789, math.MaxInt64} {
		got, err := Parse(c.String())
		if err != nil || got != c {
			t.Errorf("Parse(%q) = %d, %v; want %d", c.String(), got, err, c)
		}
	}
	if s := Cents(-5).String(); s != "-0.05" {
		t.Errorf("Cents(-5) = %q", s)
	}
	if s := Cents(math.MinInt64).String(); s != "-92233720368547758.08" {
		t.Errorf("MinInt64 = %q", s)
	}
}

func TestWire(t *testing.T) {
	cases := []struct {
		in   string
		want Cents
	}{
		{"1234.56", 123456},
		{`"1234.56"`, 123456},
		{"1e2", 10000},
		{"2.9e-1", 29},
		{"29E-2", 29},
		{"0.0029e+2", 29},
		{"12", 1200},
		{"+12.5", 1250},
		{"-0.29", -29},
		{"1.500", 150},
		{".5", 50},
		{"5.", 500},
		{"0", 0},
		{"92233720368547758.07", math.MaxInt64},
		// Float artefacts: within 0.000001 of a whole cent, rounded to it.
		{"0.29000000000000004", 29},
		{`"0.29000000000000004"`, 29},
		{"12.340000000000001", 1234},
		{"0.28999999999999998", 29},
		{"0.57000000000000006", 57},
		{"1234567.8900000001", 123456789},
		{"19.990000000000002", 1999},
		{"4.3500000000000005", 435},
		{"-0.29000000000000004", -29},
		{"2.9000000000000004e-1", 29},
		{"0.290001", 29}, // exactly 0.000001 above: still an artefact
		{"0.289999", 29}, // exactly 0.000001 below
		{"0.0000004", 0}, // within the tolerance of zero
		{"9.9999999999", 1000},
	}
	for _, c := range cases {
		if got, err := ParseWire(c.in); err != nil || got != c.want {
			t.Errorf("ParseWire(%s) = %d, %v; want %d", c.in, got, err, c.want)
		}
		var got Cents
		if json.Valid([]byte(c.in)) {
			if err := json.Unmarshal([]byte(c.in), &got); err != nil || got != c.want {
				t.Errorf("Unmarshal(%s) = %d, %v; want %d", c.in, got, err, c.want)
			}
		}
	}
	// A real fraction of a cent is never rounded: it is refused, as a
	// precision error that says so.
	for _, in := range []string{"0.285", "0.284999", "-0.015", "12.345", "0.2900011", "0.2899989", "0.005", "1.23456", "1234e-5"} {
		got, err := ParseWire(in)
		if !errors.Is(err, ErrSubCent) || !errors.Is(err, ErrPrecision) {
			t.Errorf("ParseWire(%s) = %d, %v; want ErrSubCent", in, got, err)
		}
	}
	var c Cents
	err := json.Unmarshal([]byte("0.285"), &c)
	if err == nil || !strings.Contains(err.Error(), `"0.285"`) || !strings.Contains(err.Error(), "float rounding artefact") {
		t.Errorf("error for 0.285: %v", err)
	}
	for _, bad := range []string{`"abc"`, `"0x10"`, `"1/3"`, `true`, `1e999999`, `1e-31`, `"` + strings.Repeat("1", 65) + `"`,
		`"0b101"`, `"1_000"`, `"1e"`, `"1e+"`, `"e5"`, `"."`, `"-"`, `"--1"`, `"1e2e3"`, `"1.2.3"`, `"Inf"`, `"NaN"`, `" 1 2"`,
		`"92233720368547758.08"`, `"1e30"`} {
		var got Cents
		if err := json.Unmarshal([]byte(bad), &got); err == nil {
			t.Errorf("Unmarshal(%s) succeeded with %d", bad, got)
		}
	}
	b, _ := json.Marshal(struct{ A Cents }{123456789})
	if string(b) != `{"A":1234567.89}` {
		t.Errorf("Marshal = %s", b)
	}
}

// TestWireReadsFloatRenderings: every amount up to 10^9 units, written as
// the float64 a service would compute (cents × 0.01, or cents / 100) in
// the shortest, the %.17g and the exponent forms, reads back as its cents.
func TestWireReadsFloatRenderings(t *testing.T) {
	check := func(c int64) {
		t.Helper()
		for _, x := range []float64{float64(c) * 0.01, float64(c) / 100} {
			for _, s := range []string{
				strconv.FormatFloat(x, 'f', -1, 64), strconv.FormatFloat(x, 'g', 17, 64),
				strconv.FormatFloat(x, 'e', -1, 64), strconv.FormatFloat(x, 'e', 16, 64),
			} {
				if got, err := ParseWire(s); err != nil || int64(got) != c {
					t.Fatalf("ParseWire(%s) = %d, %v; want %d", s, got, err, c)
				}
			}
		}
	}
	for c := int64(0); c <= 100000; c++ {
		check(c)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		check(r.Int64N(100_000_000_000))
	}
}
func TestAdd(t *testing.T) {
	if s, err := Cents(1).Add(2); err != nil || s != 3 {
		t.Errorf("1+2 = %d, %v", s, err)
	}
	if _, err := Cents(math.MaxInt64).Add(1); !errors.Is(err, ErrRange) {
		t.Errorf("overflow not detected: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"0.01", "1234.56", "1.234", "", "-1", "1e3", "00.00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			return
		}
		if c < 0 {
			t.Fatalf("Parse(%q) negative %d", s, c)
		}
		back, err := Parse(c.String())
		if err != nil || back != c {
			t.Fatalf("round trip of %q: %d -> %q -> %d, %v", s, c, c.String(), back, err)
		}
		w, err := ParseWire(c.String())
		if err != nil || w != c {
			t.Fatalf("ParseWire(%q) = %d, %v", c.String(), w, err)
		}
	})
}

// FuzzParseWire: ParseWire never panics, and whatever it accepts lies
// within 0.000001 of the cents it returns (checked with exact rationals).
func FuzzParseWire(f *testing.F) {
	for _, s := range []string{"0.29000000000000004", "12.340000000000001", "0.28999999999999998", "0.285",
		"1e2", "2.9e-1", "-0.015", `"1234.56"`, "1e-31", "1e999999", "0.290001", "0.2900011", "+.5", "5.", ""} {
		f.Add(s)
	}
	tol := big.NewRat(1, 1_000_000)
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseWire(s)
		if err != nil {
			return
		}
		r, ok := new(big.Rat).SetString(strings.Trim(strings.TrimSpace(s), `"`))
		if !ok {
			t.Fatalf("ParseWire(%q) = %d, but it is not a number", s, c)
		}
		d := new(big.Rat).Sub(r, big.NewRat(int64(c), 100))
		if d.Abs(d).Cmp(tol) > 0 {
			t.Fatalf("ParseWire(%q) = %d, %s away", s, c, d.FloatString(10))
		}
	})
}
