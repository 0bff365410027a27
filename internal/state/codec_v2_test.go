package state

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state/kv"
)

// typicalRow is a sample file's row once submitted: what most of a
// ledger holds.
func typicalRow() payment.Row {
	at := time.Date(2026, 11, 20, 9, 30, 15, 123000000, time.UTC)
	return payment.Row{
		Key: payment.RowKey{Batch: 3, Line: 2}, State: payment.Submitted,
		Payment: payment.Payment{Number: "100234", Amount: 1999, Memo: "Invoice 1234", Name: "Ann García",
			Email: "garcia12@example.com", Label: "sample", BankRouting: "999900001", AccountLast4: "0008"},
		Label: "sample", Number: "100234", Attempts: 1, AttemptAt: at.Add(2*time.Second + 345678901),
		CheckID: "0f8e3a2c-1111-2222-3333-444455556666", CheckStatus: payment.StatusInProcess,
		CheckCreated: at.Add(3 * time.Second).Truncate(time.Second), StatusSeenAt: at.Add(3*time.Second + 987654321),
		Risk: "Pass",
		History: []payment.Step{
			{At: at, State: payment.Pending, Note: "ingested"},
			{At: at.Add(2 * time.Second), State: payment.InFlight, Via: payment.Send},
			{At: at.Add(3 * time.Second), State: payment.Submitted, CheckStatus: payment.StatusInProcess, Via: payment.Create},
		},
	}
}

// TestRowCodecV2Layout pins the bytes of rowCodecV2, as
// TestRowCodecV1Layout does those of rowCodecV1: ledgers hold rows written
// in it, so a change must come as a new version. The rows without HeardAt
// are the bytes written before HeardAt was added (flag bit 2): they must
// not change, and must read back with a zero HeardAt.
func TestRowCodecV2Layout(t *testing.T) {
	heard := typicalRow()
	heard.HeardAt = heard.StatusSeenAt.Add(90 * time.Second)
	heardOnly := fullRow()
	heardOnly.SendBy = time.Time{}
	for name, c := range map[string]struct {
		row payment.Row
		hex string
	}{
		"full, heard": {heardOnly, "020604ffff7f043130303180890f09496e766f69636520370b416e6e2047617263c3ad610f616e6e406578616d706c65" +
			"2e636f6d0a323032362d31312d323007706179726f6c6c0c3535352d3132332d343536370931204d61696e2053740641" +
			"757374696e0254580537333330310a313131313030303030380939393939303030303103746f6b0573746f7265047479" +
			"7065076d6f6e74686c790a323032362d31322d303104303030380c070c6261746368642d6162632d37028110cf86ad89" +
			"fed001d5f01b94310d636865636b2063726561746564a31fd5f01b0403d5f01ba31fd5f01bc33ed5f01be35dd5f01b24" +
			"30663865336132632d313131312d323232322d333333332d3434343435353535363636360104506173730f5375666669" +
			"6369656e7446756e6473046e6f6e65837dd5f01b"},
		"full, heard, send by": {fullRow(), "020e04ffff7f043130303180890f09496e766f69636520370b416e6e2047617263c3ad610f616e6e406578616d706c65" +
			"2e636f6d0a323032362d31312d323007706179726f6c6c0c3535352d3132332d343536370931204d61696e2053740641" +
			"757374696e0254580537333330310a313131313030303030380939393939303030303103746f6b0573746f7265047479" +
			"7065076d6f6e74686c790a323032362d31322d303104303030380c070c6261746368642d6162632d37028110cf86ad89" +
			"fed001d5f01b94310d636865636b2063726561746564a31fd5f01b0403d5f01ba31fd5f01bc33ed5f01be35dd5f01b24" +
			"30663865336132632d313131312d323232322d333333332d3434343435353535363636360104506173730f5375666669" +
			"6369656e7446756e6473046e6f6e65837dd5f01b" + "a39c01d5f01b"},
		"typical, heard": {heard, "020704dfc020063130303233349e1f0c496e766f69636520313233340b416e6e2047617263c3ad611467617263696131" +
			"32406578616d706c652e636f6d0673616d706c6509393939393030303031043030303800038110ce86ad89fed0010ac2" +
			"3e9401a21f02a749f5b729f659cf7cf1f727002430663865336132632d313131312d323232322d333333332d34343434" +
			"35353535363636360104506173730000" + "8ff916f1f727"},
		"full": {unheard(fullRow()), "020204ffff7f043130303180890f09496e766f69636520370b416e6e2047617263c3ad610f616e6e406578616d706c65" +
			"2e636f6d0a323032362d31312d323007706179726f6c6c0c3535352d3132332d343536370931204d61696e2053740641" +
			"757374696e0254580537333330310a313131313030303030380939393939303030303103746f6b0573746f7265047479" +
			"7065076d6f6e74686c790a323032362d31322d303104303030380c070c6261746368642d6162632d37028110cf86ad89" +
			"fed001d5f01b94310d636865636b2063726561746564a31fd5f01b0403d5f01ba31fd5f01bc33ed5f01be35dd5f01b24" +
			"30663865336132632d313131312d323232322d333333332d3434343435353535363636360104506173730f5375666669" +
			"6369656e7446756e6473046e6f6e65"},
		"typical": {typicalRow(), "020304dfc020063130303233349e1f0c496e766f69636520313233340b416e6e2047617263c3ad611467617263696131" +
			"32406578616d706c652e636f6d0673616d706c6509393939393030303031043030303800038110ce86ad89fed0010ac2" +
			"3e9401a21f02a749f5b729f659cf7cf1f727002430663865336132632d313131312d323232322d333333332d34343434" +
			"35353535363636360104506173730000"},
	} {
		t.Run(name, func(t *testing.T) {
			got := encodeRow(nil, &c.row)
			if got[0] != rowCodecV2 {
				t.Fatalf("encodeRow writes layout %#x, want rowCodecV2", got[0])
			}
			want, err := hex.DecodeString(c.hex)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encodeRow\n got %x\nwant %x", got, want)
			}
			var back payment.Row
			if err := decodeRowValue(want, &back); err != nil {
				t.Fatal(err)
			}
			back.Key = c.row.Key
			if !reflect.DeepEqual(back, c.row) {
				t.Errorf("decodeRowValue\n got %+v\nwant %+v", back, c.row)
			}
		})
	}
}

