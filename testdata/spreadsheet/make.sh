#!/bin/sh
# make.sh writes the payment files of this folder the way a finance user's
# spreadsheet writes them: it writes two source files as a payroll or ERP
# system exports them, then has LibreOffice Calc (headless) open them and
# save them again. The files LibreOffice wrote are committed beside this
# script, so tests and CI only read them; nothing installs LibreOffice there.
#
# Made with: LibreOffice 7.4.7.2 40(Build:2), Debian 12 package
# libreoffice-calc-nogui 4:7.4.7-1+deb12u14
#   apt-get install --no-install-recommends libreoffice-calc-nogui
# Run:  sh testdata/spreadsheet/make.sh      (from anywhere; writes here)
#
# Every conversion is one soffice command with a fresh user profile (so no
# setting of the machine's own LibreOffice leaks in), an import filter
# (--infilter, the dialog "Text Import") and an export filter (--convert-to).
# CSV filter options are LibreOffice's "CSV Filter Options" tokens:
#   1 field separator (ASCII: 44 ",", 59 ";", 9 tab)
#   2 text delimiter (34 '"')
#   3 character set (76 = UTF-8)
#   4 first line to read (import; 1)
#   5 column formats (import): column/format pairs, 1 = Standard (numbers
#     detected: what a double-click or a default import does), 2 = Text.
#     Empty: every column Standard.
#   6 language (0 = the user interface's: en-US here)
#   7 import: quoted field as text; export: quote all text cells
#   8 export: save cell contents as shown (the dialog's default, true)
# The export options are spelled out to the dialog's defaults (quote all
# text cells off, contents as shown on): with only four tokens, LibreOffice
# 7.4's headless export quotes every text cell, which the dialog does not.
#
# The files, and what each shows:
#
# source.csv            The system export: accounts 0001234567, 0987654321
#                       and 4400123456 (two with leading zeros), amounts
#                       with two decimals (1086.30, 2500.00, 312.45),
#                       routing number 999900001 and ZIP codes without a
#                       leading zero, check numbers 10001-10003. Written by
#                       this script, not by LibreOffice.
# resaved.csv           source.csv opened with the default import (every
#                       column Standard, numbers detected) and saved back as
#                       CSV with the default options:
#                         --infilter='Text - txt - csv (StarCalc):44,34,76,1'
#                         --convert-to 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true'
#                       Accounts lost their zeros (1234567, 987654321), the
#                       amounts their trailing zeros (1086.3, 2500); the
#                       routing numbers and ZIP codes show no damage, so
#                       only the amounts give the round trip away.
# text-columns.xlsx     source.csv imported with number, bank_account,
#                       bank_routing and zip as Text (token 5
#                       1/2/3/2/4/2/11/2), amount Standard, saved as XLSX:
#                         --convert-to 'xlsx:Calc MS Excel 2007 XML'
#                       The identifier cells are text (t="s", shared
#                       strings) holding 0001234567 exactly; the amounts
#                       are numbers (1086.3 stored, shown as 1086.3).
# numeric-account.xlsx  The same but bank_account left Standard (token 5
#                       1/2/4/2/11/2): the account cells C2:C4 are numbers
#                       (1234567, 987654321, 4400123456), the zeros already
#                       lost; every other identifier cell is text.
# semicolon-quoted.csv  text-columns' data (identifiers as Text) saved as
#                       CSV with semicolons and "quote all text cells":
#                         --convert-to 'csv:Text - txt - csv (StarCalc):59,34,76,1,,0,true,true'
#                       Every text cell is quoted, numbers are not.
# tab.csv               The same with tabs:
#                         --convert-to 'csv:Text - txt - csv (StarCalc):9,34,76,1,,0,true,true'
# funding-source.csv    A funding-source export: account numbers
#                       0001234567, 0987654321; routing 999900001.
# funding-resaved.csv   funding-source.csv through the default round trip
#                       of resaved.csv: the accounts lost their zeros
#                       (1234567, 987654321) and nothing else changed. A
#                       funding-source file has no amounts, so nothing in
#                       it gives the round trip away: a limit of any check
#                       that reads only the file.
#
# Check the XLSX cell types by hand with
#   unzip -p text-columns.xlsx xl/worksheets/sheet1.xml
# (t="s": a text cell, its value an index into xl/sharedStrings.xml;
# t="n": a number, its value in <v>, as LibreOffice 7.4 writes it).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

csv='Text - txt - csv (StarCalc)'
profile="-env:UserInstallation=file://$work/profile"

cat >"$here/source.csv" <<'EOF'
number,name,bank_account,bank_routing,amount,memo,email,address,city,state,zip
10001,Ann Smith,0001234567,999900001,1086.30,"Invoice 1001, March",ann@example.com,1 Main St,Springfield,IL,62701
10002,Bob Jones,0987654321,999900001,2500.00,Consulting April,bob@example.com,200 Market St,San Francisco,CA,94105
10003,Carla Ruiz,4400123456,999900001,312.45,Office supplies,carla@example.com,5 Congress Ave,Austin,TX,73301
EOF

cat >"$here/funding-source.csv" <<'EOF'
first_name,last_name,email,routing_number,account_number,account_type,nickname
Ann,Smith,ann@example.com,999900001,0001234567,checking,Ann checking
Bob,Jones,bob@example.com,999900001,0987654321,savings,Bob savings
EOF

# convert IN INFILTER OUTFILTER NAME: soffice reads IN with INFILTER and
# writes it with OUTFILTER to this folder as NAME.
convert() {
	out="$work/out-$4"
	mkdir -p "$out"
	soffice "$profile" --headless --infilter="$2" --convert-to "$3" --outdir "$out" "$1" >"$work/log" 2>&1 ||
		{ cat "$work/log" >&2; exit 1; }
	mv "$out"/* "$here/$4"
}

convert "$here/source.csv" "$csv:44,34,76,1" "csv:$csv:44,34,76,1,,0,false,true" resaved.csv
convert "$here/source.csv" "$csv:44,34,76,1,1/2/3/2/4/2/11/2" "xlsx:Calc MS Excel 2007 XML" text-columns.xlsx
convert "$here/source.csv" "$csv:44,34,76,1,1/2/4/2/11/2" "xlsx:Calc MS Excel 2007 XML" numeric-account.xlsx
convert "$here/source.csv" "$csv:44,34,76,1,1/2/3/2/4/2/11/2" "csv:$csv:59,34,76,1,,0,true,true" semicolon-quoted.csv
convert "$here/source.csv" "$csv:44,34,76,1,1/2/3/2/4/2/11/2" "csv:$csv:9,34,76,1,,0,true,true" tab.csv
convert "$here/funding-source.csv" "$csv:44,34,76,1" "csv:$csv:44,34,76,1,,0,false,true" funding-resaved.csv
