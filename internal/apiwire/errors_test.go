package apiwire

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{" 120 ", 2 * time.Minute, true},
		{now.Add(time.Hour).Format(http.TimeFormat), time.Hour, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"Sunday, 22-Nov-26 03:00:30 GMT", 30 * time.Second, true}, // RFC 850
		{"Sun Nov 22 03:00:10 2026", 10 * time.Second, true},       // asctime
		{"99999999999999999999999", MaxRetryAfter, true},
		{"86401", MaxRetryAfter, true},
		{now.Add(time.Minute).Format(http.TimeFormat), time.Minute, true},
		{"-5", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	}
	for _, c := range cases {
		got, ok := ParseRetryAfter(c.in, now)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseRetryAfter(%q) = %s, %v; want %s, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	for _, s := range []string{"0", "120", "-1", "1.5", "", " 7 ", "99999999999999999999",
		now.Add(time.Minute).Format(http.TimeFormat), "Sunday, 22-Nov-26 03:00:30 GMT",
		"Sun Nov 22 03:00:10 2026", "Mon, 01 Jan 0001 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := ParseRetryAfter(s, now)
		if d < 0 || d > MaxRetryAfter {
			t.Fatalf("ParseRetryAfter(%q) = %s out of [0, %s]", s, d, MaxRetryAfter)
		}
		if !ok && d != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %s without ok", s, d)
		}
	})
}

func TestClassify(t *testing.T) {
	cases := []struct {
		status        int
		effect, plain Class
	}{
		{401, Fatal, Fatal}, {403, Fatal, Fatal}, {429, Retryable, Retryable}, {408, Retryable, Retryable},
		{500, Ambiguous, Retryable}, {503, Ambiguous, Retryable}, {400, Permanent, Permanent},
		{404, Permanent, Permanent}, {410, Permanent, Permanent}, {302, Ambiguous, Permanent},
	}
	for _, c := range cases {
		if got := Classify(true, c.status); got != c.effect {
			t.Errorf("Classify(effect, %d) = %s, want %s", c.status, got, c.effect)
		}
		if got := Classify(false, c.status); got != c.plain {
			t.Errorf("Classify(no effect, %d) = %s, want %s", c.status, got, c.plain)
		}
	}
}

func TestClassOf(t *testing.T) {
	cases := []struct {
		err  error
		want Class
	}{
		{nil, 0},
		{fmt.Errorf("row 3: %w", &Error{Class: Fatal}), Fatal},
		{context.Canceled, Retryable},
		{fmt.Errorf("wait: %w", context.DeadlineExceeded), Retryable},
		{errors.New("disk full"), Ambiguous},
	}
	for _, c := range cases {
		if got := ClassOf(c.err); got != c.want {
			t.Errorf("ClassOf(%v) = %s, want %s", c.err, got, c.want)
		}
	}
	if s := Class(9).String(); s != "Class(9)" {
		t.Errorf("String = %q", s)
	}
}

func TestErrorText(t *testing.T) {
	f := &Error{Op: "x.create", Status: 429, Code: "E1", Message: "slow down", Err: errors.New("cause"),
		Class: Retryable, RetryAfter: 3 * time.Second, client: "ach"}
	if got, want := f.Error(), "ach x.create: HTTP 429 code E1: slow down: cause (retryable, retry after 3s)"; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
	if got, want := (&Error{Op: "y", Class: Permanent, client: "echeck"}).Error(), "echeck y (permanent)"; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
}

