package conformance

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/sandbox"
)

// TestAmountRoundTrip: an amount comes back from create, get, list and edit
// as exactly the cents that were sent. The values include those a float
// would spoil: 0.29 and 0.30 (0.1+0.2), and amounts beyond 2^53 cents. In
// quirks mode the sandbox writes amounts as float64 (19.99 is
// 19.990000000000002) and the client must still read the exact cents;
// beyond 2^53 cents a float64 cannot hold every cent, and the amount comes
// back a cent off, as from any service that keeps amounts in floats.
func TestAmountRoundTrip(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		c := e.client(keyA)
		artefacts := 0
		amounts := []string{
			"0.01", "0.10", "0.20", "0.29", "0.30", "0.57", "1.00", "1.10", "19.99", "100.01",
			"4.35", "1234.56", "100000.00", "1234567.89", "21474836.47", "21474836.48",
			"9999999999.99", "90071992547409.93",
		}
		for i, s := range amounts {
			t.Run(s, func(t *testing.T) {
				want := cents(t, s)
				label := fmt.Sprintf("amount-%02d", i)
				req := validRequest(label)
				req.Amount = want
				ch := create(t, c, req)
				if e.quirks && want > maxFloatCents {
					// The float64 nearest to 9007199254740993 cents is
					// 9007199254740992: create, get and list agree on the
					// neighbouring cent, and the client cannot tell.
					if d := ch.Amount - want; d != -1 || get(t, c, ch.CheckID).Amount != ch.Amount {
						t.Errorf("create answered %s for %s sent: want the float64's neighbouring cent", ch.Amount, want)
					}
					return
				}
				if ch.Amount != want {
					t.Errorf("create answered %s, sent %s", ch.Amount, want)
				}
				if got := get(t, c, ch.CheckID).Amount; got != want {
					t.Errorf("get answered %s, sent %s", got, want)
				}
				listed := listByLabel(t, c, label)
				if len(listed) != 1 || listed[0].Amount != want {
					t.Errorf("list answered %+v, want one check of %s", listed, want)
				}
				// In the exact mode the wire text itself is exact, not a
				// float rendering; in quirks mode it is a float64 whose
				// artefacts the client rounds away.
				r := e.raw(http.MethodGet, "/v1/check/"+ch.CheckID, keyA, nil)
				got := fmt.Sprint(r.obj("check")["amount"])
				switch {
				case !e.quirks && got != want.String():
					t.Errorf("wire amount %s, want exactly %s", got, want)
				case mustWire(t, got) != want:
					t.Errorf("wire amount %s reads as %s, want %s", got, mustWire(t, got), want)
				case e.quirks && len(got) > len(strings.TrimRight(strings.TrimRight(want.String(), "0"), ".")):
					artefacts++
				}
				edited := req
				edited.Number, edited.Amount = ch.Number, want+1
				ed, err := c.EditCheck(t.Context(), ch.CheckID, edited)
				if err != nil {
					t.Fatalf("EditCheck: %v", err)
				}
				if ed.Amount != want+1 || get(t, c, ch.CheckID).Amount != want+1 {
					t.Errorf("edit to %s answered %s", want+1, ed.Amount)
				}
			})
		}
		if e.quirks && artefacts < 3 {
			t.Errorf("quirks mode: %d amounts carried a float artefact on the wire, want several", artefacts)
		}
		t.Run("payment link", func(t *testing.T) {
			for _, s := range []string{"0.01", "0.29", "0.30", "1234567.89"} {
				want := cents(t, s)
				l, err := c.CreatePaymentLink(t.Context(), echeck.PaymentLinkRequest{Amount: want})
				if err != nil {
					t.Fatalf("CreatePaymentLink(%s): %v", s, err)
				}
				if l.Amount != want {
					t.Errorf("payment link answered %s, sent %s", l.Amount, want)
				}
			}
			p, err := c.ListPaymentLinks(t.Context(), echeck.ListParams{})
			if err != nil {
				t.Fatalf("ListPaymentLinks: %v", err)
			}
			var got []string
			for _, l := range p.Links {
				got = append(got, l.Amount.String())
			}
			slices.Sort(got)
			if fmt.Sprint(got) != "[0.01 0.29 0.30 1234567.89]" {
				t.Errorf("listed amounts %v", got)
			}
		})
	})
}

// maxFloatCents is 2^53: up to it a float64 holds every whole number of
// cents.
const maxFloatCents = 1 << 53

// mustWire reads an amount as the sandbox wrote it.
func mustWire(t *testing.T, s string) money.Cents {
	t.Helper()
	c, err := money.ParseWire(s)
	if err != nil {
		t.Fatalf("wire amount %q: %v", s, err)
	}
	return c
}
