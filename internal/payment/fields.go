package payment

import "github.com/batchd/batchd/internal/money"

// Kind is the type of a field's value in a Payment.
type Kind int

// The kinds of fields.
const (
	Text  Kind = iota // a string; "" is "not given"
	Cents             // an exact amount (money.Cents)
	Bool              // a flag; false is "not given"
	Int               // a whole number
)

// String names the kind for messages.
func (k Kind) String() string {
	switch k {
	case Text:
		return "text"
	case Cents:
		return "cents"
	case Bool:
		return "bool"
	case Int:
		return "int"
	}
	return "kind?"
}

// Field is one field of a payment: a field of a check create (spec 2.1).
// Every adapter that reads or writes a payment's fields one by one (the
// CSV columns, the ledger's row codec, the API request) loops over Fields
// instead of naming them again, so that a field added here reaches all of
// them.
//
// The accessor that matches Kind (Text, Cents, Bool or Int) returns the
// address of the field's value in a Payment, for reading and writing; the
// others panic.
type Field struct {
	// Name is the field's name in the spec: the API's field name and the
	// CSV column, such as "bank_account". It is also the field's JSON name
	// in Payment.
	Name string
	Kind Kind
	// Recurrence marks the schedule of a recurring check (cycle, start
	// date, installments): it means something only when recurring is set.
	Recurrence bool

	// The accessor of the field's kind; the others are nil. They are the
	// one place that names a Payment's Go field for its spec name.
	text  func(*Payment) *string
	cents func(*Payment) *money.Cents
	flag  func(*Payment) *bool
	num   func(*Payment) *int
}

// Text returns the address of a Text field's value in p.
func (f *Field) Text(p *Payment) *string {
	f.must(Text)
	return f.text(p)
}

// Cents returns the address of a Cents field's value in p.
func (f *Field) Cents(p *Payment) *money.Cents {
	f.must(Cents)
	return f.cents(p)
}

// Bool returns the address of a Bool field's value in p.
func (f *Field) Bool(p *Payment) *bool {
	f.must(Bool)
	return f.flag(p)
}

// Int returns the address of an Int field's value in p.
func (f *Field) Int(p *Payment) *int {
	f.must(Int)
	return f.num(p)
}

func (f *Field) must(k Kind) {
	if f.Kind != k {
		panic("payment: field " + f.Name + " is " + f.Kind.String() + ", not " + k.String())
	}
}

// IsZero reports whether f is "not given" in p: an empty text, a zero
// amount or number, a false flag.
func (f *Field) IsZero(p *Payment) bool {
	switch f.Kind {
	case Text:
		return *f.Text(p) == ""
	case Cents:
		return *f.Cents(p) == 0
	case Bool:
		return !*f.Bool(p)
	}
	return *f.Int(p) == 0
}

func text(name string, get func(*Payment) *string) Field {
	return Field{Name: name, Kind: Text, text: get}
}

func cents(name string, get func(*Payment) *money.Cents) Field {
	return Field{Name: name, Kind: Cents, cents: get}
}

func flag(name string, get func(*Payment) *bool) Field {
	return Field{Name: name, Kind: Bool, flag: get}
}

func number(name string, get func(*Payment) *int) Field {
	return Field{Name: name, Kind: Int, num: get}
}

// schedule marks f as part of a recurring schedule.
func (f Field) schedule() Field {
	f.Recurrence = true
	return f
}

// Fields are the fields of a payment, in spec order (section 2.1): every
// field of Payment but AccountLast4, which is the ledger's own.
var Fields = []Field{
	text("number", func(p *Payment) *string { return &p.Number }),
	cents("amount", func(p *Payment) *money.Cents { return &p.Amount }),
	text("memo", func(p *Payment) *string { return &p.Memo }),
	text("name", func(p *Payment) *string { return &p.Name }),
	text("email", func(p *Payment) *string { return &p.Email }),
	text("authorization_date", func(p *Payment) *string { return &p.AuthorizationDate }),
	text("label", func(p *Payment) *string { return &p.Label }),
	text("phone", func(p *Payment) *string { return &p.Phone }),
	text("address", func(p *Payment) *string { return &p.Address }),
	text("city", func(p *Payment) *string { return &p.City }),
	text("state", func(p *Payment) *string { return &p.State }),
	text("zip", func(p *Payment) *string { return &p.Zip }),
	text("bank_account", func(p *Payment) *string { return &p.BankAccount }),
	text("bank_routing", func(p *Payment) *string { return &p.BankRouting }),
	text("token", func(p *Payment) *string { return &p.Token }),
	text("store", func(p *Payment) *string { return &p.Store }),
	text("type_info", func(p *Payment) *string { return &p.TypeInfo }),
	flag("recurring", func(p *Payment) *bool { return &p.Recurring }),
	text("recurring_cycle", func(p *Payment) *string { return &p.RecurringCycle }).schedule(),
	text("recurring_start_date", func(p *Payment) *string { return &p.RecurringStartDate }).schedule(),
	number("recurring_installments", func(p *Payment) *int { return &p.RecurringInstallments }).schedule(),
	flag("verify_before_save", func(p *Payment) *bool { return &p.VerifyBeforeSave }),
	flag("fund_confirmation", func(p *Payment) *bool { return &p.FundConfirmation }),
}

var fieldIndex = func() map[string]int {
	m := make(map[string]int, len(Fields))
	for i, f := range Fields {
		m[f.Name] = i
	}
	return m
}()

// FieldIndex returns the position in Fields of the field named name (its
// spec name, exactly), or -1.
func FieldIndex(name string) int {
	if i, ok := fieldIndex[name]; ok {
		return i
	}
	return -1
}

// FieldByName returns the field named name (its spec name, exactly).
func FieldByName(name string) (Field, bool) {
	if i, ok := fieldIndex[name]; ok {
		return Fields[i], true
	}
	return Field{}, false
}

// FieldNames returns the names of Fields, in spec order.
func FieldNames() []string {
	out := make([]string, len(Fields))
	for i, f := range Fields {
		out[i] = f.Name
	}
	return out
}
