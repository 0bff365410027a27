package conformance

import (
	"encoding/json"
	"strings"
	"time"
)

// wire is a check create or edit body as the service reads it: text as
// strings, amount as a json.Number, recurring fields as ints, flags as
// bools.
type wire map[string]any

// baseWire is a body every rule accepts.
func baseWire() wire {
	return wire{
		"amount": json.Number("12.34"), "memo": "conformance", "name": "Ada Lovelace",
		"email": "ada@example.com", "bank_routing": fixtureRouting, "bank_account": account(16),
	}
}

// vcase is one field rule at one value. field is "" when the body must be
// accepted; otherwise the 400 answer must name it (alternatives separated
// by "|"). clientRefuses marks input the typed client refuses without
// sending it. createOnly keeps a case off the edit runs, where the spec
// reads differently.
type vcase struct {
	name          string
	set           func(w wire, today time.Time)
	field         string
	clientRefuses bool
	createOnly    bool
}

func setTo(k string, v any) func(wire, time.Time) {
	return func(w wire, _ time.Time) { w[k] = v }
}

func unset(keys ...string) func(wire, time.Time) {
	return func(w wire, _ time.Time) {
		for _, k := range keys {
			delete(w, k)
		}
	}
}

func setAll(kv ...any) func(wire, time.Time) {
	return func(w wire, _ time.Time) {
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(w, kv[i].(string))
			} else {
				w[kv[i].(string)] = kv[i+1]
			}
		}
	}
}

// authDay sets authorization_date days after the sandbox's today.
func authDay(days int) func(wire, time.Time) {
	return func(w wire, today time.Time) {
		w["authorization_date"] = today.AddDate(0, 0, days).Format("2006-01-02")
	}
}

func rep(s string, n int) string { return strings.Repeat(s, n) }

// emailOf is a well-formed e-mail address of exactly n characters.
func emailOf(n int) string { return rep("e", n-len("@example.com")) + "@example.com" }

// withAddress adds a complete address, so that city, state and zip are
// tested where they are needed.
func withAddress(kv ...any) func(wire, time.Time) {
	return setAll(append([]any{"address", "1 Main St", "city", "Springfield", "state", "IL", "zip", "62701"}, kv...)...)
}

const someToken = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

