package state

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// fullRow sets every field of Row and Payment, so that a field the codec
// forgets shows up as a difference.
func fullRow() Row {
	at := time.Date(2026, 11, 20, 9, 30, 15, 123456789, time.UTC)
	return Row{
		Key: RowKey{7, 12}, State: Submitted,
		Payment: payment.Payment{
			Number: "1001", Amount: 123456, Memo: "Invoice 7", Name: "Ann García", Email: "ann@example.com",
			AuthorizationDate: "2026-11-20", Label: "payroll", Phone: "555-123-4567", Address: "1 Main St",
			City: "Austin", State: "TX", Zip: "73301", BankAccount: "1111000008", BankRouting: "999900001",
			Token: "tok", Store: "store", TypeInfo: "type", Recurring: true, RecurringCycle: "monthly",
			RecurringStartDate: "2026-12-01", RecurringInstallments: 6, VerifyBeforeSave: true,
			FundConfirmation: true, AccountLast4: "0008",
		},
		Label: "batchd-abc-7", Number: "1001", Attempts: 2, AttemptAt: at,
		CheckID: "0f8e3a2c-1111-2222-3333-444455556666", CheckStatus: "in_process",
		CheckCreated: at.Add(time.Second), StatusSeenAt: at.Add(2 * time.Second), DepositedSeenAt: at.Add(3 * time.Second),
		Risk: "Pass", FundConfirmation: "SufficientFunds", Error: "none",
		History: []Step{
			{At: at, State: Pending, Note: "ingested"},
			{At: at.Add(time.Second), State: Submitted, CheckStatus: "in_process", Note: "check created", Via: Create},
		},
	}
}

func TestRowCodecRoundTrip(t *testing.T) {
	for name, r := range map[string]Row{"full": fullRow(), "zero": {}} {
		t.Run(name, func(t *testing.T) {
			var got Row
			if err := decodeRowValue(encodeRow(nil, &r), &got); err != nil {
				t.Fatal(err)
			}
			got.Key = r.Key
			if r.History == nil {
				r.History = []Step{}
			}
			if !reflect.DeepEqual(got, r) {
				t.Fatalf("round trip\n got %+v\nwant %+v", got, r)
			}
		})
	}
}

// TestRowCodecReadsJSON: rows written before the binary layout still read.
func TestRowCodecReadsJSON(t *testing.T) {
	r := fullRow()
	raw, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	var got Row
	if err := decodeRowValue(raw, &got); err != nil {
		t.Fatal(err)
	}
	got.Key = r.Key
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("JSON row\n got %+v\nwant %+v", got, r)
	}
}

func TestRowCodecRefusesTruncated(t *testing.T) {
	r := fullRow()
	raw := encodeRow(nil, &r)
	for n := 0; n < len(raw); n++ {
		var got Row
		if err := decodeRowValue(raw[:n], &got); err == nil {
			t.Fatalf("%d of %d bytes decoded without error", n, len(raw))
		}
	}
}

func FuzzDecodeRowValue(f *testing.F) {
	r := fullRow()
	f.Add(encodeRow(nil, &r))
	f.Add([]byte{rowCodecV1})
	f.Add([]byte(`{"state":"pending"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var got Row
		if decodeRowValue(raw, &got) != nil || len(raw) == 0 || raw[0] != rowCodecV1 {
			return
		}
		// What decodes must encode back to the same row.
		var again Row
		if err := decodeRowValue(encodeRow(nil, &got), &again); err != nil || !reflect.DeepEqual(got, again) {
			t.Fatalf("re-encoding changed the row: %v", err)
		}
	})
}

// TestFullRowSetsEveryField keeps fullRow honest: a field added to Row or
// Payment but not to the codec would otherwise pass the round trip unset.
func TestFullRowSetsEveryField(t *testing.T) {
	r := fullRow()
	for _, v := range []reflect.Value{reflect.ValueOf(r), reflect.ValueOf(r.Payment)} {
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).IsZero() {
				t.Errorf("fullRow leaves %s.%s unset: set it, and add it to encodeRow and decodeRowValue",
					v.Type().Name(), v.Type().Field(i).Name)
			}
		}
	}
}
