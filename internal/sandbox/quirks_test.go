package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/money"
)

// The tests below assert on the raw JSON of quirks-mode answers, each
// beside the exact mode's answer to the same request.

// modes runs f once per mode, as subtests "exact" and "quirks".
func modes(t *testing.T, f func(t *testing.T, h *harness, quirks bool)) {
	for _, q := range []bool{false, true} {
		name := "exact"
		if q {
			name = "quirks"
		}
		t.Run(name, func(t *testing.T) { f(t, newHarness(t, Options{Quirks: q}), q) })
	}
}

// member returns the raw JSON at path (keys of nested objects) in the
// answer raw.
func member(t *testing.T, raw []byte, path ...string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("answer is not an object: %s", raw)
	}
	for i, k := range path {
		v, ok := m[k]
		if !ok {
			t.Fatalf("no %s in %s", strings.Join(path[:i+1], "."), raw)
		}
		if i == len(path)-1 {
			return string(v)
		}
		m = nil
		if err := json.Unmarshal(v, &m); err != nil {
			t.Fatalf("%s is not an object: %s", strings.Join(path[:i+1], "."), v)
		}
	}
	return ""
}

// firstEntry returns the raw JSON of member key of the first list entry.
func firstEntry(t *testing.T, raw []byte, key string) string {
	t.Helper()
	var env struct {
		List struct {
			Data []map[string]json.RawMessage `json:"data"`
		} `json:"list"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || len(env.List.Data) == 0 {
		t.Fatalf("no list entry in %s", raw)
	}
	return string(env.List.Data[0][key])
}

func TestQuirkNumberWithoutLeadingZeros(t *testing.T) {
	modes(t, func(t *testing.T, h *harness, quirks bool) {
		for sent, stored := range map[string]string{"0000123": "123", "0": "0", "0000000000": "0", "42": "42", "0100": "100"} {
			want := `"` + sent + `"`
			if quirks {
				want = `"` + stored + `"`
			}
			label := "num-" + sent
			r := h.post("/v1/check/create", keyA, with(map[string]any{"number": sent, "label": label}))
			wantStatus(t, r, http.StatusOK)
			id := r.check()["check_id"].(string)
			got := map[string]string{
				"create": member(t, r.raw, "check", "number"),
				"get":    member(t, h.get("/v1/check/"+id, keyA).raw, "check", "number"),
				"list":   firstEntry(t, h.get("/v1/check/list?label="+label, keyA).raw, "number"),
			}
			padded := sent
			if len(padded) < 10 {
				padded = "0" + padded
			}
			ed := h.post("/v1/check/edit", keyA, with(map[string]any{"check_id": id, "number": padded, "label": label}))
			wantStatus(t, ed, http.StatusOK)
			editWant := `"` + padded + `"`
			if quirks {
				editWant = want
			}
			if g := member(t, ed.raw, "check", "number"); g != editWant {
				t.Errorf("edit to number %s answers %s, want %s", padded, g, editWant)
			}
			for what, g := range got {
				if g != want {
					t.Errorf("%s of number %s answers %s, want %s", what, sent, g, want)
				}
			}
		}
		// A number given as a JSON number (as the JS client sends it) is
		// stored as digits and answered as a string in both modes.
		r := h.post("/v1/check/create", keyA, with(map[string]any{"number": json.Number("77")}))
		wantStatus(t, r, http.StatusOK)
		if g := member(t, r.raw, "check", "number"); g != `"77"` {
			t.Errorf("number sent as 77 answers %s", g)
		}
		// An automatic number is the same in both modes.
		if g := member(t, h.post("/v1/check/create", keyA, validCheck()).raw, "check", "number"); g != `"1001"` {
			t.Errorf("automatic number: %s, want \"1001\"", g)
		}
	})
}

func TestQuirkNumberSortIsNumeric(t *testing.T) {
	modes(t, func(t *testing.T, h *harness, quirks bool) {
		for _, n := range []string{"009", "10", "0000008"} {
			h.create(keyA, map[string]any{"number": n, "label": "sort"})
		}
		r := h.get("/v1/check/list?label=sort&sort=number&direction=ASC", keyA)
		var got []string
		for _, e := range r.data() {
			got = append(got, e.(map[string]any)["number"].(string))
		}
		want := "[0000008 009 10]"
		if quirks {
			want = "[8 9 10]"
		}
		if fmt.Sprint(got) != want {
			t.Errorf("sorted by number: %v, want %s", got, want)
		}
	})
}

func TestQuirkLabelFilterContainsAnyCase(t *testing.T) {
	modes(t, func(t *testing.T, h *harness, quirks bool) {
		for _, l := range []string{"  Batch-7  ", "batch-7", "batch-70", "prefix-BATCH-7-suffix", "other", ""} {
			h.create(keyA, map[string]any{"label": l})
		}
		labels := func(q string) string {
			r := h.get("/v1/check/list?direction=ASC&label="+q, keyA)
			wantStatus(t, r, http.StatusOK)
			var out []string
			for _, e := range r.data() {
				out = append(out, e.(map[string]any)["label"].(string))
			}
			return fmt.Sprint(out)
		}
		// The label is stored trimmed in both modes.
		if got := labels("Batch-7"); quirks && got != "[Batch-7 batch-7 batch-70 prefix-BATCH-7-suffix]" ||
			!quirks && got != "[Batch-7]" {
			t.Errorf("label=Batch-7 lists %s", got)
		}
		if got := labels("%20batch-7%20"); quirks && got != "[Batch-7 batch-7 batch-70 prefix-BATCH-7-suffix]" ||
			!quirks && got != "[batch-7]" {
			t.Errorf("label=' batch-7 ' lists %s", got)
		}
		if got := labels("TCH-70"); quirks && got != "[batch-70]" || !quirks && got != "[]" {
			t.Errorf("label=TCH-70 lists %s", got)
		}
		if got := labels("nothing"); got != "[]" {
			t.Errorf("label=nothing lists %s", got)
		}
		// The filter combines with the other filters and with paging.
		r := h.get("/v1/check/list?label=batch&limit=3&page=2", keyA)
		if n := len(r.data()); quirks && n != 1 || !quirks && n != 0 {
			t.Errorf("label=batch, page 2 of 3: %d entries", n)
		}
	})
}

func TestQuirkAmountsAsFloats(t *testing.T) {
	modes(t, func(t *testing.T, h *harness, quirks bool) {
		cases := []struct{ sent, exact, float string }{
			{"0.57", "0.57", "0.5700000000000001"},
			{"19.99", "19.99", "19.990000000000002"},
			{"4.35", "4.35", "4.3500000000000005"},
			{"1234567.89", "1234567.89", "1234567.8900000001"},
			{"12.34", "12.34", "12.34"},
			{"0.29", "0.29", "0.29"},
			{"100", "100.00", "100"},
			{"90071992547409.93", "90071992547409.93", "90071992547409.92"}, // beyond 2^53 cents
		}
		for i, tc := range cases {
			want := tc.exact
			if quirks {
				want = tc.float
			}
			label := fmt.Sprintf("amt-%d", i)
			r := h.post("/v1/check/create", keyA, with(map[string]any{"amount": tc.sent, "label": label}))
			wantStatus(t, r, http.StatusOK)
			id := r.check()["check_id"].(string)
			for what, g := range map[string]string{
				"create": member(t, r.raw, "check", "amount"),
				"get":    member(t, h.get("/v1/check/"+id, keyA).raw, "check", "amount"),
				"list":   firstEntry(t, h.get("/v1/check/list?label="+label, keyA).raw, "amount"),
			} {
				if g != want {
					t.Errorf("%s of amount %s answers %s, want %s", what, tc.sent, g, want)
				}
			}
		}
		// Payment links too.
		r := h.post("/v1/paymentlink/create", keyA, map[string]any{"amount": "19.99"})
		want := "19.99"
		if quirks {
			want = "19.990000000000002"
		}
		if g := member(t, r.raw, "checkout_link", "amount"); g != want {
			t.Errorf("payment link amount 19.99 answers %s, want %s", g, want)
		}
		if g := firstEntry(t, h.get("/v1/paymentlink/list", keyA).raw, "amount"); g != want {
			t.Errorf("listed payment link amount 19.99 answers %s, want %s", g, want)
		}
		// The stored amount is still exact: a payer of the link pays 19.99,
		// and the link search by amount finds it (quirks mode refuses the
		// search parameter).
		tok := obj(r.body, "checkout_link")["checkout_token"].(string)
		paid := h.post("/_sandbox/paymentlink/pay", keyA, map[string]any{"checkout_token": tok})
		if g := member(t, paid.raw, "check", "amount"); g != want {
			t.Errorf("paying the link of 19.99 makes a check of %s, want %s", g, want)
		}
		search := h.get("/v1/paymentlink/list?search=19.99", keyA)
		if quirks {
			wantField(t, search, "search")
		} else if n := len(search.data()); n != 1 {
			t.Errorf("search=19.99 finds %d links", n)
		}
	})
}

// TestQuirkFloatAmountsAreCloseToCents: every float amount the quirks mode
// writes for amounts up to 10^9 units lies within 0.000001 of the cents it
// stands for, which is what a client may round away (money.ParseWire).
func TestQuirkFloatAmountsAreCloseToCents(t *testing.T) {
	artefacts := 0
	for c := money.Cents(1); c <= 200_000; c += 7 {
		b, _ := amount{c: c, float: true}.MarshalJSON()
		got, err := money.ParseWire(string(b))
		if err != nil || got != c {
			t.Fatalf("%d cents written as %s reads as %d, %v", c, b, got, err)
		}
		if len(b) > len(c.String()) {
			artefacts++
		}
	}
	if artefacts < 1000 {
		t.Errorf("only %d amounts of about 28,500 carry a float artefact", artefacts)
	}
}

func TestQuirkPagingNumbersMixed(t *testing.T) {
	modes(t, func(t *testing.T, h *harness, quirks bool) {
		for i := 0; i < 5; i++ {
			h.create(keyA, map[string]any{"label": "p"})
			h.post("/v1/paymentlink/create", keyA, map[string]any{"memo": "m"})
		}
		fields := []string{"current_page", "from", "to", "last_page", "per_page", "total"}
		for _, path := range []string{"/v1/check/list?label=p&limit=2", "/v1/paymentlink/list?limit=2"} {
			kinds := map[string]map[bool]bool{}
			for page := 1; page <= 3; page++ {
				raw := h.get(fmt.Sprintf("%s&page=%d", path, page), keyA).raw
				want := map[string]string{"current_page": fmt.Sprint(page), "from": fmt.Sprint(page - 1),
					"to": fmt.Sprint((page + 1) % 4), "last_page": "3", "per_page": "2", "total": "5"}
				for _, f := range fields {
					v := member(t, raw, "list", f)
					isNum := !strings.HasPrefix(v, `"`)
					if kinds[f] == nil {
						kinds[f] = map[bool]bool{}
					}
					kinds[f][isNum] = true
					if strings.Trim(v, `"`) != want[f] {
						t.Errorf("%s page %d: %s = %s, want %s", path, page, f, v, want[f])
					}
				}
			}
			for _, f := range fields {
				if quirks && len(kinds[f]) != 2 {
					t.Errorf("%s: %s comes in one form only over three pages: %v", path, f, kinds[f])
				}
				if !quirks && (len(kinds[f]) != 1 || !kinds[f][false]) {
					t.Errorf("%s: %s is not always a string in the exact mode", path, f)
				}
			}
		}
	})
}

