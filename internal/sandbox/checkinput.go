package sandbox

import (
	"math"
	"strings"
	"time"
)

// Length limits of spec sections 2.1 to 2.3 and 8.
const (
	maxMemo     = 128
	maxName     = 80
	maxEmail    = 80
	maxPhone    = 20
	maxAddress  = 128
	maxCity     = 40
	maxLabel    = 128
	maxTypeInfo = 128
	maxStore    = 128
	maxPersonal = 128 // first_name, last_name of tokenization
	idLen       = 36  // check_id, token, checkout_token
	maxAuthAge  = 30  // days an authorization_date may lie in the past
)

// readCheckInput validates a create (edit false) or edit request against
// the key's sandbox date today. It checks every field rule of spec 2.1 and
// 4.1 and answers 400 naming the first bad field. A token is not resolved
// here; that needs the key's data.
func readCheckInput(p params, edit bool, today time.Time) (checkInput, *apiError) {
	f := &fields{p: p}
	var in checkInput
	if edit {
		in.CheckID = f.textLen("check_id", true, idLen, idLen)
	}
	in.Number = f.digits("number", edit, true, 1, 10)
	in.Amount, _ = f.amount("amount", true)
	in.Memo = f.text("memo", true, maxMemo)
	in.Name = f.text("name", true, maxName)
	in.Email = f.email("email", maxEmail)
	in.Phone = f.text("phone", false, maxPhone)
	in.Address = f.text("address", false, maxAddress)
	in.City = f.text("city", false, maxCity)
	in.State = f.textLen("state", false, 2, 2)
	in.Zip = f.textLen("zip", false, 5, 10)
	in.Label = f.text("label", false, maxLabel)
	in.TypeInfo = f.text("type_info", false, maxTypeInfo)
	in.AuthDate = authDate(f, today)
	in.Routing = f.digits("bank_routing", false, false, 9, 9)
	in.Account = f.digits("bank_account", false, false, 4, 17)
	in.Token = f.textLen("token", false, idLen, idLen)
	in.Store = f.text("store", false, maxStore)
	in.Recurring = readRecurring(f)
	in.Verify = f.boolean("verify_before_save")
	in.Fund = f.boolean("fund_confirmation")
	if f.err != nil {
		return checkInput{}, f.err
	}
	if err := contactRules(&in); err != nil {
		return checkInput{}, err
	}
	if err := bankRules(&in); err != nil {
		return checkInput{}, err
	}
	return in, nil
}

// authDate reads authorization_date: not older than 30 days and not after
// today, both on the key's sandbox clock and in the service's time zone
// (today's location).
func authDate(f *fields, today time.Time) string {
	d, ok := f.date("authorization_date")
	if !ok {
		return ""
	}
	y, m, dd := today.Date()
	day := time.Date(y, m, dd, 0, 0, 0, 0, time.UTC)
	switch {
	case d.After(day):
		f.fail("authorization_date", "must not be in the future")
	case d.Before(day.AddDate(0, 0, -maxAuthAge)):
		f.fail("authorization_date", "must not be older than %d days", maxAuthAge)
	}
	return d.Format(dateLayout)
}

// readRecurring reads the recurring fields shared by checks and payment
// links. recurring_cycle is required when recurring is 1.
func readRecurring(f *fields) recurringView {
	var v recurringView
	v.Recurring, _ = f.integer("recurring", 0, 1)
	cycle := f.enum("recurring_cycle", "day", "week", "bi-weekly", "month")
	v.RecurringCycle = nullable(cycle)
	if s := f.text("recurring_start_date", false, 64); s != "" && !strings.EqualFold(s, "null") {
		if d, err := time.Parse(dateLayout, s); err != nil || len(s) != len(dateLayout) {
			f.fail("recurring_start_date", "must be a date YYYY-MM-DD or NULL")
		} else {
			v.RecurringStartDate = nullable(d.Format(dateLayout))
		}
	}
	v.RecurringInstallments, _ = f.integer("recurring_installments", 0, math.MaxInt32)
	if f.err == nil && v.Recurring == 1 && cycle == "" {
		f.fail("recurring_cycle", "required when recurring is 1")
	}
	return v
}

// contactRules: email is required unless address is given, and an address
// needs city, state and zip.
func contactRules(in *checkInput) *apiError {
	if in.Email == "" && in.Address == "" {
		return badField("email", "required unless address is given")
	}
	if in.Address == "" {
		return nil
	}
	switch {
	case in.City == "":
		return badField("city", "required when address is given")
	case in.State == "":
		return badField("state", "required when address is given")
	case in.Zip == "":
		return badField("zip", "required when address is given")
	}
	return nil
}

// bankRules: routing and account together, or token and store together,
// never both pairs and never neither (rules 1 and 2 of spec 2.1).
func bankRules(in *checkInput) *apiError {
	hasBank := in.Routing != "" || in.Account != ""
	hasToken := in.Token != "" || in.Store != ""
	switch {
	case in.Routing != "" && in.Account == "":
		return badField("bank_account", "required with bank_routing")
	case in.Account != "" && in.Routing == "":
		return badField("bank_routing", "required with bank_account")
	case in.Token != "" && in.Store == "":
		return badField("store", "required with token")
	case in.Store != "" && in.Token == "":
		return badField("token", "required with store")
	case hasBank && hasToken:
		return badField("token", "must not be given with bank_routing and bank_account")
	case !hasBank && !hasToken:
		return badField("bank_routing", "required, with bank_account (or token and store instead)")
	}
	return nil
}

// dateOf is midnight UTC of t's day.
func dateOf(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
