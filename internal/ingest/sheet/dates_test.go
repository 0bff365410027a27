package sheet

import "testing"

// TestSerialDate: the 1900 system with its phantom 29 February 1900, the
// 1904 system, times of day dropped, and what is no day.
func TestSerialDate(t *testing.T) {
	for _, tc := range []struct {
		v    string
		y04  bool
		want string
		ok   bool
	}{
		{"1", false, "1900-01-01", true},
		{"59", false, "1900-02-28", true},
		{"60", false, "", false}, // 29 February 1900 never was
		{"61", false, "1900-03-01", true},
		{"46082", false, "2026-03-01", true},
		{"46082.99998842", false, "2026-03-01", true},
		{"2958465", false, "9999-12-31", true},
		{"2958466", false, "", false},
		{"0", false, "", false},
		{"0", true, "1904-01-01", true},
		{"44620", true, "2026-03-01", true}, // 46082 - 1462
		{"-1", false, "", false},
		{"4.6E4", false, "", false},
		{".5", false, "", false},
	} {
		got, ok := serialDate(tc.v, tc.y04)
		if got != tc.want || ok != tc.ok {
			t.Errorf("serialDate(%q, 1904=%v) = %q, %v; want %q, %v", tc.v, tc.y04, got, ok, tc.want, tc.ok)
		}
	}
}

// TestIsDateFormat: built-in and custom date formats, not times or text.
func TestIsDateFormat(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		id     int
		custom *string
		want   bool
	}{
		{14, nil, true}, {22, nil, true}, {0, nil, false}, {49, nil, false}, {20, nil, false},
		{164, s("yyyy-mm-dd"), true}, {164, s("DD.MM.YYYY"), true}, {164, s("[$-409]mmmm d, yyyy;@"), true},
		{164, s("hh:mm:ss"), false}, {164, s(`"day"0`), false}, {164, s(`#,##0.00\d`), false},
		{164, s("[h]:mm"), false}, {164, s("@"), false},
	} {
		if got := isDateFormat(tc.id, tc.custom); got != tc.want {
			c := ""
			if tc.custom != nil {
				c = *tc.custom
			}
			t.Errorf("isDateFormat(%d, %q) = %v", tc.id, c, got)
		}
	}
}
