package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path"
	"strings"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/ingest/sheet"
	"github.com/batchd/batchd/internal/ingest/sourcefile"
	"github.com/batchd/batchd/internal/payment"
)

// DefaultPattern is ingest.pattern's default: CSV files and XLSX
// workbooks.
const DefaultPattern = "*.csv, *.xlsx"

// SplitList splits a comma-separated setting or flag value, trimming
// spaces and dropping empty items: ingest.pattern's path.Match patterns
// ("*.csv, *.xlsx"; a single pattern, as older configurations have, is a
// list of one) and `batchd validate --ignore-columns` read alike.
func SplitList(pattern string) []string {
	var out []string
	for _, p := range strings.Split(pattern, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// MatchName reports whether an inbox file name matches one of the
// patterns of ingest.pattern. A spreadsheet's lock and owner files
// (".~lock.pay.xlsx#", "~$pay.xlsx"), written beside a workbook while it
// is open, never do.
func MatchName(pattern, name string) bool {
	if strings.HasPrefix(name, "~$") || strings.HasPrefix(name, ".~lock.") {
		return false
	}
	for _, p := range SplitList(pattern) {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// ole2 is how a legacy Excel 97-2003 workbook, and any password-protected
// workbook, starts (a Compound File).
var ole2 = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}

// IsWorkbook tells, by its name's extension and its first bytes, whether a
// file is to be read as an XLSX workbook. A file whose extension and
// content disagree, or a workbook batchd cannot read, is a
// *csvfile.FileError that names the fix. A name that is neither .csv nor
// .xlsx is read by its content.
func IsWorkbook(name string, head []byte) (bool, error) {
	ext := strings.ToLower(path.Ext(name))
	zip := sheet.IsXLSX(head)
	switch {
	case bytes.HasPrefix(head, ole2):
		return false, &csvfile.FileError{Reason: "the file is a legacy Excel 97-2003 (.xls) workbook, or a workbook " +
			"protected by a password; save it as \"Excel 2007-365 (.xlsx)\" without a password, or as CSV UTF-8"}
	case ext == ".csv" && zip:
		return false, &csvfile.FileError{Reason: "the file is named .csv but is an XLSX workbook (a zip archive); " +
			"rename it to .xlsx, or save the sheet as CSV UTF-8"}
	case ext == ".xlsx" && !zip:
		return false, &csvfile.FileError{Reason: "the file is named .xlsx but is not an XLSX workbook (it does not " +
			"start as a zip archive does); if it is a CSV file, rename it to .csv, else save it again as " +
			"\"Excel 2007-365 (.xlsx)\""}
	}
	return zip, nil
}

// Input is a payment, funding-source or verification file, opened for
// its kind to be told and its rows parsed, as a CSV file or as a sheet of
// an XLSX workbook; Close releases it.
type Input struct {
	f  *os.File
	br *bufio.Reader
	wb *sheet.Workbook
}

// OpenInput opens the file at local, named name (its extension counts;
// see IsWorkbook), with a workbook's sheet chosen and bounded by so. A
// file that cannot be read as either format is a *csvfile.FileError.
func OpenInput(local, name string, so sheet.Options) (*Input, error) {
	f, err := os.Open(local)
	if err != nil {
		return nil, err
	}
	in := &Input{f: f, br: bufio.NewReader(f)}
	head, err := in.br.Peek(8)
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, err
	}
	xlsx, err := IsWorkbook(name, head)
	if err == nil && xlsx {
		in.wb, err = sheet.Open(in.br, so)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return in, nil
}

// Close releases the file.
func (in *Input) Close() error {
	if in.wb != nil {
		in.wb.Close()
	}
	return in.f.Close()
}

// Workbook reports whether the file is an XLSX workbook.
func (in *Input) Workbook() bool { return in.wb != nil }

// Kind tells the file's kind by its header row (sourcefile.Detect). The
// Input is then used up: open it again to parse it.
func (in *Input) Kind(opts csvfile.Options) (payment.BatchKind, error) {
	if in.wb != nil {
		return sourcefile.DetectSource(in.wb.Records(), opts)
	}
	return sourcefile.Detect(in.br, opts)
}

// Records reads the file's rows as they are, header first: an approvals
// file's (see approvals.go).
func (in *Input) Records(opts csvfile.Options) (csvfile.Source, error) {
	if in.wb != nil {
		return in.wb.Records(), nil
	}
	return csvfile.NewRecords(in.br, opts)
}

// Payments parses a payment file (csvfile.Parse, or ParseSource for a
// sheet).
func (in *Input) Payments(opts csvfile.Options, onRow func(csvfile.Payment) error, onFinding func(csvfile.Finding) error) (csvfile.Summary, error) {
	if in.wb != nil {
		return csvfile.ParseSource(in.wb.Records(), opts, onRow, onFinding)
	}
	return csvfile.Parse(in.br, opts, onRow, onFinding)
}

// Sources parses a funding-source or verification file
// (sourcefile.Parse, or ParseSource for a sheet).
func (in *Input) Sources(kind payment.BatchKind, opts csvfile.Options, onRow func(sourcefile.Row) error,
	onFinding func(csvfile.Finding) error) (csvfile.Summary, error) {
	if in.wb != nil {
		return sourcefile.ParseSource(in.wb.Records(), kind, opts, onRow, onFinding)
	}
	return sourcefile.Parse(in.br, kind, opts, onRow, onFinding)
}
