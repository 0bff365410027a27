package csvfile

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/batchd/batchd/internal/money"
)

// SandboxRouting is the routing number of the sandbox fixtures (spec 2.8). It
// fails the ABA checksum, so Parse accepts it only in test mode.
const SandboxRouting = "999900001"

// maxAuthorizationAge is how many days before the run date an
// authorization_date may lie (spec 2.1 and 8).
const maxAuthorizationAge = 30

const dateLayout = "2006-01-02"

// cellRule is what one column demands of a non-empty cell. Whether a cell
// may be empty is decided by the cross-column checks.
type cellRule struct {
	min, max  int  // length in characters (runes); 0 = no bound
	multiline bool // line breaks and tabs allowed
	check     func(v *validator, s string) string
	// norm turns a valid cell into the value stored; nil keeps it.
	norm func(string) string
}

// cellRules is indexed by column (the position in payment.Fields). A
// cell's value is read by its field's kind (see validator.payment), so a
// column whose kind is not text needs a check that the value reads.
var cellRules = rulesByColumn(map[string]cellRule{
	"number":                 {check: digitsRule(1, 10)},
	"amount":                 {check: (*validator).amount},
	"memo":                   {max: 128, multiline: true},
	"name":                   {max: 80},
	"email":                  {max: 80, check: emailRule},
	"authorization_date":     {check: (*validator).authorizationDate},
	"label":                  {max: 128},
	"phone":                  {max: 20},
	"address":                {max: 128, multiline: true},
	"city":                   {max: 40},
	"state":                  {check: stateRule, norm: strings.ToUpper},
	"zip":                    {check: (*validator).zip},
	"bank_account":           {check: accountRule},
	"bank_routing":           {check: (*validator).routing},
	"token":                  {min: 36, max: 36},
	"store":                  {max: 128},
	"type_info":              {max: 128},
	"recurring":              {check: boolRule},
	"recurring_cycle":        {check: cycleRule, norm: strings.ToLower},
	"recurring_start_date":   {check: (*validator).startDate, norm: nullToEmpty},
	"recurring_installments": {check: installmentsRule},
	"verify_before_save":     {check: boolRule},
	"fund_confirmation":      {check: boolRule},
})

// rulesByColumn places rules by column. A rule for a name that is not a
// field is a mistake of this package, and panics.
func rulesByColumn(byName map[string]cellRule) []cellRule {
	rules := make([]cellRule, numFields)
	for name, r := range byName {
		rules[column(name)] = r
	}
	return rules
}

// apply returns why s breaks r, or "".
func (r cellRule) apply(v *validator, s string) string {
	if msg := textProblem(s, r.multiline); msg != "" {
		return msg
	}
	if msg := r.lengthProblem(utf8.RuneCountInString(s)); msg != "" {
		return msg
	}
	if r.check != nil {
		return r.check(v, s)
	}
	return ""
}

func (r cellRule) lengthProblem(n int) string {
	switch {
	case r.min > 0 && r.min == r.max:
		if n != r.min {
			return fmt.Sprintf("must be exactly %d characters (has %d)", r.min, n)
		}
	case r.min > 0 && (n < r.min || n > r.max):
		return fmt.Sprintf("must be %d to %d characters (has %d)", r.min, r.max, n)
	case r.max > 0 && n > r.max:
		return fmt.Sprintf("must be at most %d characters (has %d)", r.max, n)
	}
	return ""
}

// textProblem refuses control characters, which have no place on a check
// and usually mean a damaged file.
func textProblem(s string, multiline bool) string {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b >= 0x7f {
			return controlProblem(s[i:], multiline)
		}
	}
	return "" // printable ASCII, the common case
}

func controlProblem(s string, multiline bool) string {
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r':
			if !multiline {
				return "must be on one line"
			}
		case r == '\t':
			if !multiline {
				return "must not contain a tab"
			}
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return fmt.Sprintf("contains the control character %U", r)
		}
	}
	return ""
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// digitsRule demands min to max ASCII digits. Leading zeros are kept.
func digitsRule(min, max int) func(*validator, string) string {
	return func(_ *validator, s string) string {
		if isDigits(s) && len(s) >= min && len(s) <= max {
			return ""
		}
		msg := fmt.Sprintf("must be %d to %d digits", min, max)
		if min == max {
			msg = fmt.Sprintf("must be exactly %d digits", min)
		}
		return msg + spreadsheetHint(s)
	}
}

// spreadsheetHint explains the two ways a spreadsheet mangles digit columns.
func spreadsheetHint(s string) string {
	switch {
	case strings.HasPrefix(s, "'"):
		return " (a leading apostrophe is not removed; format the column as text instead)"
	case strings.ContainsAny(s, "eE") && strings.ContainsAny(s, "+."):
		return " (it looks like scientific notation; format the column as text)"
	}
	return ""
}

// amount demands a plain decimal amount greater than 0. The comma is refused
// with a reason that depends on the file's separator: see amountCommaMessage.
func (v *validator) amount(s string) string {
	c, err := money.Parse(s)
	switch {
	case err == nil && c <= 0:
		return "must be greater than 0"
	case err == nil:
		return ""
	case errors.Is(err, money.ErrPrecision):
		return "must have at most two decimal places"
	case errors.Is(err, money.ErrRange):
		return "is too large"
	case strings.HasPrefix(s, "-"):
		return "must be greater than 0"
	case strings.Contains(s, ","):
		return amountCommaMessage(v.sep, s)
	case strings.ContainsAny(s, "$€£¥"):
		return "must not contain a currency symbol: write 1234.56"
	}
	return "must be a decimal amount like 1234.56"
}