func TestQuirkAccountMask(t *testing.T) {
	modes(t, func(t *testing.T, h *harness, quirks bool) {
		for acct, masked := range map[string]string{
			"12345678909876": "1..........876", "1111000016": "1......016", "12345": "1.345", "1234": "1234",
			"12345678901234567": "1.............567",
		} {
			want := `"` + masked + `"`
			if !quirks {
				want = `"****` + acct[len(acct)-min(4, len(acct)/2):] + `"`
			}
			label := "acct-" + acct
			r := h.post("/v1/check/create", keyA, with(map[string]any{"bank_routing": "123456789", "bank_account": acct, "label": label}))
			wantStatus(t, r, http.StatusOK)
			id := r.check()["check_id"].(string)
			for what, g := range map[string]string{
				"create": member(t, r.raw, "check", "bank_account"),
				"get":    member(t, h.get("/v1/check/"+id, keyA).raw, "check", "bank_account"),
				"list":   firstEntry(t, h.get("/v1/check/list?label="+label, keyA).raw, "bank_account"),
			} {
				if g != want {
					t.Errorf("%s of account %s answers %s, want %s", what, acct, g, want)
				}
			}
			if quirks && len(masked) != len(acct) {
				t.Errorf("mask %s is not as long as the account", masked)
			}
		}
		// A check made with a token shows the token's account, masked.
		tok := h.post("/v1/account/tokenization", keyA, map[string]any{"first_name": "A", "last_name": "B",
			"bank_routing": FixtureRouting, "bank_account": "1111000016", "store": "s"})
		wantStatus(t, tok, http.StatusOK)
		token := tok.body["tokenization"].(map[string]any)["token"].(string)
		r := h.post("/v1/check/create", keyA, with(map[string]any{"bank_routing": nil, "bank_account": nil, "token": token, "store": "s"}))
		want := `"****0016"`
		if quirks {
			want = `"1......016"`
		}
		if g := member(t, r.raw, "check", "bank_account"); g != want {
			t.Errorf("check by token: bank_account %s, want %s", g, want)
		}
	})
}

