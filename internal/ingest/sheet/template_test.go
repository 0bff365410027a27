package sheet_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/ingest/sheet"
	"github.com/batchd/batchd/internal/ingest/sourcefile"
	"github.com/batchd/batchd/internal/payment"
)

// templateDir holds the committed templates, which `batchd template`
// writes.
var templateDir = filepath.Join("..", "..", "..", "testdata", "templates")

// layout is what a template holds that matters: each column's header and
// the number format of its header and of its cells below, to row 1001.
type layout struct {
	headers []string
	formats []string // per column: header, row 2 and row 1001 formats
}

func layoutOf(t *testing.T, data []byte) layout {
	t.Helper()
	f, err := excelize.OpenReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows(sheet.TemplateSheet)
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %q err %v", rows, err)
	}
	var l layout
	for i, h := range rows[0] {
		l.headers = append(l.headers, h)
		col, _ := excelize.ColumnNumberToName(i + 1)
		for _, r := range []string{"1", "2", "1001"} {
			id, err := f.GetCellStyle(sheet.TemplateSheet, col+r)
			if err != nil {
				t.Fatal(err)
			}
			st, err := f.GetStyle(id)
			if err != nil {
				t.Fatal(err)
			}
			format := "builtin:" + strconv.Itoa(st.NumFmt)
			if st.CustomNumFmt != nil {
				format = *st.CustomNumFmt
			}
			l.formats = append(l.formats, h+"@"+r+"="+format)
		}
	}
	return l
}

// TestTemplatesCommitted: the committed templates are what WriteTemplate
// writes, compared by cells and number formats (excelize's bytes are not
// stable), and their identifier columns are Text.
func TestTemplatesCommitted(t *testing.T) {
	for name, kind := range sheet.TemplateKinds {
		var fresh bytes.Buffer
		if err := sheet.WriteTemplate(&fresh, kind); err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join(templateDir, name+".xlsx"))
		if err != nil {
			t.Fatalf("%s: %v (run: batchd template %s --out testdata/templates/%s.xlsx)", name, err, name, name)
		}
		got, want := layoutOf(t, committed), layoutOf(t, fresh.Bytes())
		if len(got.formats) != len(want.formats) || len(got.headers) != len(want.headers) {
			t.Fatalf("%s: committed %v, fresh %v", name, got, want)
		}
		for i := range want.formats {
			if got.formats[i] != want.formats[i] {
				t.Errorf("%s: committed %s, fresh %s", name, got.formats[i], want.formats[i])
			}
		}
		for i, h := range want.headers {
			isID := kind.Payments() && csvfile.PaymentCellKind(h) == csvfile.IdentifierCell ||
				!kind.Payments() && sourcefile.CellKindOf(h) == csvfile.IdentifierCell
			if isID && got.formats[3*i+1] != h+"@2=builtin:49" {
				t.Errorf("%s: identifier column %s is %s, want Text (49)", name, h, got.formats[3*i+1])
			}
		}
	}
}

// TestTemplateHasNoRowsBelowItsHeader: the template formats whole
// columns and holds no cell below its header, so a program that appends
// after the last row (openpyxl's append, excelize's dimension) writes at
// row 2; before, 1,000 styled blank rows sent it to row 1,002.
func TestTemplateHasNoRowsBelowItsHeader(t *testing.T) {
	for name, kind := range sheet.TemplateKinds {
		var b bytes.Buffer
		if err := sheet.WriteTemplate(&b, kind); err != nil {
			t.Fatal(err)
		}
		f, err := excelize.OpenReader(&b)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := f.Rows(sheet.TemplateSheet) // every <row> the sheet holds, empty or not
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		f.Close()
		if n != 1 {
			t.Errorf("%s: the sheet holds %d rows, want the header row alone", name, n)
		}
	}
}

// TestTemplateFilledIn: a template filled in as a person would, every
// identifier typed as text with its leading zeros and the amount typed as
// a number, is paid exactly as typed.
func TestTemplateFilledIn(t *testing.T) {
	f, err := excelize.OpenFile(filepath.Join(templateDir, "payments.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	values := map[string]string{"number": "0007", "memo": "Rent", "name": "Ann", "email": "ann@example.com",
		"zip": "02134", "bank_routing": "011000015", "bank_account": "0001234567"}
	hdr, _ := f.GetRows(sheet.TemplateSheet)
	for i, h := range hdr[0] {
		cell, _ := excelize.CoordinatesToCellName(i+1, 2)
		switch {
		case h == "amount":
			err = f.SetCellDefault(sheet.TemplateSheet, cell, "1086.3")
		case values[h] != "":
			err = f.SetCellStr(sheet.TemplateSheet, cell, values[h])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	w := open(t, buf.Bytes(), sheet.Options{})
	if k, _ := sourcefile.DetectSource(w.Records(), opts()); k != payment.KindPayments {
		t.Fatalf("kind %v", k)
	}
	rows, findings, err := payments(t, buf.Bytes(), sheet.Options{})
	if err != nil || len(findings) != 0 || len(rows) != 1 {
		t.Fatalf("err %v findings %v rows %v", err, findings, rows)
	}
	p := rows[0]
	if p.Number != "0007" || p.Zip != "02134" || p.BankRouting != "011000015" || p.BankAccount != "0001234567" || p.Amount != 108630 {
		t.Errorf("row %v, account %q", p, p.BankAccount)
	}
}
