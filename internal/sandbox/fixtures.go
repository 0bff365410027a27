package sandbox

// FixtureRouting is the sandbox's one test routing number. Together with the
// accounts 1111000001 to 1111000022 it reproduces the fixture table of the
// specification; any other bank data is a risk Fail.
const FixtureRouting = "999900001"

// testAccountPrefix followed by the ordinal as two digits is a test account.
const testAccountPrefix = "11110000"

// Risk results of basic verification.
const (
	riskPass  = "Pass"
	riskFail  = "Fail"
	riskRisky = "Risky"
)

// verdict is what the sandbox's verification services say about one bank
// account: the basic verification (risk) and the fund confirmation.
type verdict struct {
	Risk     string // Pass, Fail or Risky
	Code     string // basic verification code, as code_bv
	Desc     string // description_bv
	Funds    string // fund confirmation value, as verification_fc
	FundDesc string // description_fc
}

// fixtures is the specification's table, row n at index n-1. The codes and
// descriptions follow the account-verification codes that the table's
// conditions describe (RTxx risk codes, GSxx invalid data, and so on). It is
// read only.
var fixtures = [22]verdict{
	{riskRisky, "GN01", "Negative information was found in this account's history", "InsufficientFunds", ""},
	{riskFail, "GN05", "The routing number is reported as not currently assigned to a financial institution", "NonParticipatingBank", ""},
	{riskRisky, "GP01", "The account was found on your private bad checks list", "AccountClosed", ""},
	{riskFail, "GS01", "Invalid routing number", "NonParticipatingBank", ""},
	{riskFail, "GS02", "Invalid account number", "InvalidAccountNumber", ""},
	{riskRisky, "GS03", "Invalid check number", "Null", ""},
	{riskFail, "GS04", "Invalid check amount", "Null", ""},
	{riskPass, "ND00", "No positive or negative information has been reported on the account", "Null", ""},
	{riskFail, "ND01", "This routing number can only be valid for US Government financial institutions", "NonParticipatingBank", ""},
	{riskPass, "RT00", "The routing number belongs to a participating bank, but the account was not located", "SufficientFunds", ""},
	{riskRisky, "RT01", "This account should be declined based on the risk factor being reported", "InsufficientFunds", ""},
	{riskFail, "RT02", "This item should be declined based on the risk factor being reported", "InsufficientFunds", ""},
	{riskRisky, "RT03", "Current negative data exists on this account", "InsufficientFunds", ""},
	{riskFail, "RT04", "Non-demand deposit account", "InsufficientFunds", ""},
	{riskRisky, "RT05", "Recent negative data exists on this account", "InsufficientFunds", ""},
	{riskPass, "1111", "The account was found to be an open and valid checking or savings account", "SufficientFunds", ""},
	{riskFail, "2222", "The account is a travelers cheque account of a card issuer", "NonParticipatingBank", ""},
	{riskPass, "3333", "A non-participant provider reports positive data on this account", "SufficientFunds", ""},
	{riskFail, "5555", "The savings account was found to be open and valid", "NonParticipatingBank", ""},
	{riskPass, "7777", "The account has positive historical data", "SufficientFunds", ""},
	{riskFail, "8888", "The savings account has positive historical data", "NonParticipatingBank", ""},
	{riskPass, "9999", "Positive historical data has been reported on this account", "SufficientFunds", ""},
}

// fundDescription explains each fund confirmation value.
func fundDescription(v string) string {
	switch v {
	case "InsufficientFunds":
		return "The account does not hold enough funds for this check"
	case "NonParticipatingBank":
		return "The bank does not take part in fund confirmation"
	case "AccountClosed":
		return "The account is closed"
	case "InvalidAccountNumber":
		return "The account number is not valid"
	case "SufficientFunds":
		return "The account holds enough funds for this check"
	}
	return "No fund confirmation result is available"
}

// lookupVerdict returns the verification results for routing and account.
// Data outside the fixtures fails basic verification; its fund confirmation
// is NonParticipatingBank for an unknown routing number and
// InvalidAccountNumber for an unknown account at the test bank.
func lookupVerdict(routing, account string) verdict {
	if routing != FixtureRouting {
		return verdict{riskFail, "GS01", "Routing number is not sandbox test data", "NonParticipatingBank", fundDescription("NonParticipatingBank")}
	}
	if n, ok := fixtureOrdinal(account); ok {
		v := fixtures[n-1]
		v.FundDesc = fundDescription(v.Funds)
		return v
	}
	return verdict{riskFail, "GS02", "Account number is not sandbox test data", "InvalidAccountNumber", fundDescription("InvalidAccountNumber")}
}

// fixtureOrdinal returns n for the test account "11110000nn", 1 ≤ n ≤ 22.
func fixtureOrdinal(account string) (int, bool) {
	if len(account) != len(testAccountPrefix)+2 || account[:len(testAccountPrefix)] != testAccountPrefix {
		return 0, false
	}
	d1, d2 := account[8], account[9]
	if d1 < '0' || d1 > '9' || d2 < '0' || d2 > '9' {
		return 0, false
	}
	n := int(d1-'0')*10 + int(d2-'0')
	if n < 1 || n > len(fixtures) {
		return 0, false
	}
	return n, true
}

// bank describes the institution behind a routing number.
type bank struct {
	Routing string `json:"bank_routing"`
	Name    string `json:"bank_name"`
	Address string `json:"bank_address"`
	City    string `json:"bank_city"`
	State   string `json:"bank_state"`
	Zip     string `json:"bank_zip"`
}

// UnknownRouting passes the ABA checksum but is a number the sandbox's
// bank directory knows no bank for (404 from bankinfo): the number to
// rehearse a payee's mistyped routing number with. An assumption of the
// emulator: the spec does not show bankinfo's answers.
const UnknownRouting = "091999900"

// lookupBank returns the bank for a routing number. The sandbox knows the
// test routing number (its fixture bank) and every other number that
// passes the ABA checksum, under a made-up name, but UnknownRouting; a
// number that fails the checksum names no bank.
func lookupBank(routing string) (bank, bool) {
	switch {
	case routing == FixtureRouting:
		return bank{Routing: FixtureRouting, Name: "Sandbox Test Bank", Address: "1 Fixture Way", City: "Testville", State: "NY", Zip: "10001"}, true
	case routing == UnknownRouting || !abaChecksum(routing):
		return bank{Routing: routing}, false
	}
	return bank{Routing: routing, Name: "Sandbox Bank " + routing[:4], Address: "1 Sandbox Way", City: "Testville", State: "NY", Zip: "10001"}, true
}

// abaChecksum reports whether routing is 9 digits whose weighted sum
// (3, 7, 1, repeated) is a multiple of ten.
func abaChecksum(routing string) bool {
	if len(routing) != 9 {
		return false
	}
	sum := 0
	for i, c := range routing {
		if c < '0' || c > '9' {
			return false
		}
		sum += int(c-'0') * [3]int{3, 7, 1}[i%3]
	}
	return sum%10 == 0
}
