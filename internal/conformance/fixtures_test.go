package conformance

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/sandbox"
)

// fixtureTable is the table of spec section 2.8, copied from the spec and
// not from the sandbox: ordinal, Risk, fund confirmation.
var fixtureTable = []struct {
	n           int
	risk, funds string
}{
	{1, "Risky", "InsufficientFunds"},
	{2, "Fail", "NonParticipatingBank"},
	{3, "Risky", "AccountClosed"},
	{4, "Fail", "NonParticipatingBank"},
	{5, "Fail", "InvalidAccountNumber"},
	{6, "Risky", "Null"},
	{7, "Fail", "Null"},
	{8, "Pass", "Null"},
	{9, "Fail", "NonParticipatingBank"},
	{10, "Pass", "SufficientFunds"},
	{11, "Risky", "InsufficientFunds"},
	{12, "Fail", "InsufficientFunds"},
	{13, "Risky", "InsufficientFunds"},
	{14, "Fail", "InsufficientFunds"},
	{15, "Risky", "InsufficientFunds"},
	{16, "Pass", "SufficientFunds"},
	{17, "Fail", "NonParticipatingBank"},
	{18, "Pass", "SufficientFunds"},
	{19, "Fail", "NonParticipatingBank"},
	{20, "Pass", "SufficientFunds"},
	{21, "Fail", "NonParticipatingBank"},
	{22, "Pass", "SufficientFunds"},
}

// fundValues are the fund confirmation values of spec 2.8.
var fundValues = []string{"InsufficientFunds", "NonParticipatingBank", "AccountClosed", "InvalidAccountNumber", "SufficientFunds", "Null"}

// TestFixtureTable creates a check on every fixture account three ways
// (verification only, fund confirmation only, both) and checks the results
// against spec 2.8, in the create answer and again on a later get. The
// check is created in_process whatever the result.
func TestFixtureTable(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		c := e.client(keyA)
		if len(fixtureTable) != 22 {
			t.Fatalf("fixture table has %d rows, want 22", len(fixtureTable))
		}
		for _, row := range fixtureTable {
			t.Run(fmt.Sprintf("%02d_%s_%s", row.n, row.risk, row.funds), func(t *testing.T) {
				for _, mode := range []struct {
					name         string
					verify, fund bool
				}{{"verify", true, false}, {"fund", false, true}, {"both", true, true}} {
					req := validRequest(fmt.Sprintf("fixture-%02d-%s", row.n, mode.name))
					req.BankAccount = account(row.n)
					req.VerifyBeforeSave, req.FundConfirmation = mode.verify, mode.fund
					ch := create(t, c, req)
					checkVerdict(t, mode.name+" create", ch, mode.verify, mode.fund, row.risk, row.funds)
					checkVerdict(t, mode.name+" get", get(t, c, ch.CheckID), mode.verify, mode.fund, row.risk, row.funds)
				}
			})
		}
	})
}

// checkVerdict asserts the verification objects of ch. An empty funds
// accepts any value of the spec's list.
func checkVerdict(t *testing.T, what string, ch *echeck.Check, verify, fund bool, risk, funds string) {
	t.Helper()
	if ch.Status != "in_process" {
		t.Errorf("%s: status %q, want in_process", what, ch.Status)
	}
	switch bv := ch.BasicVerification; {
	case !verify && bv != nil:
		t.Errorf("%s: basic_verification %+v present although not asked for", what, *bv)
	case verify && bv == nil:
		t.Errorf("%s: no basic_verification although verify_before_save was asked", what)
	case verify && bv.Risk != risk:
		t.Errorf("%s: risk %q, want %q", what, bv.Risk, risk)
	}
	switch fc := ch.FundsConfirmation; {
	case !fund && fc != nil:
		t.Errorf("%s: funds_confirmation %+v present although not asked for", what, *fc)
	case fund && fc == nil:
		t.Errorf("%s: no funds_confirmation although fund_confirmation was asked", what)
	case fund && funds != "" && fc.Verification != funds:
		t.Errorf("%s: fund confirmation %q, want %q", what, fc.Verification, funds)
	case fund && !slices.Contains(fundValues, fc.Verification):
		t.Errorf("%s: fund confirmation %q is not a value of spec 2.8", what, fc.Verification)
	}
}

// TestNonFixtureDataFails: any bank data outside the fixtures gives risk
// Fail (spec 2.8), and the check is still created. Whatever the account's
// length, the client never shows more than four of its digits, nor more
// than half of them, although the quirks mode's mask (first digit, dots,
// last three) shows a 4-digit account whole.
func TestNonFixtureDataFails(t *testing.T) {
	eachMode(t, func(t *testing.T, m mode) {
		e := newEnv(t, m, sandbox.Options{})
		c := e.client(keyA)
		cases := []struct{ name, routing, account string }{
			{"other routing, fixture account", "021000021", account(16)},
			{"routing one off", "999900002", account(16)},
			{"ordinal 0", fixtureRouting, account(0)},
			{"ordinal 23", fixtureRouting, account(23)},
			{"ordinal 99", fixtureRouting, account(99)},
			{"leading zero", fixtureRouting, "0" + account(16)},
			{"trailing digit", fixtureRouting, account(16) + "0"},
			{"other prefix", fixtureRouting, "2111000016"},
			{"short account", fixtureRouting, "1234"},
			{"long account", fixtureRouting, "12345678901234567"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				req := validRequest("nonfixture")
				req.BankRouting, req.BankAccount = tc.routing, tc.account
				req.VerifyBeforeSave, req.FundConfirmation = true, true
				ch := create(t, c, req)
				checkVerdict(t, "create", ch, true, true, "Fail", "")
				checkVerdict(t, "get", get(t, c, ch.CheckID), true, true, "Fail", "")
				shown := 0
				for _, r := range ch.BankAccount {
					if r >= '0' && r <= '9' {
						shown++
					}
				}
				last := tc.account[len(tc.account)-1:]
				if shown > 4 || 2*shown > len(tc.account) || !strings.HasSuffix(ch.BankAccount, last) {
					t.Errorf("account of %d digits shown as %q", len(tc.account), ch.BankAccount)
				}
			})
		}
	})
}
