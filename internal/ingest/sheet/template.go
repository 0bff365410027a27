package sheet

import (
	"io"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/ingest/sourcefile"
	"github.com/batchd/batchd/internal/payment"
)

// TemplateKinds name the kinds of file a template is written for, as
// `batchd template KIND` takes them: every kind of the registry
// (payment.Kinds), by its name.
var TemplateKinds = func() map[string]payment.BatchKind {
	m := map[string]payment.BatchKind{}
	for _, k := range payment.Kinds() {
		m[k.Kind.String()] = k.Kind
	}
	return m
}()

// paymentTemplate are the payment columns a template carries: those most
// files need, the required ones first, then the account holder's names
// that tokenized accounts use (optional: without them the name is
// split). A file may have the others too.
var paymentTemplate = []string{"number", "amount", "memo", "name", "email", "authorization_date", "phone",
	"address", "city", "state", "zip", "bank_routing", "bank_account", "label",
	csvfile.FirstNameColumn, csvfile.LastNameColumn}

// TemplateColumns are the header of kind's template.
func TemplateColumns(kind payment.BatchKind) []string {
	if kind.Payments() {
		return paymentTemplate
	}
	return sourcefile.Columns(kind)
}

// cellKindOf is the csvfile.CellKind of a column of kind's file. A
// column of an applied kind that is a payment field (an edit file's new
// amount) is typed as a payment file's.
func cellKindOf(kind payment.BatchKind, name string) csvfile.CellKind {
	if info, _ := kind.Info(); kind.Payments() || info.Applied && payment.FieldIndex(name) >= 0 {
		return csvfile.PaymentCellKind(name)
	}
	return sourcefile.CellKindOf(name)
}

// The number formats of a template's columns, by csvfile.CellKind.
const (
	TextFormat   = 49 // "@": what is typed stays text, leading zeros and all
	AmountFormat = 2  // "0.00"
	DateFormat   = "yyyy-mm-dd"
)

// TemplateSheet is the name of a template's sheet.
const TemplateSheet = "rows"

// WriteTemplate writes an XLSX workbook for kind's rows to w: a bold
// header row of kind's columns (TemplateColumns), frozen, and below it
// whole columns formatted for what they hold (the column's style, with no
// empty cells below the header: a program that appends rows after the
// last one writes at row 2, not after a thousand styled blanks):
// identifier columns (accounts,
// routing numbers, check numbers, ZIP codes, ids; csvfile.IdentifierCell)
// as Text, so that a typed 0012 stays 0012; amounts as 0.00; dates as
// yyyy-mm-dd; everything else as Text.
func WriteTemplate(w io.Writer, kind payment.BatchKind) error {
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName("Sheet1", TemplateSheet); err != nil {
		return err
	}
	styles, err := templateStyles(f)
	if err != nil {
		return err
	}
	for i, name := range TemplateColumns(kind) {
		col, _ := excelize.ColumnNumberToName(i + 1)
		head := col + "1"
		if err := f.SetCellStr(TemplateSheet, head, name); err != nil {
			return err
		}
		if err := f.SetCellStyle(TemplateSheet, head, head, styles.header); err != nil {
			return err
		}
		st := styles.byKind[cellKindOf(kind, name)]
		if err := f.SetColStyle(TemplateSheet, col, st); err != nil {
			return err
		}
		if err := f.SetColWidth(TemplateSheet, col, col, float64(max(12, len(name)+2))); err != nil {
			return err
		}
	}
	if err := f.SetPanes(TemplateSheet, &excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	_, err = f.WriteTo(w)
	return err
}

// templateStyle are a template's cell styles.
type templateStyle struct {
	header int
	byKind map[csvfile.CellKind]int
}

func templateStyles(f *excelize.File) (templateStyle, error) {
	s := templateStyle{byKind: map[csvfile.CellKind]int{}}
	var err error
	if s.header, err = f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}, NumFmt: TextFormat}); err != nil {
		return s, err
	}
	date := DateFormat
	for _, d := range []struct { // in this order, so that every write numbers the styles alike
		kind  csvfile.CellKind
		style *excelize.Style
	}{
		{csvfile.TextCell, &excelize.Style{NumFmt: TextFormat}},
		{csvfile.IdentifierCell, &excelize.Style{NumFmt: TextFormat}},
		{csvfile.AmountCell, &excelize.Style{NumFmt: AmountFormat}},
		{csvfile.DateCell, &excelize.Style{CustomNumFmt: &date}},
	} {
		if s.byKind[d.kind], err = f.NewStyle(d.style); err != nil {
			return s, err
		}
	}
	return s, nil
}

// TemplateKind is the kind a name typed on the command line means, and
// that kind's name as TemplateKinds spells it: the plural ("payments") or
// the singular ("payment"), as a person types either.
func TemplateKind(name string) (kind payment.BatchKind, canonical string, ok bool) {
	for _, n := range []string{name, name + "s"} {
		if k, ok := TemplateKinds[n]; ok {
			return k, n, true
		}
	}
	return kind, "", false
}

// TemplateKindNames lists the kinds in the registry's order, for
// messages: "payments, funding-sources, verifications, …".
func TemplateKindNames() string {
	var names []string
	for _, k := range payment.Kinds() {
		names = append(names, k.Kind.String())
	}
	return strings.Join(names, ", ")
}
