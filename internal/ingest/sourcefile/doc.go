// Package sourcefile reads and validates the two onboarding files of the
// ACH API (internal/funding): funding-source files, whose rows link
// customers' bank accounts, and verification files, whose rows complete
// micro-deposit verifications. Like csvfile, which reads payment files, it
// is pure: it knows nothing of SFTP or the ledger.
//
// # Telling the kind
//
// Ingest reads every file from the same inbox and tells its kind by its
// header row (Detect, KindOf): the kind that most of the header's cells
// name wins. Email and phone, which payment files have too, count for
// neither; a tie, and a header that names no column of the new kinds, is
// a payment file's, whose parser (csvfile) explains what is wrong.
//
// # Reading
//
// The file is read as csvfile reads a payment file, through
// csvfile.Records: UTF-8 (a byte order mark is allowed; UTF-16, NUL bytes
// and invalid UTF-8 refuse the file, the last explained as Windows-1252),
// RFC 4180 quoting, cells separated by commas or Options.Delimiter (a
// header that another delimiter splits into known columns says so), a
// bound on a record's size, blank rows skipped wherever they appear, and
// findings (csvfile.Finding) naming the physical line where the row
// starts, the column, the value and the message. Cells are trimmed. A row
// with another number of fields than the header gets one finding. A cell
// in a column without a name refuses its row. The options are
// csvfile.Options; Options.IgnoreColumns never hides a column of the
// file's own kind.
//
// # Header
//
// Column names are the API's field names (spec §2.4–2.5, §4.2), in any
// order and case, snake_case or camelCase (first_name, firstName,
// FIRST_NAME). A column appearing twice, or a column of no kind that is
// not ignored, refuses the file.
//
// A funding-source file has user_id, or first_name, last_name and email
// (phone optional), or both sets; and routing_number and account_number
// (account_type, nickname and method optional), or processor_token, or
// both sets. A verification file has funding_source_id (or source_id),
// amount1 and amount2.
//
// # Funding-source rows
//
// A row becomes a funding.Request whose Method says how it links the
// account:
//
//   - The customer: user_id (one word, at most 64 characters) names an
//     existing customer; without it first_name, last_name (at most 128
//     characters each) and email (an address of at most 80 characters)
//     are required and phone (at most 20) is optional, and the customer is
//     created, or found by email. A row with user_id leaves them empty.
//   - The account, by its numbers: routing_number (9 digits passing the
//     ABA checksum; the sandbox's 999900001 only in test mode) and
//     account_number (4 to 17 digits), the rules of payment files
//     (csvfile.CheckRouting, csvfile.CheckAccount); account_type checking
//     or savings, any case; nickname at most 128 characters; method
//     on-demand (the default) or micro-deposits (funding.ParseMethod). An
//     on-demand row without account_type is checking; a micro-deposits row
//     needs it. A micro-deposits row in a file read on or after
//     funding.DeprecationDate (Options.RunDate) is refused with the fix:
//     on-demand, or a processor token issued for processor "svcach".
//   - Or by a processor token: processor_token (one word, at most 256
//     characters; method empty or processor, account_type and nickname
//     empty). The token is a secret: no finding, message or log line
//     shows it (redact.Secret shows its length).
//   - One row fills one set. A file may mix account rows and token rows.
//
// Account and routing numbers in findings are masked as in payment files
// (csvfile.MaskAccount). A routing number that lost its leading zeros in a
// spreadsheet refuses its row and, once every row has been reported, the
// whole file (csvfile.FileError.Damaged), because its account numbers may
// have lost theirs too; an account number rounded to 15 digits, and a
// number in scientific notation, are refused with the fix. A "?" where a
// letter should be, in a name or nickname, is a warning.
//
// # Verification rows
//
// funding_source_id is the id of the source (36 characters, 8-4-4-4-12
// hexadecimal). amount1 and amount2 are the two micro-deposits as the
// customer reads them on the bank statement: dollars, 0.01 to 0.99, with
// at most two decimals and a dot (0.07), read exactly by money.Parse into
// cents. A whole number such as 7 is refused with "write 0.07 for 7
// cents". The row's Method is funding.Verify.
//
// # Duplicates
//
// A later row is refused when it repeats an earlier row's account (routing
// and account number) for the same customer (user_id, or email) or for
// another (an account belongs to one customer at a time), its processor
// token, or its funding_source_id; the finding names the earlier line.
// Rows of one email with other names get a warning: they share one
// customer, created with the first row's names.
package sourcefile
