package sheet

import (
	"strconv"
	"strings"
	"time"
)

// Day 0 of the two date systems of a workbook. In the 1900 system (the
// default) serial 1 is 1 January 1900, and serial 60 is 29 February 1900,
// a day that never was, kept from Lotus 1-2-3: from serial 61 (1 March
// 1900) on, day 0 is 30 December 1899. In the 1904 system serial 0 is
// 1 January 1904.
var (
	epoch1900     = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	epoch1900Jan  = time.Date(1899, 12, 31, 0, 0, 0, 0, time.UTC)
	epoch1904     = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
	phantomSerial = 60
	lastSerial    = 2958465 // 31 December 9999
)

// serialDate is the day of a date serial number as a cell stores it
// ("46023", or "46023.5" with a time of day, which is dropped), as
// YYYY-MM-DD. It reads the digits, never a float. ok is false for what
// is not the serial of a real day: a negative or fractional-only value,
// an exponent, 29 February 1900, or beyond 9999.
func serialDate(v string, date1904 bool) (string, bool) {
	whole, frac, _ := strings.Cut(strings.TrimSpace(v), ".")
	if !digits(whole) || frac != "" && !digits(frac) || len(whole) > 7 {
		return "", false
	}
	n, err := strconv.Atoi(whole)
	if err != nil || n > lastSerial {
		return "", false
	}
	var d time.Time
	switch {
	case date1904:
		d = epoch1904.AddDate(0, 0, n)
	case n == 0, n == phantomSerial:
		return "", false
	case n < phantomSerial:
		d = epoch1900Jan.AddDate(0, 0, n)
	default:
		d = epoch1900.AddDate(0, 0, n)
	}
	return d.Format(time.DateOnly), true
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isDateFormat reports whether a number format shows a date: a built-in
// date format (14 to 17, 22, and the East Asian 27 to 36 and 50 to 58),
// or a custom code with a day or a year in it (outside quoted text,
// escaped characters and [brackets]). A time of day alone is not a date.
func isDateFormat(id int, custom *string) bool {
	if custom != nil && *custom != "" {
		return dateCode(*custom)
	}
	switch {
	case id >= 14 && id <= 17, id == 22, id >= 27 && id <= 36, id >= 50 && id <= 58:
		return true
	}
	return false
}

// dateCode reports a format code that shows a day or a year.
func dateCode(code string) bool {
	for i := 0; i < len(code); i++ {
		switch c := code[i]; c {
		case '"':
			if j := strings.IndexByte(code[i+1:], '"'); j >= 0 {
				i += j + 1
			} else {
				return false
			}
		case '\\', '_', '*':
			i++
		case '[':
			if j := strings.IndexByte(code[i+1:], ']'); j >= 0 {
				i += j + 1
			}
		case 'd', 'D', 'y', 'Y':
			return true
		}
	}
	return false
}
