package echeck

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/batchd/batchd/internal/money"
)

// sandboxCheck mirrors the sandbox emulator's checkView field for field, in
// its order and with its types, so that json.Marshal writes a check exactly
// as the emulator does. It is rebuilt here rather than imported: echeck
// must not depend on the emulator.
type sandboxCheck struct {
	CheckID               string      `json:"check_id"`
	Date                  string      `json:"date"`
	Number                string      `json:"number"`
	Amount                money.Cents `json:"amount"`
	Memo                  string      `json:"memo"`
	Name                  string      `json:"name"`
	Email                 string      `json:"email"`
	Phone                 string      `json:"phone"`
	Address               string      `json:"address"`
	City                  string      `json:"city"`
	State                 string      `json:"state"`
	Zip                   string      `json:"zip"`
	Label                 string      `json:"label"`
	TypeInfo              string      `json:"type_info"`
	AuthorizationDate     string      `json:"authorization_date"`
	Status                string      `json:"status"`
	BankAccount           string      `json:"bank_account"`
	BankRouting           string      `json:"bank_routing"`
	BankName              string      `json:"bank_name"`
	BankAddress           string      `json:"bank_address"`
	BankCity              string      `json:"bank_city"`
	BankState             string      `json:"bank_state"`
	BankZip               string      `json:"bank_zip"`
	Store                 string      `json:"store"`
	LinkID                string      `json:"link_id"`
	Recurring             int64       `json:"recurring"`
	RecurringCycle        *string     `json:"recurring_cycle"`
	RecurringStartDate    *string     `json:"recurring_start_date"`
	RecurringInstallments int64       `json:"recurring_installments"`
	BasicVerification     *struct {
		Risk         string `json:"risk_bv"`
		Pass         int    `json:"pass_bv"`
		Code         string `json:"code_bv"`
		Description  string `json:"description_bv"`
		Verification string `json:"verification_bv"`
	} `json:"basic_verification,omitempty"`
	FundsConfirmation *struct {
		Verification string `json:"verification_fc"`
		Pass         int    `json:"pass_fc"`
		Description  string `json:"description_fc"`
	} `json:"funds_confirmation,omitempty"`
}

// sandboxListPage is a check list answer as the sandbox writes it: paging
// numbers as strings, n checks under list.data, a third of them verified,
// a fifth with funds confirmation, a seventh recurring.
func sandboxListPage(tb testing.TB, page, n int) []byte {
	tb.Helper()
	checks := make([]sandboxCheck, n)
	for i := range checks {
		seq := (page-1)*n + i
		c := sandboxCheck{
			CheckID: fmt.Sprintf("%08x-4c5d-4e6f-8a9b-%012x", seq*7919, seq), Date: "2026-11-20 10:00:00",
			Number: fmt.Sprint(1001 + seq), Amount: money.Cents(1 + seq*137%12345678),
			Memo: "Invoice " + fmt.Sprint(seq), Name: "Ann Lee", Email: "ann@example.com",
			Phone: "5551234567", Address: "12 Elm Street", City: "Springfield", State: "IL", Zip: "62701",
			Label: fmt.Sprintf("batch-7-row-%d", seq), AuthorizationDate: "2026-11-20", Status: "in_process",
			BankAccount: "****0016", BankRouting: "999900001", BankName: "Sandbox Test Bank",
			BankAddress: "1 Fixture Way", BankCity: "Testville", BankState: "NY", BankZip: "10001",
		}
		if seq%7 == 0 {
			cycle, start := "month", "2026-12-01"
			c.Recurring, c.RecurringCycle, c.RecurringStartDate, c.RecurringInstallments = 1, &cycle, &start, 12
		}
		if seq%3 == 0 {
			c.BasicVerification = &struct {
				Risk         string `json:"risk_bv"`
				Pass         int    `json:"pass_bv"`
				Code         string `json:"code_bv"`
				Description  string `json:"description_bv"`
				Verification string `json:"verification_bv"`
			}{"Pass", 1, "1111", "The account was found to be an open and valid checking or savings account", "Accepted"}
		}
		if seq%5 == 0 {
			c.FundsConfirmation = &struct {
				Verification string `json:"verification_fc"`
				Pass         int    `json:"pass_fc"`
				Description  string `json:"description_fc"`
			}{"SufficientFunds", 1, "The account holds enough for the check"}
		}
		checks[i] = c
	}
	body := map[string]any{
		"success": true, "error": false, "message": "Checks found",
		"list": map[string]any{
			"current_page": fmt.Sprint(page), "from": fmt.Sprint(page - 1), "to": fmt.Sprint(page + 1),
			"last_page": "1000", "per_page": fmt.Sprint(n), "total": "100000", "data": checks,
		},
	}
	b, err := json.Marshal(body)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkListChecksDecode decodes one 100-check page as the sandbox
// emits it; ns/op and allocs/op are per page.
func BenchmarkListChecksDecode(b *testing.B) { benchListDecode(b, decodeListAnswer) }

// BenchmarkListChecksDecodeReference decodes the same page with the
// reference decoder of reference_test.go (encoding/json, a map of raw
// values per level): a baseline within the same run.
func BenchmarkListChecksDecodeReference(b *testing.B) { benchListDecode(b, refListAnswer) }

func benchListDecode(b *testing.B, decode func([]byte) (Paging, []Check, error)) {
	body := sandboxListPage(b, 5, 100)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		pg, checks, err := decode(body)
		if err != nil || len(checks) != 100 || pg.Total != 100000 {
			b.Fatalf("%+v, %d checks, %v", pg, len(checks), err)
		}
	}
}

// BenchmarkCheckUnmarshal decodes one check with json.Unmarshal, as a
// caller that stored a Check reads it back.
func BenchmarkCheckUnmarshal(b *testing.B) {
	var page struct {
		List struct {
			Data []json.RawMessage `json:"data"`
		} `json:"list"`
	}
	if err := json.Unmarshal(sandboxListPage(b, 1, 1), &page); err != nil {
		b.Fatal(err)
	}
	one := page.List.Data[0]
	b.SetBytes(int64(len(one)))
	b.ReportAllocs()
	for b.Loop() {
		var c Check
		if err := json.Unmarshal(one, &c); err != nil || c.Amount == 0 {
			b.Fatalf("%+v, %v", c, err)
		}
	}
}
