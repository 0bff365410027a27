package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/sandbox"
)

// csvTestdata is the path of a file in testdata/csv.
func csvTestdata(name string) string { return filepath.Join("..", "..", "testdata", "csv", name) }

// runBinary runs the built batchd with args and extra environment, and
// returns its exit code, stdout and stderr.
func runBinary(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("run batchd: %v", err)
	return 0, "", ""
}

func mustContainAll(t *testing.T, what, text string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(text, s) {
			t.Errorf("%s lacks %q:\n%s", what, s, text)
		}
	}
}

// TestValidateSpreadsheetDamageProcess runs `batchd validate` as a process on
// two spreadsheet exports: a semicolon file, and a file whose number columns
// lost their leading zeros.
func TestValidateSpreadsheetDamageProcess(t *testing.T) {
	t.Run("semicolons", func(t *testing.T) {
		code, out, errOut := runBinary(t, nil, "validate", "--test-mode", csvTestdata("semicolons.csv"))
		if code != exitFailure {
			t.Fatalf("exit %d, want %d\n%s%s", code, exitFailure, out, errOut)
		}
		mustContainAll(t, "stdout", out,
			`line 1: this file uses semicolons between cells; save it as CSV with commas, or set ingest.delimiter: ";"`)
		mustContainAll(t, "stderr", errOut, "would be rejected")
		if strings.Contains(out, "unknown column") || strings.Contains(out, "ignore_columns") {
			t.Errorf("the old, wrong advice:\n%s", out)
		}
	})
	t.Run("lost leading zeros", func(t *testing.T) {
		code, out, errOut := runBinary(t, nil, "validate", csvTestdata("lost_zeros.csv"))
		if code != exitFailure {
			t.Fatalf("exit %d, want %d\n%s%s", code, exitFailure, out, errOut)
		}
		mustContainAll(t, "stdout", out,
			`line 2, column zip: has 4 digits instead of 5: a spreadsheet dropped the leading zero of this ZIP code`,
			`(value "2134")`, `(value "****0015")`,
			"Account numbers in the same file may have lost their leading zeros too",
			"every row of this file is refused",
			"format the bank_routing, bank_account and zip columns as text",
			"4 rows, every one refused")
		mustContainAll(t, "stderr", errOut, "rejected as a whole, every row, whatever ingest.on_invalid says")
		for _, secret := range []string{"11000015", "21200339", "4567890123", "5550001234"} {
			if strings.Contains(out+errOut, secret) {
				t.Errorf("output shows %s unmasked", secret)
			}
		}
	})
}

