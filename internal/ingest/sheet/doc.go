// Package sheet reads a sheet of an XLSX workbook as the records of a
// payment, funding-source or verification file: a csvfile.Source, which
// csvfile.ParseSource and sourcefile.ParseSource validate with the very
// rules of a CSV file. Only how a cell becomes text is decided here:
//
//   - A text cell (a shared or inline string, or a formula's text result)
//     is read exactly as stored: leading zeros, spaces and all.
//   - A number cell in an identifier column (csvfile.IdentifierCell: an
//     account, a routing number, a check number, a ZIP code, a user id)
//     has already lost any leading zero, so the whole file is refused
//     (csvfile.FileError.Damaged), naming the cells: the fix is to format
//     the column as Text and type the numbers again. The other rows of such
//     a file cannot be told apart from rows whose number happened to have
//     no zero to lose, so none is paid, as with a CSV whose routing numbers
//     lost their zeros.
//   - A number cell in an amount column is read to the exact cent from the
//     decimal text the file stores (<v>1086.3</v> is 1086.30), never
//     through float64: money.ParseWire, which also reads a binary float's
//     noise such as 0.29000000000000004 as the cent it stands for.
//   - A number cell with a date format in a date column is the date of its
//     serial number (the 1900 date system, with its phantom 29 February
//     1900, or the 1904 system when the workbook says so): YYYY-MM-DD.
//   - A number cell in any other column is read as the sheet shows it.
//   - A formula is read by its cached value; a formula without one (the
//     file was written by a program that does not calculate) and an error
//     value such as #N/A refuse the file, naming the cell. Text that starts
//     with "=" is only text.
//
// Rows are numbered as the sheet numbers them, and a finding names its
// cell ("B7"). Blank rows are skipped, trailing ones included.
//
// A workbook is read whole into memory, bounded: the file by
// Options.MaxBytes, its unzipped parts by Options.MaxUnzipBytes (a zip
// bomb is refused unread), and the sheet by Options.MaxRows and
// Options.MaxColumns. A file that is not an XLSX workbook, or is
// malformed, is a *csvfile.FileError that says why; reading never panics.
package sheet
