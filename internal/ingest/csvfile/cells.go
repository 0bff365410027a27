package csvfile

import (
	"strings"
	"unicode/utf8"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/redact"
)

// This file exports the rules of single cells that other kinds of file
// (internal/ingest/sourcefile) share with payment files, so that each rule
// and its message live in one place. Every function takes a cell already
// trimmed of surrounding white space and returns "" when the cell passes,
// else the message of a Finding.

// CheckRouting judges a routing number: 9 digits passing the ABA checksum
// with an assigned first pair; the sandbox routing number SandboxRouting
// only when testMode. lostZeros reports a number of 7 or 8 digits that is
// valid with zeros put back in front: a spreadsheet dropped them, and the
// file's account numbers may have lost theirs too, so the caller refuses
// the whole file (FileError.Damaged).
func CheckRouting(s string, testMode bool) (problem string, lostZeros bool) {
	if lostZeroRouting(s) {
		return lostZeroMessage(len(s), 9, "routing number"), true
	}
	if msg := routingDigits(nil, s); msg != "" {
		return msg, false
	}
	if s == SandboxRouting {
		if testMode {
			return "", false
		}
		return SandboxRouting + " is the sandbox test routing number; it is not valid in live mode", false
	}
	if !abaValid(s) {
		return "is not a valid ABA routing number (checksum or first two digits)", false
	}
	return "", false
}

// CheckAccount judges a bank account number: 4 to 17 digits that a
// spreadsheet did not round to 15 significant digits. column names the
// account column in the advice of the message.
func CheckAccount(s, column string) string {
	if msg := accountDigits(nil, s); msg != "" {
		return msg
	}
	if roundedAccount(s) {
		return roundedAccountMessage(s, column)
	}
	return ""
}

// CheckEmail judges the shape of an e-mail address of at most 80
// characters: one @ with text on both sides, a dot inside the domain, no
// white space.
func CheckEmail(s string) string {
	if msg := CheckText(s, 80); msg != "" {
		return msg
	}
	return emailRule(nil, s)
}

// CheckText refuses control characters, line breaks and tabs, and more
// than max characters (runes; 0: no bound).
func CheckText(s string, max int) string {
	if msg := textProblem(s, false); msg != "" {
		return msg
	}
	return cellRule{max: max}.lengthProblem(utf8.RuneCountInString(s))
}

// LostLetters reports a "?" that stands where a letter should be, written
// by a spreadsheet that saved the file in an encoding without that letter.
// In a name (name true) any "?" does; see LostLettersMessage.
func LostLetters(s string, name bool) bool { return lossyText(s, name) }

// LostLettersMessage is the Warning on a cell for which LostLetters holds.
const LostLettersMessage = lossyMessage

// MaskAccount is an account number as a Finding shows it: "****6789"
// (redact.Account), valid UTF-8.
func MaskAccount(s string) string { return strings.ToValidUTF8(redact.Account(s), "") }

// ShowRouting is a routing-number cell as a Finding shows it. A routing
// number is public (it names a bank, and is printed on every check), so
// one with a routing number's shape, nine digits, is shown as typed, for
// the person fixing the file to see the typo; anything else in that
// column may be an account number in the wrong column, and is masked.
func ShowRouting(s string) string {
	if len(s) == 9 && strings.Trim(s, "0123456789") == "" {
		return s
	}
	return MaskAccount(s)
}

// Clip cuts a cell to the 64 characters a Finding repeats, marking the cut
// with "…".
func Clip(s string) string { return clip(s) }

// CheckField judges a cell of the payment field name (payment.Fields) by
// the rule a payment file's column of that name applies: its length, its
// characters and the field's own check. Kinds of file that carry some
// payment fields (an edit file's new amount, memo, …) judge them by it,
// so a value an edit gives passes exactly when a payment file's would.
// A name that is no field passes; a rule that depends on the mode or the
// run date judges as in live mode on no date (the edit rule does not ask
// it of routing numbers or dates).
func CheckField(name, s string) string {
	i := payment.FieldIndex(name)
	if i < 0 {
		return ""
	}
	return cellRules[i].apply(&validator{}, s)
}
