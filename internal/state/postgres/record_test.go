package postgres

import (
	"encoding/hex"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/batchd/batchd/internal/state/kv"
)

// The hand-written row encoding (record, jsonArray) says what
// encoding/json says of the same values: the server reads the same
// columns either way.
func TestRecordIsWhatEncodingJSONWrites(t *testing.T) {
	cols := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	tb := &table{Table: kv.Table{Name: "t", Columns: cols}}
	cases := [][]any{
		{nil, "plain", true, int(-7), int64(1 << 40), uint32(12), uint64(1<<64 - 1), "2026-11-28T14:00:00.123Z"},
		{`quote " and \ back`, "tab\there", "line\nbreak", "\x00nul", "café ☕", "bad \xff utf-8", "<html>&", false},
		{struct{ X int }{3}, 1.5, []int{1, 2}, int16(-3), "", nil, nil, "x"},
	}
	var rows []json.RawMessage
	for i, vals := range cases {
		key := []byte{0, byte(i), 0xff}
		got, err := tb.record(key, vals)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		want := map[string]any{"kv_key": `\x` + hex.EncodeToString(key)}
		for j, c := range cols {
			want[c] = vals[j]
		}
		wantRaw, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, got, wantRaw)
		rows = append(rows, got)
	}
	wantArr, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, []byte(jsonArray(rows)), wantArr)
	if got := jsonArray(nil); got != "[]" {
		t.Errorf("jsonArray(nil) = %s, want []", got)
	}
	if _, err := tb.record(nil, []any{1}); err == nil {
		t.Error("a row of 1 column for a table of 8 was encoded")
	}
	if _, err := tb.record(nil, []any{nil, nil, nil, nil, nil, nil, nil, func() {}}); err == nil {
		t.Error("a value encoding/json refuses was encoded")
	}
}

func sameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("not JSON: %v: %s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