func TestQuirkEditIgnoresPhone(t *testing.T) {
	modes(t, func(t *testing.T, h *harness, quirks bool) {
		c := h.create(keyA, map[string]any{"phone": "+1 555 0100", "address": "1 Main St", "city": "Springfield",
			"state": "IL", "zip": "62701", "number": "5"})
		id := c["check_id"].(string)
		edit := func(changes map[string]any) map[string]any {
			changes["check_id"], changes["number"] = id, "5"
			r := h.post("/v1/check/edit", keyA, with(changes))
			wantStatus(t, r, http.StatusOK)
			return r.check()
		}
		// Left out: cleared in the exact mode, kept in quirks mode. The
		// other optional fields left out are cleared in both.
		ed := edit(map[string]any{})
		want := ""
		if quirks {
			want = "+1 555 0100"
		}
		if ed["phone"] != want || ed["address"] != "" {
			t.Errorf("edit without phone and address: phone %q address %q; want phone %q, address cleared", ed["phone"], ed["address"], want)
		}
		r := h.get("/v1/check/"+id, keyA)
		if r.check()["phone"] != want {
			t.Errorf("get after edit: phone %q, want %q", r.check()["phone"], want)
		}
		// Sent empty: the same as left out.
		if ed := edit(map[string]any{"phone": ""}); ed["phone"] != want {
			t.Errorf("edit with phone \"\": phone %q, want %q", ed["phone"], want)
		}
		// Given: replaced in the exact mode, ignored in quirks mode.
		given := "555-0199"
		if quirks {
			given = "+1 555 0100"
		}
		if ed := edit(map[string]any{"phone": "555-0199"}); ed["phone"] != given {
			t.Errorf("edit with phone 555-0199: phone %q, want %q", ed["phone"], given)
		}
		// Still validated in both modes.
		wantField(t, h.post("/v1/check/edit", keyA, with(map[string]any{"check_id": id, "number": "5", "phone": strings.Repeat("5", 21)})), "phone")
	})
}

// TestQuirksDrawNoFaults: the quirks mode draws nothing from the fault
// generator, so the same seed gives the same faults in both modes.
func TestQuirksDrawNoFaults(t *testing.T) {
	outcome := func(quirks bool) string {
		h := newHarness(t, Options{Quirks: quirks, ErrorRate: 0.3, Seed: 11})
		var b strings.Builder
		for i := 0; i < 40; i++ {
			path := "/v1/check/list?label=x"
			if i%3 == 0 {
				path = "/v1/check/list?limit=1"
			}
			fmt.Fprint(&b, h.get(path, keyA).status, " ")
		}
		return b.String()
	}
	if e, q := outcome(false), outcome(true); e != q {
		t.Errorf("faults differ between modes:\nexact  %s\nquirks %s", e, q)
	}
}