// TestRowCodecV2Smaller: the point of rowCodecV2.
func TestRowCodecV2Smaller(t *testing.T) {
	r := typicalRow()
	v1, v2 := len(encodeRowV1(nil, &r)), len(encodeRow(nil, &r))
	t.Logf("typical submitted row: v1 %d bytes, v2 %d bytes", v1, v2)
	if v2*10 > v1*6 {
		t.Errorf("v2 takes %d bytes, v1 %d: want at most 60%%", v2, v1)
	}
}

// TestRowCodecV2Words: words outside the code tables, and every word in
// them, round-trip.
func TestRowCodecV2Words(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := payment.Row{State: "archived", CheckStatus: "on_hold", Label: "L", Number: "7",
		Payment: payment.Payment{Label: "other", Number: "8"}}
	for i, w := range []struct{ state, via, status, note string }{
		{"weird", "teleport", "on_hold", "a note"},
		{"", "", "", ""},
		{"pending", "send", "in_process", "ingested"},
	} {
		r.History = append(r.History, payment.Step{At: at.Add(time.Duration(i) * time.Hour), State: payment.RowState(w.state),
			Via: payment.Transition(w.via), CheckStatus: payment.Status(w.status), Note: w.note})
	}
	for _, s := range rowStateCodes {
		r.History = append(r.History, payment.Step{At: at, State: payment.RowState(s)})
	}
	for _, s := range transitionCodes {
		r.History = append(r.History, payment.Step{At: at, Via: payment.Transition(s)})
	}
	for _, s := range statusCodes {
		r.History = append(r.History, payment.Step{At: at, CheckStatus: payment.Status(s)})
	}
	roundTrip(t, r)
}

