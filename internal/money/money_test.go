package money

import (
	"encoding/json"
	"errors"
	"math"
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
		{"0.29000000000000004", 29},
		{"0.285", 29},
		{"0.284999", 28},
		{"1e2", 10000},
		{"12", 1200},
		{"-0.015", -2},
	}
	for _, c := range cases {
		var got Cents
		if err := json.Unmarshal([]byte(c.in), &got); err != nil || got != c.want {
			t.Errorf("Unmarshal(%s) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{`"abc"`, `"0x10"`, `"1/3"`, `true`, `1e999999`, `1e-31`, `"` + strings.Repeat("1", 65) + `"`} {
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
