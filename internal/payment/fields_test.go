package payment

import (
	"reflect"
	"strings"
	"testing"
)

// TestFieldsCoverPayment: Fields reach every field of Payment but
// AccountLast4, PayeeID, FirstName and LastName (batchd's own, no check
// fields), each once, through the accessor of the field's Go type,
// under the field's JSON name, in the order Payment declares them (spec
// order).
func TestFieldsCoverPayment(t *testing.T) {
	notFields := map[string]bool{"AccountLast4": true, "PayeeID": true, "FirstName": true, "LastName": true}
	typ := reflect.TypeFor[Payment]()
	var want []int // struct field indexes Fields must reach, in order
	for i := range typ.NumField() {
		if name := typ.Field(i).Name; !notFields[name] {
			want = append(want, i)
		}
	}
	if len(Fields) != len(want) {
		t.Fatalf("%d Fields for %d fields of Payment", len(Fields), len(want))
	}
	for n, f := range Fields {
		var p Payment
		switch f.Kind {
		case Text:
			*f.Text(&p) = "x"
		case Cents:
			*f.Cents(&p) = 1
		case Bool:
			*f.Bool(&p) = true
		case Int:
			*f.Int(&p) = 1
		default:
			t.Fatalf("%s: kind %v", f.Name, f.Kind)
		}
		v := reflect.ValueOf(p)
		var set []int
		for i := range v.NumField() {
			if !v.Field(i).IsZero() {
				set = append(set, i)
			}
		}
		if len(set) != 1 || set[0] != want[n] {
			t.Errorf("Fields[%d] %s sets Payment fields %v, want [%d] (%s)", n, f.Name, set, want[n], typ.Field(want[n]).Name)
			continue
		}
		sf := typ.Field(set[0])
		if tag, _, _ := strings.Cut(sf.Tag.Get("json"), ","); tag != f.Name {
			t.Errorf("Fields[%d] is named %q, Payment.%s's JSON name is %q", n, f.Name, sf.Name, tag)
		}
		if f.IsZero(&p) {
			t.Errorf("%s: IsZero after it was set", f.Name)
		}
		if !f.IsZero(&Payment{}) {
			t.Errorf("%s: not IsZero in the zero Payment", f.Name)
		}
	}
}

func TestFieldByName(t *testing.T) {
	for i, f := range Fields {
		got, ok := FieldByName(f.Name)
		if !ok || got.Name != f.Name || FieldIndex(f.Name) != i {
			t.Errorf("FieldByName(%q) = %v, %v; FieldIndex %d, want %d", f.Name, got.Name, ok, FieldIndex(f.Name), i)
		}
	}
	for _, name := range []string{"", "Amount", " amount", "account_last4", "check_id"} {
		if _, ok := FieldByName(name); ok || FieldIndex(name) != -1 {
			t.Errorf("FieldByName(%q) found a field", name)
		}
	}
	if names := FieldNames(); len(names) != len(Fields) || names[0] != "number" || names[len(names)-1] != "fund_confirmation" {
		t.Errorf("FieldNames() = %v", names)
	}
}

func TestRecurrenceFields(t *testing.T) {
	var got []string
	for _, f := range Fields {
		if f.Recurrence {
			got = append(got, f.Name)
		}
	}
	if strings.Join(got, " ") != "recurring_cycle recurring_start_date recurring_installments" {
		t.Errorf("recurrence fields %v", got)
	}
}

func TestAccessorOfAnotherKindPanics(t *testing.T) {
	amount, _ := FieldByName("amount")
	defer func() {
		if recover() == nil {
			t.Error("Text of a Cents field did not panic")
		}
	}()
	amount.Text(&Payment{})
}
