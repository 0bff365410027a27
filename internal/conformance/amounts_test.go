package conformance

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/sandbox"
)

// TestAmountRoundTrip: an amount comes back from create, get, list and edit
// as exactly the cents that were sent. The values include those a float
// would spoil: 0.29 and 0.30 (0.1+0.2), and amounts beyond 2^53 cents.
func TestAmountRoundTrip(t *testing.T) {
	e := newEnv(t, sandbox.Options{})
	c := e.client(keyA)
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
			// The wire text itself is exact, not a float rendering.
			r := e.raw(http.MethodGet, "/v1/check/"+ch.CheckID, keyA, nil)
			if got := fmt.Sprint(r.obj("check")["amount"]); mustWire(t, got) != want {
				t.Errorf("wire amount %s, want %s", got, want)
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
}

// mustWire reads an amount as the sandbox wrote it.
func mustWire(t *testing.T, s string) money.Cents {
	t.Helper()
	c, err := money.ParseWire(s)
	if err != nil {
		t.Fatalf("wire amount %q: %v", s, err)
	}
	return c
}
