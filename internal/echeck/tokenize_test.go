package echeck

import (
	"context"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/payment"
)

// TestTokenizeAccount: the domain's tokenization waits on the one rate
// limiter like every create, sends the spec's fields (§2.3), and keeps
// the token, the bank and the last four digits of the answer; a 400 is a
// refusal the row is rejected with.
func TestTokenizeAccount(t *testing.T) {
	srv, rec := fakeService(t, reply(200, `{"success":true,"tokenization":{"token":"0b7c2f5e-1111-2222-3333-444455556666",`+
		`"bank":"First Bank","routing":"021000021","last4":"6789","name":"Ada Lovelace"}}`))
	lim := &fakeLimiter{}
	svc := NewService(newTestClient(t, srv.URL, func(o *apiwire.Options) { o.Limiter = lim }))
	tok, err := svc.TokenizeAccount(context.Background(), payment.TokenRequest{FirstName: "Ada", LastName: "Lovelace",
		Email: "ada@example.com", Routing: "021000021", Account: "123456789", Store: "Acme Payroll"})
	if err != nil || tok.Token != "0b7c2f5e-1111-2222-3333-444455556666" || tok.Bank != "First Bank" || tok.Last4 != "6789" {
		t.Fatalf("%+v %v", tok, err)
	}
	if n := lim.waits.Load(); n != 1 {
		t.Fatalf("the limiter was waited on %d times, want 1", n)
	}
	sent := string(rec.all()[0].Body)
	for _, want := range []string{`"first_name":"Ada"`, `"last_name":"Lovelace"`, `"bank_account":"123456789"`,
		`"bank_routing":"021000021"`, `"store":"Acme Payroll"`} {
		if !strings.Contains(sent, want) {
			t.Errorf("request %s lacks %s", sent, want)
		}
	}

	srv, _ = fakeService(t, reply(400, `{"error":true,"message":"first_name: required"}`))
	_, err = NewService(newTestClient(t, srv.URL)).TokenizeAccount(context.Background(), payment.TokenRequest{Account: "123456789"})
	if payment.FailureOf(err) != payment.FailRefused || payment.ServiceMessage(err) != "first_name: required" {
		t.Fatalf("a refusal: %v (failure %d)", err, payment.FailureOf(err))
	}
}
