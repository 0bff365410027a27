package csvfile

import (
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

// TestColumnsAreTheFields: the header accepts every field of a payment
// and nothing else, and a column whose value is not text has a rule that
// makes sure the value reads (validator.payment reads it by kind).
func TestColumnsAreTheFields(t *testing.T) {
	for col, f := range payment.Fields {
		if f.Kind != payment.Text && cellRules[col].check == nil {
			t.Errorf("column %s (%v) has no check", f.Name, f.Kind)
		}
	}
	if len(cellRules) != len(payment.Fields) {
		t.Errorf("%d rules for %d fields", len(cellRules), len(payment.Fields))
	}
	res := parseString(csvOf(baseRow()), testOpts())
	if res.err != nil || len(res.rows) != 1 {
		t.Fatalf("a header of every field: rows %v, err %v", res.rows, res.err)
	}
}

// TestEveryColumnReachesThePayment fills every column of a valid row and
// finds each in the Payment, read by its kind and normalised by its rule;
// a column left empty stays the zero value.
func TestEveryColumnReachesThePayment(t *testing.T) {
	full := with(map[string]string{
		"number": "1001", "authorization_date": "2025-06-14", "label": "run-7", "phone": "555-1234",
		"address": "1 Main St", "city": "Austin", "state": "tx", "zip": "73301", "type_info": "batchd",
		"recurring": "yes", "recurring_cycle": "Month", "recurring_start_date": "2025-07-01",
		"recurring_installments": "6", "verify_before_save": "1", "fund_confirmation": "true",
	})
	token := with(map[string]string{"bank_routing": "", "bank_account": "",
		"token": "0123456789abcdef0123456789abcdef0123", "store": "shop", "recurring_start_date": "null"})
	res := parseString(csvOf(full, token), testOpts())
	if res.err != nil || len(res.rows) != 2 {
		t.Fatalf("rows %v, findings %v, err %v", res.rows, res.findings, res.err)
	}
	for i, given := range []map[string]string{full, token} {
		p := &res.rows[i].Payment
		for _, f := range payment.Fields {
			want := given[f.Name] != "" && !isNull(given[f.Name]) // NULL is "not given"
			if set := !f.IsZero(p); set != want {
				t.Errorf("row %d: %s set %v from %q", i, f.Name, set, given[f.Name])
			}
		}
	}
	p := res.rows[0].Payment
	if p.Amount != 1000 || p.State != "TX" || p.RecurringCycle != "month" || p.RecurringInstallments != 6 ||
		!p.Recurring || !p.VerifyBeforeSave || !p.FundConfirmation || p.RecurringStartDate != "2025-07-01" {
		t.Errorf("values read: %+v", p)
	}
}
