package redact

import "testing"

func TestAccount(t *testing.T) {
	cases := map[string]string{
		"1111000016":        "****0016",
		"12345678901234567": "****4567",
		"1234":              "****34",
		"12345":             "****45",
		"":                  "****",
	}
	for in, want := range cases {
		if got := Account(in); got != want {
			t.Errorf("Account(%q) = %q, want %q", in, got, want)
		}
		if got := Last4(in); "****"+got != want {
			t.Errorf("Last4(%q) = %q", in, got)
		}
	}
}

func TestSecret(t *testing.T) {
	if got := Secret("sk_test_abcdef"); got != "sk_test_…(14 chars)" {
		t.Errorf("Secret = %q", got)
	}
	if got := Secret("hunter2"); got != "…(7 chars)" {
		t.Errorf("Secret = %q", got)
	}
}
