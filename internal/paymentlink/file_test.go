package paymentlink

import (
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/payment"
)

// A line is read into the request it will be created with: the memo ends
// with batchd's reference within 128 characters, every flag is read, and
// a bad cell is refused naming the column and the value.
func TestReadLine(t *testing.T) {
	header := payment.KindLinks.Columns()
	cells := func(set map[string]string) []string {
		out := make([]string, len(header))
		for i, h := range header {
			out[i] = set[h]
		}
		return out
	}
	meta := payment.FileMeta{SHA256: "0123456789abcdef"}
	rec, why := readLine(meta, ingest.NewLine(4, header, cells(map[string]string{
		"amount": "12.50", "memo": strings.Repeat("m", 200), "recurring": "yes", "is_bankauth": "1",
		"recurring_installments": "3", "invoice": "INV-9", "thank_you_url": "https://shop.example/ok"})))
	if why != "" {
		t.Fatalf("refused: %s", why)
	}
	r := rec.Request
	if r.Amount != 1250 || !r.Recurring || !r.IsBankAuth || r.FundConfirmation || *r.RecurringInstallments != 3 {
		t.Errorf("request %+v", r)
	}
	if n := len([]rune(r.Memo)); n != MemoMax || !strings.HasSuffix(r.Memo, " [bd0123456789-4]") || rec.Ref != "bd0123456789-4" {
		t.Errorf("memo %q (%d characters), ref %q", r.Memo, n, rec.Ref)
	}
	if rec.Key != (payment.LineKey{File: meta.SHA256, Line: 4}) || rec.Invoice != "INV-9" {
		t.Errorf("record %+v", rec)
	}
	for col, val := range map[string]string{"amount": "-1", "signature_required": "maybe", "error_url": "ftp://x", "recurring_installments": "-2"} {
		if _, why := readLine(meta, ingest.NewLine(2, header, cells(map[string]string{col: val}))); !strings.Contains(why, col) || !strings.Contains(why, val) {
			t.Errorf("%s %q: %q", col, val, why)
		}
	}
}

// IsLinkOf finds a line's link whatever the service did to the memo's case,
// and only with the line's amount.
func TestIsLinkOf(t *testing.T) {
	ref := Ref("abcdef0123456789", 7)
	l := Link{Memo: strings.ToUpper(Memo("Invoice 7", ref)), Amount: 900}
	if !IsLinkOf(l, ref, 900) || IsLinkOf(l, ref, 901) || IsLinkOf(l, Ref("abcdef0123456789", 77), 900) {
		t.Errorf("IsLinkOf(%q)", l.Memo)
	}
}
