// Package redact hides bank data and secrets before they reach a log line,
// a report, an error message or a metric label.
package redact

import (
	"strconv"
	"strings"
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
