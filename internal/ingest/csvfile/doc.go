// Package csvfile reads and validates batchd payment files: CSV files with
// one eCheck per row. It is the pure part of ingest; it knows nothing of
// SFTP or the state store.
//
// # File format
//
// A payment file is UTF-8 text (a byte order mark is allowed), with CRLF or
// LF line ends and RFC 4180 quoting: a field in double quotes may hold commas,
// line breaks and doubled quotes (""). Cells are separated by commas, or by
// Options.Delimiter (";" or a tab, ingest.delimiter); a header row that
// another separator would split into column names is refused with a message
// naming that separator and the setting that reads it. The first non-blank row is the header.
// Its cells are the field names of a check (spec 2.1, payment.Fields),
// matched without regard to case or surrounding spaces, in any order:
//
//	number amount memo name email authorization_date label phone address city
//	state zip bank_account bank_routing token store type_info recurring
//	recurring_cycle recurring_start_date recurring_installments
//	verify_before_save fund_confirmation
//
// The header must hold amount, memo, name, email or address, and
// bank_routing with bank_account or token with store; other columns may be
// left out. A column appearing twice, or a column that is not a field and is
// not listed in Options.IgnoreColumns, rejects the file, so that a misspelt
// column (ammount) can never drop data silently. A header cell that is empty
// is allowed (spreadsheets add them) as long as the column holds no values.
//
// The whole file is rejected (a *FileError) when it is empty, has no rows
// after the header, is not text (holds NUL bytes), is UTF-16 or invalid
// UTF-8 (shown as Windows-1252 would read it, the likely cause), has a
// quoting error, or has a record longer than Options.MaxRecordBytes; and,
// once every row has been judged, when a spreadsheet dropped the leading
// zeros of a routing number or ZIP code (FileError.Damaged): the file's
// account numbers may have lost theirs too. Everything else is judged per
// row.
//
// # Rows
//
// A row in which every cell is empty or white space is skipped wherever it
// appears. Every other row either becomes a Payment or gets one or more
// Findings, each naming the physical line where the row starts (after a
// quoted field spanning lines, too), the column and the reason. A row with a
// different number of fields than the header gets a single finding, because
// its columns cannot be trusted.
//
// Cells are trimmed of surrounding white space before they are judged and
// stored. Lengths count characters, not bytes. Control characters are
// refused; line breaks and tabs are allowed in memo and address only. A
// leading apostrophe (a spreadsheet's "keep as text" mark) is not removed: a
// digit column holding one is refused with a hint.
//
//   - amount, memo, name: required. amount is a plain decimal greater than 0
//     with at most two decimals (money.Parse): no sign, currency symbol,
//     thousands separator or decimal comma.
//   - email: required unless address is given; at most 80 characters with one
//     @, text on both sides, a dot in the domain and no spaces.
//   - address given: city, state and zip are required. state is 2 letters of
//     either case, stored upper case; zip is 5 to 10 characters.
//   - memo, label, address, type_info, store: at most 128 characters; name
//     80, city 40, phone 20.
//   - number: 1 to 10 digits, unique within the file (leading zeros ignored
//     when comparing).
//   - bank_routing and bank_account together, or token and store together,
//     never both pairs. bank_routing is 9 digits passing the ABA checksum
//     (weights 3, 7, 1) with an assigned first pair; the sandbox routing
//     number 999900001 fails the checksum and is accepted only with
//     Options.TestMode. bank_account is 4 to 17 digits; token 36 characters.
//   - authorization_date: empty (the API uses the creation day) or
//     YYYY-MM-DD, at most 30 days before Options.RunDate and not after it.
//   - recurring, verify_before_save, fund_confirmation: 1/0, true/false or
//     yes/no in any case; empty is false.
//   - recurring true: recurring_cycle (day, week, bi-weekly, month, any case)
//     and recurring_installments (0 or more; 0 is indefinitely, and must be
//     written) are required; recurring_start_date is empty or NULL (start on
//     creation) or a date not before the run date. recurring false: those
//     three are empty (NULL allowed for the start date).
//   - Two rows that would create the same payment (same routing and account,
//     or token and store; same amount; same check number, or without a number
//     the same authorization_date) are refused: the later row gets a finding
//     naming the earlier line. A check number used twice is refused the same
//     way. Rows with other findings count as earlier rows too.
//
// # Spreadsheet damage
//
// spreadsheet.go holds the checks for what exports do to a sheet, each with
// the fix in a finance person's words: a routing number of 7 or 8 digits
// that is valid with zeros in front, and a ZIP code of 3 or 4 digits, are
// refused with their rows and refuse the whole file (above); an account of
// 16 or 17 digits whose digits past the 15th are all 0 was rounded to a
// spreadsheet's 15 significant digits and is refused; an amount with a
// decimal comma is refused with "amounts must use a dot". A "?" where a
// letter should be (any "?" in name; between letters, starting a word, or a
// run, in memo, address and city) is a Warning: the row stays valid, and
// the finding reaches onFinding before the row reaches onRow.
//
// A file that a spreadsheet re-saved is refused whole (FileError.Damaged)
// by one rule, roundTrip.heldForRoundTrip in roundtrip.go: the file shows
// a spreadsheet's hand (an amount with one decimal, whole amounts beside
// amounts with decimals, a number in scientific notation, a date like
// 3/2/2026) and its bank_account or number values, those that are digits
// not in quotes, vary in length with none starting with 0, as account
// numbers that lost their leading zeros do. Whether a cell was quoted is
// not kept by encoding/csv: quotes.go notes where quoted fields start, as
// the bytes are read. The rule reads CSV files only (Parse), after every
// row has been judged and reported.
//
// A semicolon or tab export whose header cells are all quoted cannot be
// read with commas at all; the refusal names the separator that reads it.
//
// Every Finding has a Value. Findings never hold a full account number,
// routing number or token: Value masks them with redact (a routing cell may
// be an account number in the wrong column).
//
// # Shared with other kinds of file
//
// internal/ingest/sourcefile reads the onboarding files (funding sources,
// verifications) with the same robustness and the same rules: Records is
// the reading described above (byte order mark, UTF-16, NUL bytes, invalid
// UTF-8, quoting, record size, blank rows, physical lines, the delimiter
// and its wrong-separator message), which Parse itself uses; cells.go
// exports the single-cell rules both kinds of file apply (CheckRouting,
// CheckAccount, CheckEmail, CheckText, LostLetters) and the masking of
// findings (MaskAccount, Clip), so that each lives in one place.
//
// # Decoding with gocsv
//
// Parse reads and checks the header with encoding/csv itself and hands gocsv
// (UnmarshalDecoderToCallback) a decoder that yields a header of canonical
// names and records in that column order; ignored columns never reach gocsv.
// It sets no gocsv global. gocsv's callback API decodes on its own goroutine,
// one record ahead of the callback, so the physical line of each record
// travels inside the record as an extra column instead of being read from
// the reader's current position. The columns are the fields of a payment
// (payment.Fields), which no struct lists with tags: gocsv hands each cell
// to the record's UnmarshalCSVWithFields (gocsv.TypeUnmarshalCSVWithFields)
// in column order. Parse therefore depends on no gocsv global (TagName,
// FailIfUnmatchedStructTags, the header normalizer), and a record of
// another length than the header stops it rather than misplace data.
package csvfile