// TestValidateUsesScheduleTimezone: with --config, the run date is the
// day in schedule.timezone, not in $TZ. The run is placed at one instant
// (--date with an RFC 3339 time, 2026-03-02 05:00 UTC): in
// Pacific/Kiritimati (UTC+14) it is already 2 March, in Etc/GMT+12
// (UTC-12) still 1 March, so an authorization_date of 2 March is in the
// future only in the latter.
func TestValidateUsesScheduleTimezone(t *testing.T) {
	const at, day = "2026-03-02T05:00:00Z", "2026-03-02"
	dir := t.TempDir()
	file := filepath.Join(dir, "pay.csv")
	data := "amount,memo,name,email,bank_routing,bank_account,authorization_date\n" +
		"10.00,Invoice 1,Ann Smith,ann@example.com,999900001,1111000016," + day + "\n"
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	config := func(zone string) string {
		return writeConfig(t, t.TempDir(), fmt.Sprintf(
			"state_dir: %s\napi: {base_url: \"http://127.0.0.1:1\"}\nschedule: {timezone: %s}\n", dir, zone))
	}
	key := "BATCHD_API_KEY=sk_test_x1234567890"

	// $TZ says UTC-12, the configuration UTC+14: the configuration wins.
	code, out, errOut := runBinary(t, []string{key, "TZ=Etc/GMT+12"}, "validate", "--date", at, "--config", config("Pacific/Kiritimati"), file)
	if code != exitOK || !strings.Contains(out, "1 rows, 1 valid, 0 invalid") {
		t.Fatalf("schedule.timezone Pacific/Kiritimati, TZ=Etc/GMT+12: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runBinary(t, []string{key, "TZ=Pacific/Kiritimati"}, "validate", "--date", at, "--config", config("Etc/GMT+12"), file)
	if code != exitFailure || !strings.Contains(out, "must not be in the future") || !strings.Contains(out, `(value "`+day+`")`) {
		t.Fatalf("schedule.timezone Etc/GMT+12, TZ=Pacific/Kiritimati: exit %d\n%s%s", code, out, errOut)
	}
	// Without a configuration, $TZ decides.
	code, out, errOut = runBinary(t, []string{key, "TZ=Etc/GMT+12"}, "validate", "--date", at, "--test-mode", file)
	if code != exitFailure || !strings.Contains(out, "must not be in the future") {
		t.Fatalf("no configuration, TZ=Etc/GMT+12: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runBinary(t, []string{key, "TZ=Pacific/Kiritimati"}, "validate", "--date", at, "--test-mode", file)
	if code != exitOK {
		t.Fatalf("no configuration, TZ=Pacific/Kiritimati: exit %d\n%s%s", code, out, errOut)
	}
	// A --date that is neither a day nor an RFC 3339 time is a usage error
	// that shows both forms.
	code, _, errOut = runBinary(t, []string{key}, "validate", "--date", "2026-03-02 05:00", "--test-mode", file)
	if code != exitUsage || !strings.Contains(errOut, "want YYYY-MM-DD or an RFC 3339 time") || !strings.Contains(errOut, `"2026-03-02 05:00"`) {
		t.Fatalf("bad --date: exit %d\n%s", code, errOut)
	}
}

// TestValidateConfigDelimiter: --config brings ingest.delimiter (and
// api.mode: test, the default, for the sandbox routing number).
func TestValidateConfigDelimiter(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, fmt.Sprintf(
		"state_dir: %s\napi: {base_url: \"http://127.0.0.1:1\"}\ningest: {delimiter: \";\"}\n", dir))
	code, out, errOut := runMain(t, map[string]string{"BATCHD_API_KEY": "sk_test_x1234567890"},
		"validate", "--config", cfg, csvTestdata("semicolons.csv"))
	if code != exitFailure {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	mustContainAll(t, "stdout", out, "4 rows, 2 valid, 2 invalid",
		`line 3, column amount: amounts must use a dot for decimals: write 1234.56, not 1234,56`, `(value "1234,56")`)
}

func TestValidateSpreadsheetFindings(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want []string
		not  []string
	}{
		{"question marks are warnings", []string{"--test-mode", csvTestdata("question_marks.csv")}, exitOK,
			[]string{`line 2, column name: warning: has a "?" where a letter should be`, `(value "?ukasz Nowak")`,
				`save the sheet as "CSV UTF-8"`, "6 rows, 6 valid, 0 invalid, 5 warnings"}, nil},
		{"rounded accounts", []string{"--test-mode", csvTestdata("rounded_accounts.csv")}, exitFailure,
			[]string{"line 2, column bank_account: looks rounded by a spreadsheet", `(value "****4600")`,
				"Format the bank_account column as text before typing or pasting, and re-enter the account numbers"},
			[]string{"12345678901234600", "9876543210987650"}},
		{"semicolons with --delimiter", []string{"--test-mode", "--delimiter", ";", csvTestdata("semicolons.csv")}, exitFailure,
			[]string{"amounts must use a dot for decimals", `(value "1234,56")`, "4 rows, 2 valid, 2 invalid"}, nil},
		{"tabs with --delimiter", []string{"--test-mode", "--delimiter", "tab", csvTestdata("tabs.csv")}, exitOK,
			[]string{"2 rows, 2 valid, 0 invalid"}, nil},
		{"tabs without", []string{"--test-mode", csvTestdata("tabs.csv")}, exitFailure,
			[]string{`this file uses tabs between cells; save it as CSV with commas, or set ingest.delimiter: "\t"`}, nil},
		{"windows-1252", []string{"--test-mode", csvTestdata("windows1252.csv")}, exitFailure,
			[]string{"line 3, column memo: invalid UTF-8 text", "Windows-1252", `"Beratung – Juni"`, "save the file as CSV UTF-8"}, nil},
		{"invalid rows show values", []string{"--test-mode", csvTestdata("invalid_rows.csv")}, exitFailure,
			[]string{`line 4, column amount: must not contain a comma`, `(value "1,234.56")`, "line 9, column memo: is required (the cell is empty)"},
			[]string{"1111000016"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runMain(t, nil, append([]string{"validate"}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, out, errOut)
			}
			mustContainAll(t, "stdout", out, c.want...)
			for _, s := range c.not {
				if strings.Contains(out+errOut, s) {
					t.Errorf("output shows %s", s)
				}
			}
		})
	}
	if code, _, errOut := runMain(t, nil, "validate", "--delimiter", "|", csvTestdata("valid.csv")); code != exitUsage ||
		!strings.Contains(errOut, "--delimiter") {
		t.Errorf("--delimiter |: exit %d, %s", code, errOut)
	}
}

// TestValidateOnboardingFiles: validate tells a funding-source or a
// verification file by its header and judges it as ingest would; the run
// date decides whether micro-deposits are deprecated, and no token or
// account number is shown.
func TestValidateOnboardingFiles(t *testing.T) {
	root := func(name string) string { return filepath.Join("..", "..", "testdata", name) }
	dir := t.TempDir()
	micro := filepath.Join(dir, "micro.csv")
	if err := os.WriteFile(micro, []byte("first_name,last_name,email,routing_number,account_number,account_type,method\n"+
		"Ann,Smith,ann@example.com,021000021,123456789,checking,micro-deposits\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		want []string
		not  []string
	}{
		{"funding sources", []string{"--test-mode", root("funding-sources.csv")}, exitOK,
			[]string{"funding-sources.csv: funding-sources file: 5 rows, 5 valid, 0 invalid"}, nil},
		{"verifications", []string{root("verifications.csv")}, exitOK,
			[]string{"verifications.csv: verifications file: 2 rows, 2 valid, 0 invalid"}, nil},
		{"funding-source errors", []string{"--test-mode", "--date", "2026-11-20", root("funding-sources-errors.csv")}, exitFailure,
			[]string{`line 3: same customer and account as line 2 (value "****0001")`,
				`line 6, column method: micro-deposit verification is deprecated for new bank accounts since 2026-06-08 (this file is read on 2026-11-20)`,
				`line 10, column processor_token: same processor_token as line 9: a token is exchanged once (value "…(35 chars)")`,
				"funding-sources file: 13 rows, 1 valid, 12 invalid"},
			[]string{"secret-token", "1111000001", "12345678901234500"}},
		{"verification errors", []string{root("verifications-errors.csv")}, exitFailure,
			[]string{`line 2, column amount1: must be a micro-deposit in dollars from 0.01 to 0.99, as on the bank statement: write 0.07 for 7 cents (value "7")`,
				"verifications file: 4 rows, 0 valid, 4 invalid"}, nil},
		{"micro-deposits before the deprecation", []string{"--date", "2026-06-07", micro}, exitOK,
			[]string{"funding-sources file: 1 rows, 1 valid, 0 invalid"}, nil},
		{"micro-deposits on the day", []string{"--date", "2026-06-08", micro}, exitFailure,
			[]string{`write on-demand to link the account by its numbers, or have the customer link it with the bank-linking provider and give the processor_token issued for processor "svcach"`},
			[]string{"123456789"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runMain(t, nil, append([]string{"validate"}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, out, errOut)
			}
			mustContainAll(t, "stdout", out, c.want...)
			for _, s := range c.not {
				if strings.Contains(out+errOut, s) {
					t.Errorf("output shows %s", s)
				}
			}
		})
	}
	bad := filepath.Join(dir, "links.csv")
	if err := os.WriteFile(bad, []byte("user_id,routing_number\nu1,999900001\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runMain(t, nil, "validate", bad)
	if code != exitFailure || !strings.Contains(errOut, "would be rejected: it cannot be read as a funding-source file") ||
		!strings.Contains(out, "header row of a funding-source file lacks required column routing_number and account_number, or processor_token") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

// TestValidateEachFindingOnce: a routing number that lost its leading zero
// is named once in validate's output, by its finding; the file-level
// verdict after it does not repeat the cell. A quoted semicolon export
// (written by LibreOffice) is refused naming the separator.
func TestValidateEachFindingOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pay.csv")
	data := "amount,memo,name,email,bank_routing,bank_account\n" +
		"10.00,Invoice 1,Ann Smith,ann@example.com,11000015,1234567\n" +
		"20.00,Invoice 2,Bob Jones,bob@example.com,121000358,987654321\n"
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runBinary(t, nil, "validate", file)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitFailure, out, errOut)
	}
	mustContainAll(t, "stdout", out, "line 2, column bank_routing: has 8 digits instead of 9", `(value "****0015")`,
		"every row of this file is refused", "2 rows, every one refused")
	for _, s := range []string{"****0015", "has 8 digits", "line 2"} {
		if n := strings.Count(out, s); n != 1 {
			t.Errorf("%q printed %d times, want once:\n%s", s, n, out)
		}
	}
	if strings.Contains(out+errOut, "11000015") {
		t.Errorf("routing number shown unmasked:\n%s%s", out, errOut)
	}

	code, out, errOut = runBinary(t, nil, "validate", "--test-mode",
		filepath.Join("..", "..", "testdata", "spreadsheet", "semicolon-quoted.csv"))
	if code != exitFailure || !strings.Contains(out, `this file uses semicolons between cells; save it as CSV with commas, or set ingest.delimiter: ";"`) {
		t.Fatalf("quoted semicolon export: exit %d\n%s%s", code, out, errOut)
	}
}

// TestValidateRoundTrip: the payment CSV LibreOffice 7.4 re-saved
// (testdata/spreadsheet/resaved.csv), which the row checks all pass, is
// refused whole, saying what gave it away and on which line, which
// column may have lost zeros, and the fix; the system's export passes.
func TestValidateRoundTrip(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "spreadsheet")
	code, out, errOut := runBinary(t, nil, "validate", "--test-mode", filepath.Join(dir, "resaved.csv"))
	if code != exitFailure {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitFailure, out, errOut)
	}
	mustContainAll(t, "stdout", out,
		"line 2, column amount: this file looks saved by a spreadsheet: amount 1086.3 has one decimal; "+
			"a payroll or ERP export writes two (1086.30), a spreadsheet drops the trailing zero",
		"the bank_account column holds numbers of 7 to 10 digits, not in quotes and none starting with 0",
		"Re-export the file from the system that made it", "formatted as Text",
		"3 rows, every one refused (3 with no other problem)")
	mustContainAll(t, "stderr", errOut, "rejected as a whole, every row")
	if strings.Count(out, "looks saved by a spreadsheet") != 1 {
		t.Errorf("verdict printed more than once:\n%s", out)
	}
	for _, account := range []string{"1234567", "987654321", "4400123456"} {
		if strings.Contains(out+errOut, account) {
			t.Errorf("output shows account %s", account)
		}
	}
	code, out, errOut = runBinary(t, nil, "validate", "--test-mode", filepath.Join(dir, "source.csv"))
	if code != exitOK || !strings.Contains(out, "3 rows, 3 valid, 0 invalid") {
		t.Fatalf("the system's export: exit %d\n%s%s", code, out, errOut)
	}
}

// batchd validate names an approvals or cancel file for what it is,
// checks its lines' form as ingest will, and says that the ledger and the
// service judge each line when the file is applied.
func TestValidateAppliedFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "approve.csv")
	if err := os.WriteFile(file, []byte("file,line,account_last4,approved_by\nsecond.csv,2,5678,alice\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runMain(t, nil, "validate", file)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	mustContainAll(t, "stdout", out, "approvals file: 1 rows, 1 valid, 0 invalid", "an approvals file: what the ledger and the service say of each line is known when ingest applies it")

	file = filepath.Join(dir, "cancel.csv")
	if err := os.WriteFile(file, []byte("check_id,file,line,reason\n,week.csv,3,sent twice\nshort-id,,,dup\n,week.csv,3,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runMain(t, nil, "validate", file)
	if code == exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	mustContainAll(t, "stdout", out, "cancels file: 3 rows, 1 valid, 2 invalid", `line 3: check_id "short-id" is not a check id`, "line 4: reason is empty")
	mustContainAll(t, "stderr", errOut, "2 lines would be refused")
}

// TestValidateHonoursBatchdConfig: $BATCHD_CONFIG is validate's
// configuration when --config is not given, as for every other command:
// its api.mode test accepts the sandbox's routing number.
func TestValidateHonoursBatchdConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, fmt.Sprintf("state_dir: %s\napi: {base_url: http://127.0.0.1:1, mode: test}\n", dir))
	file := csvTestdata("valid.csv")
	env := map[string]string{"BATCHD_API_KEY": "sk_test_x1234567890"}
	if code, out, errOut := runMain(t, env, "validate", file); code != exitFailure {
		t.Fatalf("without a configuration: exit %d\n%s%s", code, out, errOut)
	}
	env["BATCHD_CONFIG"] = cfg
	if code, out, errOut := runMain(t, env, "validate", file); code != exitOK || !strings.Contains(out, "0 invalid") {
		t.Fatalf("with $BATCHD_CONFIG: exit %d\n%s%s", code, out, errOut)
	}
	env["BATCHD_CONFIG"] = filepath.Join(dir, "missing.yaml")
	if code, _, errOut := runMain(t, env, "validate", file); code != exitFailure || !strings.Contains(errOut, "missing.yaml") {
		t.Fatalf("a $BATCHD_CONFIG that is not there: exit %d, stderr %q", code, errOut)
	}
}

// TestValidateOnline: --online asks the configured service's bank
// directory about each routing number, as ingest will, and refuses the
// rows of a number it knows no bank for; without a configuration it is a
// usage error.
func TestValidateOnline(t *testing.T) {
	t.Parallel()
	const key = "sk_test_validate_online_0123"
	api := httptest.NewServer(sandbox.New(sandbox.Options{Keys: []sandbox.Key{{Value: key}}}))
	t.Cleanup(api.Close)
	dir := t.TempDir()
	file := filepath.Join(dir, "pay.csv")
	data := "amount,memo,name,email,bank_routing,bank_account\n" +
		"10.00,a,Ann,ann@example.com,021000021,1111000016\n" +
		"11.00,b,Bob,bob@example.com," + sandbox.UnknownRouting + ",1111000016\n"
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, fmt.Sprintf("state_dir: %s\napi: {base_url: %q}\n", dir, api.URL))
	env := map[string]string{"BATCHD_API_KEY": key}
	code, out, errOut := runMain(t, env, "validate", "--config", cfg, file)
	if code != exitOK || !strings.Contains(out, "2 rows, 2 valid, 0 invalid") {
		t.Fatalf("offline: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runMain(t, env, "validate", "--online", "--config", cfg, file)
	if code != exitFailure {
		t.Fatalf("online: exit %d\n%s%s", code, out, errOut)
	}
	mustContainAll(t, "stdout", out, "2 rows, 1 valid, 1 invalid", "line 3, column bank_routing",
		"knows no bank with routing number "+sandbox.UnknownRouting)
	if code, _, errOut := runMain(t, nil, "validate", "--online", file); code != exitUsage || !strings.Contains(errOut, "--online needs --config") {
		t.Fatalf("--online without a configuration: exit %d\n%s", code, errOut)
	}
}
