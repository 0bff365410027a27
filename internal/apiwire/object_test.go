package apiwire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestRawValuesAreCapped: a member value handed out by the decoder is a
// slice of the answer; appending to it must not write into the answer.
func TestRawValuesAreCapped(t *testing.T) {
	body := []byte(`{"a":"x","b":"y"}`)
	m, err := DecodeObject(body)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(m["a"], '!')
	if string(body) != `{"a":"x","b":"y"}` || string(m["b"]) != `"y"` {
		t.Errorf("append to a member value changed the answer: %s", body)
	}
}

// FuzzObject hands any input, unchecked, to the readers that expect a
// valid value, which must not panic; when the input is valid JSON they
// must split it as encoding/json does, and DecodeObject must accept and
// refuse what encoding/json does. (internal/echeck's
// FuzzDecodeMatchesReference checks the readers built on them against a
// reference decoder.)
func FuzzObject(f *testing.F) {
	for _, s := range []string{
		`{"success":true,"check":{"check_id":"a","amount":"12.34"}}`,
		`{"list":{"data":{"10":{"check_id":"c"},"9":{"check_id":"b"},"x":{"check_id":"a"}}}}`,
		`{"check\u005fid":"escaped key","amount":1}`, `{"check_id":"a","check_id":"b"}`,
		`{"check_id":"caf\u00e9 \"quoted\" \\ tab\t","name":"\ud83d\ude00"}`,
		"{\"check_id\":\"a\",\"memo\":\"\xff\xfe\",\"\xff\":1}",
		` { "check_id" : "a" , "amount" : 1.5 } `, `{"list":{"data":[[[[[[{"a":[1,{"b":"]}"}]}]]]]]]}}`,
		`{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
		`{}`, `[]`, `[ ]`, `[1, "x", {"a":[]}, null, true]`, `null`, `""`, `1`, ``, ` `, `{`, `{"a":`,
		`{"a":1}x`, `{"a":1,}`, `{"a" 1}`, `<html>`, "\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		_, _ = ListOf(in)
		_, _ = ObjectOf(in)
		trimmed := bytes.TrimSpace(in)
		if _, err := DecodeObject(in); (err == nil) != (json.Valid(trimmed) && len(trimmed) > 0 && trimmed[0] == '{') {
			t.Fatalf("DecodeObject(%q): %v", in, err)
		}
		if !json.Valid(trimmed) || len(trimmed) == 0 {
			return
		}
		switch trimmed[0] {
		case '{':
			var want Object
			if err := json.Unmarshal(trimmed, &want); err != nil {
				t.Fatal(err)
			}
			got, err := DecodeObject(trimmed)
			if err != nil || !equalObjects(got, want) {
				t.Fatalf("members of %q = %q, %v; want %q", in, got, err, want)
			}
		case '[':
			var want []json.RawMessage
			if err := json.Unmarshal(trimmed, &want); err != nil {
				t.Fatal(err)
			}
			got, err := ListOf(trimmed)
			if err != nil || len(got) != len(want) {
				t.Fatalf("elements of %q = %q, %v; want %q", in, got, err, want)
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("element %d of %q = %q, want %q", i, in, got[i], want[i])
				}
			}
		}
	})
}

func equalObjects(a, b Object) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// TestBoolTextNaN: "NaN" parses as a float but is no boolean, in either
// client (the ACH client's rule, now apiwire's for both).
func TestBoolTextNaN(t *testing.T) {
	for _, s := range []string{"NaN", " nan ", "-NaN"} {
		if v, ok := BoolText(s); ok {
			t.Errorf("BoolText(%q) = %v, true; want not a boolean", s, v)
		}
		if _, err := Bool([]byte(`"` + s + `"`)); err == nil {
			t.Errorf("Bool(%q): no error", s)
		}
	}
}
