package state

import (
	"bytes"
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

func TestMarkCodecRoundTrip(t *testing.T) {
	for _, m := range []payment.PayeeMark{
		{Payee: "0123456789abcdef0123456789abcdef", Account: payment.PayeeAccount{KeyID: "0123456789abcdef",
			Hash: "fedcba9876543210fedcba9876543210", Last4: "4567", Length: 10}},
		{Payee: "p", Account: payment.PayeeAccount{Hash: "h", Last4: "5678", Length: 17},
			Change: &payment.AccountChange{From: "4567", To: "5678", Action: "hold"}},
	} {
		raw := encodeMark(&m)
		got, err := decodeMark(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got.Payee != m.Payee || got.Account != m.Account || (m.Change == nil) != (got.Change == nil) ||
			(m.Change != nil && *m.Change != *got.Change) {
			t.Fatalf("round trip %+v -> %+v", m, got)
		}
		if m.Change == nil && len(raw) > 96 {
			t.Fatalf("a mark takes %d bytes", len(raw))
		}
	}
}

// FuzzDecodeMark: a damaged mark is an error, never a panic, and a mark
// that decodes encodes to the same bytes.
func FuzzDecodeMark(f *testing.F) {
	f.Add(encodeMark(&payment.PayeeMark{Payee: "p", Account: payment.PayeeAccount{KeyID: "k", Hash: "h", Last4: "4567", Length: 10}}))
	f.Add(encodeMark(&payment.PayeeMark{Payee: "p", Change: &payment.AccountChange{From: "1", To: "2", Action: "warn"}}))
	f.Add([]byte{})
	f.Add([]byte{markCodecV1, 0xff})
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := decodeMark(raw)
		if err != nil {
			return
		}
		if again := encodeMark(&m); !bytes.Equal(again, raw) && m.Account.Length < 1<<16 {
			// Lengths are masked to 16 bits and uvarints have one shortest
			// form: only a non-canonical input may differ.
			if m2, err := decodeMark(again); err != nil || m2.Payee != m.Payee || m2.Account != m.Account {
				t.Fatalf("re-encoded mark differs: %+v vs %+v (%v)", m, m2, err)
			}
		}
	})
}