// TestRowCodecV2Times: the zero time, times before 1970 and before the
// first step, nanoseconds, and times too far out for milliseconds.
func TestRowCodecV2Times(t *testing.T) {
	base := time.Date(2026, 11, 20, 9, 30, 15, 0, time.UTC)
	for _, tm := range []time.Time{
		{}, base, base.Add(time.Nanosecond), base.Add(999999 * time.Nanosecond), base.Add(time.Millisecond),
		base.Add(-400 * 24 * time.Hour), time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(1600, 2, 29, 12, 0, 0, 500, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Unix(1<<41, 5).UTC(), time.Unix(-(1 << 41), 5).UTC(),
	} {
		for _, first := range []time.Time{base, tm, {}} {
			r := payment.Row{AttemptAt: tm, CheckCreated: tm, StatusSeenAt: tm, DepositedSeenAt: tm, HeardAt: tm}
			if !first.IsZero() {
				r.History = []payment.Step{{At: first}, {At: tm}, {At: base}}
			}
			roundTrip(t, r)
		}
	}
}

// TestRowCodecReadsEveryLayout: a row written by an earlier build, in
// JSON or rowCodecV1, reads as the same row, and the ledger rewrites it
// in rowCodecV2 at its next change.
func TestRowCodecReadsEveryLayout(t *testing.T) {
	d := open(t, t.TempDir())
	b := load(t, d, "old.csv", 2)
	k := payment.RowKey{Batch: b.ID, Line: 2}
	r, err := d.Row(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.update(func(tx kv.Tx) error { return tx.Bucket(bucketRows).Put(keyBytes(k), encodeRowV1(nil, r)) }); err != nil {
		t.Fatal(err)
	}
	again, err := d.Row(k)
	if err != nil || !reflect.DeepEqual(again, r) {
		t.Fatalf("v1 row read back as %+v (%v), want %+v", again, err, r)
	}
	if _, err := d.Send(k); err != nil {
		t.Fatal(err)
	}
	if err := d.view(func(tx kv.Tx) error {
		if raw := tx.Bucket(bucketRows).Get(keyBytes(k)); raw[0] != rowCodecV2 {
			t.Errorf("row rewritten in layout %#x, want rowCodecV2", raw[0])
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestRowCodecV2RefusesDamage(t *testing.T) {
	r := fullRow()
	raw := encodeRow(nil, &r)
	for n := 1; n < len(raw); n++ {
		var got payment.Row
		if err := decodeRowValue(raw[:n], &got); err == nil {
			t.Fatalf("%d of %d bytes decoded without error", n, len(raw))
		}
	}
	for _, bad := range [][]byte{
		{rowCodecV2, 8},                   // an unknown row flag
		{rowCodecV2, 0, 6},                // a state code beyond the table
		{rowCodecV2, 3, 1, 0x80, 0x80, 1}, // an unknown payment field
	} {
		var got payment.Row
		if err := decodeRowValue(bad, &got); err == nil {
			t.Errorf("%x decoded without error", bad)
		}
	}
}

// TestRowCodecV2HeardFlagNeedsATime: a row flagged as heard must hold the
// time, so that every row has one encoding.
func TestRowCodecV2HeardFlagNeedsATime(t *testing.T) {
	r := typicalRow()
	raw := encodeRow(nil, &r)
	raw[1] |= rowFlagHeard
	var got payment.Row
	if err := decodeRowValue(append(raw, 0), &got); err == nil {
		t.Fatal("a heard flag with the zero time decoded without error")
	}
	if err := decodeRowValue(raw, &got); err == nil {
		t.Fatal("a heard flag without its time decoded without error")
	}
}

func roundTrip(t *testing.T, r payment.Row) {
	t.Helper()
	var got payment.Row
	if err := decodeRowValue(encodeRow(nil, &r), &got); err != nil {
		t.Fatal(err)
	}
	got.Key = r.Key
	if r.History == nil {
		r.History = []payment.Step{}
	}
	if !reflect.DeepEqual(got, r) {
		var b strings.Builder
		for i := range r.History {
			if i < len(got.History) && !reflect.DeepEqual(got.History[i], r.History[i]) {
				b.WriteString("\n step " + r.History[i].At.String() + " came back " + got.History[i].At.String())
			}
		}
		t.Fatalf("round trip\n got %+v\nwant %+v%s", got, r, b.String())
	}
}

// TestRowCodecV2Names pins the account holder's names (flag bit 4, after
// everything else): a row that has them ends with them, one that has
// none is written byte for byte as before they came (the layouts above),
// and both read back.
func TestRowCodecV2Names(t *testing.T) {
	plain := fullRow()
	named := fullRow()
	named.Payment.FirstName, named.Payment.LastName = "Ada", "Lovelace"
	want := append([]byte{rowCodecV2, 0x1e}, encodeRow(nil, &plain)[2:]...)
	want = append(want, "\x03Ada\x08Lovelace"...)
	got := encodeRow(nil, &named)
	if !bytes.Equal(got, want) {
		t.Fatalf("encoded\n%x\nwant\n%x", got, want)
	}
	var back payment.Row
	if err := decodeRowValue(got, &back); err != nil {
		t.Fatal(err)
	}
	back.Key = named.Key
	if !reflect.DeepEqual(back, named) {
		t.Fatalf("read back %+v\nwant %+v", back.Payment, named.Payment)
	}
}
