//go:build jsonlibs

package echeck

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/bytedance/sonic"
	gojson "github.com/goccy/go-json"
	segjson "github.com/segmentio/encoding/json"

	"github.com/batchd/batchd/internal/apiwire"
)

// Run with: go test -tags jsonlibs -run '^$' -bench JSONLibs -benchmem ./internal/echeck
// The build tag keeps the libraries that lost (goccy/go-json,
// segmentio/encoding, bytedance/sonic) out of every ordinary build and
// test: they are test requirements in go.mod only.
//
// The benchmarks below decode the same 100-check list page, as the
// sandbox writes it and as its quirks mode does, with each JSON library
// considered for issue 21, into the same lenient types (apiwire.Str, Int,
// Flag, Amount), against the client's own decoder (the hand-written
// scanner until issue 21; commit e57b6ba has the scanner beside them).
// Nested objects are pointers here so that every library decodes the
// whole page itself; the client's decoder adds the leniency of entries
// and nested objects.

// benchPage is a list answer for the library benchmarks.
type benchPage struct {
	List struct {
		CurrentPage apiwire.Int  `json:"current_page"`
		LastPage    apiwire.Int  `json:"last_page"`
		PerPage     apiwire.Int  `json:"per_page"`
		Total       apiwire.Int  `json:"total"`
		Data        []benchCheck `json:"data"`
	} `json:"list"`
}

// benchCheck is checkWire with its nested objects as pointers.
type benchCheck struct {
	checkWire
	BasicVerification *bvWire `json:"basic_verification"`
	FundsConfirmation *fcWire `json:"funds_confirmation"`
}

// checks turns the decoded page into Checks, as the client would.
func (p *benchPage) checks() (Paging, []Check, error) {
	var e apiwire.FirstError
	l := p.List
	pg := Paging{CurrentPage: l.CurrentPage.Strict("current_page", &e), LastPage: l.LastPage.Strict("last_page", &e),
		PerPage: l.PerPage.Strict("per_page", &e), Total: l.Total.Strict("total", &e)}
	out := make([]Check, len(l.Data))
	for i := range l.Data {
		w := &l.Data[i]
		w.checkWire.BasicVerification.V, w.checkWire.BasicVerification.OK = derefOr(w.BasicVerification)
		w.checkWire.FundsConfirmation.V, w.checkWire.FundsConfirmation.OK = derefOr(w.FundsConfirmation)
		c, err := w.check()
		e.Note(err)
		out[i] = c
	}
	return pg, out, e.Err
}

func derefOr[T any](p *T) (T, bool) {
	var zero T
	if p == nil {
		return zero, false
	}
	return *p, true
}

// quirksListPage is sandboxListPage as the sandbox's quirks mode and the
// real service may write it: paging numbers mixed, check numbers and zip
// codes as JSON numbers, amounts as float64 renderings or quoted, flags as
// "1" or true, nulls, a masked account, and members batchd does not read.
func quirksListPage(tb testing.TB, page, n int) []byte {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(sandboxListPage(tb, page, n), &m); err != nil {
		tb.Fatal(err)
	}
	list := m["list"].(map[string]any)
	list["current_page"], list["total"], list["extra"] = page, 100000, map[string]any{"x": []any{1, "2", nil}}
	for i, it := range list["data"].([]any) {
		c := it.(map[string]any)
		num := c["number"].(string)
		c["number"] = json.Number(num)
		c["zip"] = json.Number(c["zip"].(string))
		amt := c["amount"].(float64)
		if i%2 == 0 {
			c["amount"] = json.Number(fmt.Sprint(amt + 0.1 - 0.1)) // a float64 artefact at times
		} else {
			c["amount"] = fmt.Sprint(amt)
		}
		c["memo"], c["recurring"], c["bank_account"] = nil, []any{"1", true, 0}[i%3], "1......016"
		c["recurring_installments"] = fmt.Sprint(c["recurring_installments"])
		c["created_at"], c["meta"] = "2026-11-20T10:00:00Z", map[string]any{"source": "api", "tags": []any{}}
	}
	b, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// jsonLibs are the decoders compared, each into benchPage.
var jsonLibs = []struct {
	name      string
	unmarshal func([]byte, any) error
}{
	{"encoding-json", json.Unmarshal},
	{"json-v2", apiwire.Unmarshal}, // go-json-experiment/json; encoding/json/v2 under GOEXPERIMENT=jsonv2
	{"goccy-go-json", gojson.Unmarshal},
	{"segmentio", func(b []byte, v any) error {
		_, err := segjson.Parse(b, v, segjson.DontMatchCaseInsensitiveStructFields)
		return err
	}},
	{"sonic", sonic.ConfigStd.Unmarshal},
}

// BenchmarkJSONLibs decodes a 100-check page with the client's decoder
// (decodeListAnswer: the scanner before issue 21) and with each library,
// the sandbox's page and a quirks page.
func BenchmarkJSONLibs(b *testing.B) {
	pages := map[string][]byte{"sandbox": sandboxListPage(b, 5, 100), "quirks": quirksListPage(b, 5, 100)}
	for _, name := range []string{"sandbox", "quirks"} {
		body := pages[name]
		wantPg, want, err := decodeListAnswer(body)
		if err != nil || len(want) != 100 {
			b.Fatalf("%s page: %d checks, %v", name, len(want), err)
		}
		b.Run(name+"/client", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := decodeListAnswer(body); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, lib := range jsonLibs {
			decode := func() (Paging, []Check, error) {
				var p benchPage
				if err := lib.unmarshal(body, &p); err != nil {
					return Paging{}, nil, err
				}
				return p.checks()
			}
			pg, got, err := decode()
			if err != nil || pg != wantPg || !reflect.DeepEqual(got, want) {
				b.Errorf("%s/%s: decodes differently: %v\n%s", name, lib.name, err, firstDiff(got, want))
				continue
			}
			b.Run(name+"/"+lib.name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := decode(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func firstDiff(got, want []Check) string {
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			return fmt.Sprintf("check %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	return fmt.Sprintf("%d checks, want %d", len(got), len(want)) + strings.Repeat("", 0)
}