// checkRules lists every field rule of spec 2.1, 4.1 and 8 at its
// boundaries.
func checkRules() []vcase {
	return []vcase{
		{"base", func(wire, time.Time) {}, "", false, false},

		{"memo 128", setTo("memo", rep("m", 128)), "", false, false},
		{"memo 128 multibyte", setTo("memo", rep("é", 128)), "", false, false},
		{"memo 129", setTo("memo", rep("m", 129)), "memo", false, false},
		{"memo missing", unset("memo"), "memo", false, false},

		{"name 80", setTo("name", rep("n", 80)), "", false, false},
		{"name 81", setTo("name", rep("n", 81)), "name", false, false},
		{"name missing", unset("name"), "name", false, false},

		{"email 80", setTo("email", emailOf(80)), "", false, false},
		{"email 81", setTo("email", emailOf(81)), "email", false, false},

		{"phone 20", setTo("phone", rep("5", 20)), "", false, false},
		{"phone 21", setTo("phone", rep("5", 21)), "phone", false, false},

		{"address 128", withAddress("address", rep("a", 128)), "", false, false},
		{"address 129", withAddress("address", rep("a", 129)), "address", false, false},
		{"city 40", withAddress("city", rep("c", 40)), "", false, false},
		{"city 41", withAddress("city", rep("c", 41)), "city", false, false},
		{"state 2", withAddress("state", "NY"), "", false, false},
		{"state 1", withAddress("state", "N"), "state", false, false},
		{"state 3", withAddress("state", "NYC"), "state", false, false},
		{"zip 5", withAddress("zip", "12345"), "", false, false},
		{"zip 10", withAddress("zip", "12345-6789"), "", false, false},
		{"zip 4", withAddress("zip", "1234"), "zip", false, false},
		{"zip 11", withAddress("zip", "12345-67890"), "zip", false, false},

		{"label 128", setTo("label", rep("l", 128)), "", false, false},
		{"label 129", setTo("label", rep("l", 129)), "label", false, false},
		{"type_info 128", setTo("type_info", rep("t", 128)), "", false, false},
		{"type_info 129", setTo("type_info", rep("t", 129)), "type_info", false, false},

		{"routing 9", setTo("bank_routing", fixtureRouting), "", false, false},
		{"routing 8", setTo("bank_routing", "99990000"), "bank_routing", false, false},
		{"routing 10", setTo("bank_routing", "9999000010"), "bank_routing", false, false},
		{"routing non-digits", setTo("bank_routing", "99990000a"), "bank_routing", false, false},
		{"routing with space", setTo("bank_routing", "9999 0001"), "bank_routing", false, false},

		{"account 4", setTo("bank_account", "1234"), "", false, false},
		{"account 17", setTo("bank_account", rep("1", 17)), "", false, false},
		{"account 3", setTo("bank_account", "123"), "bank_account", false, false},
		{"account 18", setTo("bank_account", rep("1", 18)), "bank_account", false, false},
		{"account non-digits", setTo("bank_account", "11110000x6"), "bank_account", false, false},
		{"account with dash", setTo("bank_account", "1111-000016"), "bank_account", false, false},

		{"number 1 digit", setTo("number", "7"), "", false, false},
		{"number 10 digits", setTo("number", "1234567890"), "", false, false},
		{"number 11 digits", setTo("number", "12345678901"), "number", false, false},
		{"number non-digits", setTo("number", "12a"), "number", false, false},

		{"authorization_date today", authDay(0), "", false, false},
		{"authorization_date 30 days old", authDay(-30), "", false, false},
		{"authorization_date 31 days old", authDay(-31), "authorization_date", false, false},
		{"authorization_date tomorrow", authDay(1), "authorization_date", false, false},
		{"authorization_date not a date", setTo("authorization_date", "04/03/2026"), "authorization_date", false, false},
		{"authorization_date impossible", setTo("authorization_date", "2026-02-30"), "authorization_date", false, false},

		{"amount 0.01", setTo("amount", json.Number("0.01")), "", false, false},
		{"amount 0", setTo("amount", json.Number("0")), "amount", true, false},
		{"amount 0.00", setTo("amount", json.Number("0.00")), "amount", true, false},
		{"amount negative", setTo("amount", json.Number("-5.00")), "amount", true, false},
		{"amount missing", unset("amount"), "amount", true, false}, // the client has no "absent": it refuses 0
		{"amount not a number", setTo("amount", "twelve"), "amount", false, false},

		// Email or address (spec 2.1): one of them is required, and an
		// address needs city, state and zip.
		// On edit the spec calls email just "optional" (4.1), without the
		// address alternative, so this case is asserted on create only.
		{"neither email nor address", unset("email"), "email|address", false, true},
		{"address without email", setAll("email", nil, "address", "1 Main St", "city", "Springfield", "state", "IL", "zip", "62701"), "", false, false},
		{"address without city", withAddress("city", nil), "city", false, false},
		{"address without state", withAddress("state", nil), "state", false, false},
		{"address without zip", withAddress("zip", nil), "zip", false, false},

		// Rules 1 and 2 of spec 2.1. A well-formed but unknown token is
		// enough: the pairing rules come before the token is looked up.
		{"both pairs", setAll("token", someToken, "store", "shop"), "token|store|bank_routing|bank_account", false, false},
		{"neither pair", unset("bank_routing", "bank_account"), "bank_routing|bank_account|token|store", false, false},
		{"routing without account", unset("bank_account"), "bank_account|bank_routing", false, false},
		{"account without routing", unset("bank_routing"), "bank_routing|bank_account", false, false},
		{"token without store", setAll("bank_routing", nil, "bank_account", nil, "token", someToken), "store|token", false, false},
		{"store without token", setAll("bank_routing", nil, "bank_account", nil, "store", "shop"), "token|store", false, false},
		{"token with routing only", setAll("bank_account", nil, "token", someToken, "store", "shop"), "token|store|bank_routing|bank_account", false, false},
		{"token 35 characters", setAll("bank_routing", nil, "bank_account", nil, "token", someToken[1:], "store", "shop"), "token", false, false},

		// Recurring enums (spec 2.1).
		{"recurring 0", setTo("recurring", 0), "", false, false},
		{"recurring 1 monthly", setAll("recurring", 1, "recurring_cycle", "month"), "", false, false},
		{"recurring 2", setTo("recurring", 2), "recurring", false, false},
		{"cycle day", setAll("recurring", 1, "recurring_cycle", "day"), "", false, false},
		{"cycle week", setAll("recurring", 1, "recurring_cycle", "week"), "", false, false},
		{"cycle bi-weekly", setAll("recurring", 1, "recurring_cycle", "bi-weekly"), "", false, false},
		{"cycle year", setAll("recurring", 1, "recurring_cycle", "year"), "recurring_cycle", false, false},
		{"cycle biweekly", setAll("recurring", 1, "recurring_cycle", "biweekly"), "recurring_cycle", false, false},
		{"installments 0", setAll("recurring", 1, "recurring_cycle", "week", "recurring_installments", 0), "", false, false},
		{"installments 12", setAll("recurring", 1, "recurring_cycle", "week", "recurring_installments", 12), "", false, false},
		{"installments -1", setAll("recurring", 1, "recurring_cycle", "week", "recurring_installments", -1), "recurring_installments", false, false},
		{"start date", setAll("recurring", 1, "recurring_cycle", "week", "recurring_start_date", "2026-04-01"), "", false, false},
		{"start date NULL", setAll("recurring", 1, "recurring_cycle", "week", "recurring_start_date", "NULL"), "", false, false},
		{"start date not a date", setAll("recurring", 1, "recurring_cycle", "week", "recurring_start_date", "04/01/2026"), "recurring_start_date", false, false},

		{"verify_before_save not boolean", setTo("verify_before_save", "maybe"), "verify_before_save", false, false},
	}
}