func TestErrorFlagged(t *testing.T) {
	cases := []struct {
		body        string
		echeck, ach bool // blankIsFalse true, false
	}{
		{`{"error":true}`, true, true},
		{`{"error":"Account closed"}`, true, true},
		{`{"error":{"code":1}}`, true, true},
		{`{"error":[]}`, false, false},
		{`{"error":false,"success":true}`, false, false},
		{`{"error":0,"success":1}`, false, false},
		{`{"error":"","success":null}`, false, false},
		{`{"success":false}`, true, true},
		{`{"success":"0"}`, true, true},
		{`{"success":""}`, false, false},
		{`{"success":" "}`, true, false},
		{`{"success":"maybe"}`, false, false},
		{`{"success":"nan"}`, false, false},
		{`{}`, false, false},
	}
	for _, c := range cases {
		m, err := DecodeObject([]byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if got := ErrorFlagged(m, true); got != c.echeck {
			t.Errorf("ErrorFlagged(%s, blank is false) = %v", c.body, got)
		}
		if got := ErrorFlagged(m, false); got != c.ach {
			t.Errorf("ErrorFlagged(%s, blank says nothing) = %v", c.body, got)
		}
	}
}

func TestMessage(t *testing.T) {
	find := func(m Object) string { return LooseText(m["message"]) }
	long := strings.Repeat("é", 300)
	msg, _, _ := Message([]byte(`{"message":"`+long+`"}`), 400, find)
	if len(msg) > MaxExcerpt+len("…") || !strings.HasSuffix(msg, "…") || strings.ContainsRune(msg, '\uFFFD') {
		t.Errorf("excerpt of %d bytes: %q", len(msg), msg)
	}
	msg, code, m := Message([]byte("line one\n\tline two\x00"), 502, find)
	if msg != "line one line two" || code != "" || m != nil {
		t.Errorf("non-JSON body: %q %q %v", msg, code, m)
	}
	if msg, _, _ := Message(nil, 503, find); msg != "Service Unavailable" {
		t.Errorf("empty body message %q", msg)
	}
	msg, code, m = Message([]byte(`{"error":true,"code":" 12 "}`), 400, find)
	if msg != "Bad Request" || code != "12" || m == nil {
		t.Errorf("no message: %q %q %v", msg, code, m)
	}
}

func TestValidID(t *testing.T) {
	for _, id := range []string{"6f1e2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b", "42", "a_b", strings.Repeat("x", 128)} {
		if err := ValidID(id); err != nil {
			t.Errorf("ValidID(%q): %v", id, err)
		}
	}
	for _, id := range []string{"", "..", "a/b", "a b", strings.Repeat("x", 129)} {
		if err := ValidID(id); err == nil {
			t.Errorf("ValidID(%q) accepted", id)
		}
	}
}

// TestDomain checks the one table from a Class to the domain's failure,
// and that only an error filed by Domain is the domain's.
func TestDomain(t *testing.T) {
	want := map[Class]payment.Failure{Retryable: payment.FailNotDone, Ambiguous: payment.FailLost,
		Permanent: payment.FailRefused, Fatal: payment.FailKeyRefused}
	cond, outcome := errors.New("cond"), errors.New("outcome")
	for cls, f := range want {
		e := &Error{Op: "x.create", Status: 404, Class: cls, Message: "no", RetryAfter: time.Second, client: "ach",
			conds: []error{cond}, outcomes: []error{outcome}}
		if errors.Is(e, payment.ErrService) || errors.Is(e, outcome) || payment.FailureOf(e) != payment.FailLost {
			t.Errorf("%s: the client's own error is the domain's", cls)
		}
		d := Domain(e)
		if got := payment.FailureOf(d); got != f {
			t.Errorf("%s: FailureOf = %d, want %d", cls, got, f)
		}
		if !errors.Is(d, payment.ErrService) || !errors.Is(d, cond) || !errors.Is(d, outcome) {
			t.Errorf("%s: %v is not ErrService, its condition and its outcome", cls, d)
		}
		if d.Error() != e.Error() || ClassOf(d) != cls || payment.RetryAfter(d) != time.Second || payment.ServiceMessage(d) != "no" {
			t.Errorf("%s: Domain changed the error: %v", cls, d)
		}
		w := Domain(fmt.Errorf("row 3: %w", e))
		if w.Error() != "row 3: "+e.Error() || payment.FailureOf(w) != f || !errors.Is(w, outcome) || payment.RetryAfter(w) != time.Second {
			t.Errorf("%s: a wrapped error filed as %v", cls, w)
		}
	}
	if Domain(nil) != nil {
		t.Error("Domain(nil) is not nil")
	}
	for err, f := range map[error]payment.Failure{context.Canceled: payment.FailNotDone, errors.New("disk full"): payment.FailLost} {
		d := Domain(err)
		if payment.FailureOf(d) != f || !errors.Is(d, payment.ErrService) || !errors.Is(d, err) || d.Error() != err.Error() {
			t.Errorf("Domain(%v) = %v, failure %d, want %d", err, d, payment.FailureOf(d), f)
		}
	}
}

func TestAdapt(t *testing.T) {
	of := Adapt(func(n int) string { return strconv.Itoa(n) })
	if s, err := of(7, nil); s != "7" || err != nil {
		t.Errorf("answer: %q, %v", s, err)
	}
	if s, err := of(7, &Error{Op: "x.get", Class: Permanent}); s != "" || payment.FailureOf(err) != payment.FailRefused ||
		!errors.Is(err, payment.ErrService) {
		t.Errorf("error: %q, %v, want none and a refusal the domain's", s, err)
	}
}
