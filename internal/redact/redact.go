// Package redact hides bank data and secrets before they reach a log line,
// a report, an error message or a metric label.
package redact

import (
	"strconv"
	"strings"

	"github.com/batchd/batchd/internal/payment"
)

// Account masks a bank account number for display: "****6789". At most
// four trailing digits are shown, and never more than half of the number,
// so a short account number is never shown whole. The mask has a fixed
// width so that it does not reveal the number's length.
func Account(acct string) string {
	acct = strings.TrimSpace(acct)
	show := len(acct) / 2
	if show > 4 {
		show = 4
	}
	return "****" + acct[len(acct)-show:]
}

// PaymentAccount is a payment's account as every report shows it: masked
// from the full number while the row still holds it, else from the
// trailing digits the ledger kept once the row was final; "" for a
// payment by token.
func PaymentAccount(p *payment.Payment) string {
	switch {
	case p.BankAccount != "":
		return Account(p.BankAccount)
	case p.AccountLast4 != "":
		return "****" + p.AccountLast4
	}
	return ""
}

// Last4 returns the digits of an account number that batchd may keep after
// a row is final: the same trailing digits that Account shows.
func Last4(acct string) string {
	m := Account(acct)
	return m[4:]
}

// Secret describes a secret without revealing it: its well-known prefix
// (such as "sk_test_") and its length. Use it where an operator needs to
// tell two keys apart in a log line.
func Secret(s string) string {
	prefix := ""
	for _, p := range []string{"sk_test_", "sk_live_"} {
		if strings.HasPrefix(s, p) {
			prefix = p
		}
	}
	return prefix + "…(" + strconv.Itoa(len(s)) + " chars)"
}