// emailRule is a shape check only: one @ with text on both sides, a dot
// inside the domain, no white space. Deliverability is not ours to judge.
func emailRule(_ *validator, s string) string {
	local, domain, ok := strings.Cut(s, "@")
	dot := strings.LastIndexByte(domain, '.')
	if !ok || local == "" || strings.Contains(domain, "@") || dot <= 0 || dot == len(domain)-1 ||
		strings.ContainsFunc(s, isSpace) {
		return "is not an e-mail address like name@example.com"
	}
	return ""
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\u00a0' }

func stateRule(_ *validator, s string) string {
	if len(s) == 2 && isLetter(s[0]) && isLetter(s[1]) {
		return ""
	}
	return "must be a 2-letter state code"
}

func isLetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }

func boolRule(_ *validator, s string) string {
	if _, ok := ParseBool(s); !ok {
		return "must be true or false (or 1/0, yes/no)"
	}
	return ""
}

// ParseBool reads a flag column (and any other kind's yes/no cell): 1/0,
// true/false, yes/no in any case. Empty is false.
func ParseBool(s string) (value, ok bool) {
	switch strings.ToLower(s) {
	case "", "0", "false", "no":
		return false, true
	case "1", "true", "yes":
		return true, true
	}
	return false, false
}

func cycleRule(_ *validator, s string) string {
	switch strings.ToLower(s) {
	case "day", "week", "bi-weekly", "month":
		return ""
	}
	return "must be day, week, bi-weekly or month"
}

// maxInstallments keeps the count in an int on every platform.
const maxInstallments = 9

func installmentsRule(_ *validator, s string) string {
	if isDigits(s) && len(s) <= maxInstallments {
		return ""
	}
	return "must be a whole number of 0 or more (0 means indefinitely)"
}

var (
	routingDigits = digitsRule(9, 9)
	accountDigits = digitsRule(4, 17)
)

// accountRule demands 4 to 17 digits that a spreadsheet did not round.
func accountRule(_ *validator, s string) string { return CheckAccount(s, "bank_account") }

// zip demands 5 to 10 characters. A ZIP code of 3 or 4 digits lost its
// leading zeros in a spreadsheet: the row is refused, and so is the file
// (see zeroDamage).
func (v *validator) zip(s string) string {
	const min, max = 5, 10
	n := utf8.RuneCountInString(s)
	switch {
	case lostZeroZip(s):
		v.zeros.add(zeroCell{line: v.line, column: colZip, shown: s, digits: n})
		return lostZeroMessage(n, min, "ZIP code")
	case n < min || n > max:
		return fmt.Sprintf("must be %d to %d characters (has %d)", min, max, n)
	}
	return ""
}

// routing demands what CheckRouting does, and notes a number that lost
// its leading zeros in a spreadsheet: it refuses the file too (see
// zeroDamage).
func (v *validator) routing(s string) string {
	msg, lost := CheckRouting(s, v.testMode)
	if lost {
		v.zeros.add(zeroCell{line: v.line, column: colBankRouting, shown: shownValue(colBankRouting, s), digits: len(s)})
	}
	return msg
}

// abaValid checks a 9-digit routing number: weights 3, 7, 1 summing to a
// multiple of 10, and a first pair in an assigned range (00-12 government
// and Federal Reserve, 21-32 thrift, 61-72 electronic, 80 travelers cheques).
func abaValid(s string) bool {
	if len(s) != 9 || !isDigits(s) || s == "000000000" {
		return false
	}
	w := [3]int{3, 7, 1}
	sum := 0
	for i := 0; i < 9; i++ {
		sum += int(s[i]-'0') * w[i%3]
	}
	p := int(s[0]-'0')*10 + int(s[1]-'0')
	assigned := p <= 12 || (p >= 21 && p <= 32) || (p >= 61 && p <= 72) || p == 80
	return sum%10 == 0 && assigned
}

func parseDate(s string) (time.Time, bool) {
	d, err := time.Parse(dateLayout, s)
	return d, err == nil
}

func (v *validator) authorizationDate(s string) string {
	d, ok := parseDate(s)
	if !ok {
		return "must be a date like 2025-01-31 (YYYY-MM-DD)"
	}
	run := v.run.Format(dateLayout)
	if d.After(v.run) {
		return "must not be in the future (run date " + run + ")"
	}
	if v.run.Sub(d) > maxAuthorizationAge*24*time.Hour {
		return fmt.Sprintf("must not be more than %d days before the run date %s", maxAuthorizationAge, run)
	}
	return ""
}

// isNull reports the spelling of "no start date" that spec 2.1 shows.
func isNull(s string) bool { return strings.EqualFold(s, "null") }

// nullToEmpty stores NULL as "not given".
func nullToEmpty(s string) string {
	if isNull(s) {
		return ""
	}
	return s
}

func (v *validator) startDate(s string) string {
	if isNull(s) {
		return ""
	}
	d, ok := parseDate(s)
	if !ok {
		return "must be a date like 2025-01-31 (YYYY-MM-DD), or empty or NULL to start on the creation day"
	}
	if d.Before(v.run) {
		return "must not be before the run date " + v.run.Format(dateLayout)
	}
	return ""
}
