package paymentlink

import (
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/money"
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

// IsLinkOf finds a line's link whatever the service did to the memo's case
// and spacing, and only with the line's amount; a line without the
// reference by its whole memo, never by a reference's memo.
func TestIsLinkOf(t *testing.T) {
	line := func(n int, memo string, amount int64, noRef bool) Line {
		l := Line{Ref: Ref("abcdef0123456789", n), NoRef: noRef}
		l.Request.Memo, l.Request.Amount = memo, money.Cents(amount)
		if !noRef {
			l.Request.Memo = Memo(memo, l.Ref)
		}
		return l
	}
	ref7 := line(7, "Invoice 7", 900, false)
	l := Link{Memo: strings.ToUpper(ref7.Request.Memo), Amount: 900}
	if !IsLinkOf(l, ref7) || IsLinkOf(l, line(7, "Invoice 7", 901, false)) || IsLinkOf(l, line(77, "Invoice 7", 900, false)) {
		t.Errorf("IsLinkOf(%q)", l.Memo)
	}
	bare := line(3, "Invoice  9", 500, true)
	if !IsLinkOf(Link{Memo: " invoice 9 ", Amount: 500}, bare) || IsLinkOf(Link{Memo: Memo("Invoice 9", Ref("ab", 2)), Amount: 500}, bare) {
		t.Error("a line without the reference is found by its whole memo only")
	}
}

// memo_reference off sends the memo as it is, and refuses an empty one.
func TestReadLineWithoutReference(t *testing.T) {
	header := payment.KindLinks.Columns()
	cells := func(memo, ref string) []string {
		out := make([]string, len(header))
		for i, h := range header {
			out[i] = map[string]string{"amount": "5.00", "memo": memo, "memo_reference": ref}[h]
		}
		return out
	}
	rec, why := readLine(payment.FileMeta{SHA256: "ff"}, ingest.NewLine(2, header, cells("INV-1", "no")))
	if why != "" || !rec.NoRef || rec.Request.Memo != "INV-1" {
		t.Errorf("memo_reference no: %+v %q", rec, why)
	}
	if _, why := readLine(payment.FileMeta{SHA256: "ff"}, ingest.NewLine(2, header, cells("", "no"))); !strings.Contains(why, "memo is empty") {
		t.Errorf("an empty memo without the reference: %q", why)
	}
	if rec, _ := readLine(payment.FileMeta{SHA256: "ff"}, ingest.NewLine(2, header, cells("INV-1", ""))); rec.NoRef || rec.Request.Memo != "INV-1 [bdff-2]" {
		t.Errorf("memo_reference blank: %+v", rec)
	}
}
