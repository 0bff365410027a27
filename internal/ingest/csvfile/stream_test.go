package csvfile

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocarina/gocsv"
)

// countingDecoder is a gocsv.SimpleDecoder that counts the rows gocsv asks for.
type countingDecoder struct {
	rows  [][]string
	reads atomic.Int32
}

func (d *countingDecoder) GetCSVRow() ([]string, error) {
	n := int(d.reads.Add(1)) - 1
	if n >= len(d.rows) {
		return nil, io.EOF
	}
	return d.rows[n], nil
}

func (d *countingDecoder) GetCSVRows() ([][]string, error) { return nil, errors.New("unused") }

// TestGocsvCallbackReadsAhead pins down the gocsv behaviour the design
// depends on: UnmarshalDecoderToCallback decodes on its own goroutine and
// asks for the next row while the callback for the current row still runs.
// A "current line" read from the CSV reader inside the callback would
// therefore be one record late, which is why the line travels in the record.
// If this test fails, gocsv changed; the line column still works.
func TestGocsvCallbackReadsAhead(t *testing.T) {
	type row struct {
		A string `csv:"a"`
	}
	d := &countingDecoder{rows: [][]string{{"a"}, {"1"}, {"2"}, {"3"}}}
	var sawAhead bool
	var got []string
	err := gocsv.UnmarshalDecoderToCallback(d, func(r row) {
		got = append(got, r.A)
		if r.A != "1" {
			return
		}
		// While row 1 is in the callback, wait for gocsv to fetch row 2.
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if d.reads.Load() >= 3 { // header, row 1, row 2
				sawAhead = true
				return
			}
			runtime.Gosched()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sawAhead {
		t.Error("gocsv did not read ahead of the callback; the design note in doc.go is out of date")
	}
	equal(t, "rows", got, []string{"1", "2", "3"})
}

// TestSlowCallbackKeepsLines makes every callback slow enough for gocsv to
// run ahead and checks that lines still belong to their rows.
func TestSlowCallbackKeepsLines(t *testing.T) {
	in := testdata(t, "csv/quoted_comma_newline.csv")
	var lines []int
	_, err := Parse(bytes.NewReader(in), testOpts(), func(p Payment) error {
		for range 100 {
			runtime.Gosched()
		}
		lines = append(lines, p.Line)
		if p.Line == 3 && !strings.HasPrefix(p.Memo, "Line one") {
			t.Errorf("line 3 carries memo %q", p.Memo)
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "lines", lines, []int{2, 3, 7})
}

func sampleBytes(t testing.TB, rows int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteSample(&b, rows, 1); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// waitGoroutines polls until at most n goroutines run, so that a leaked
// gocsv goroutine fails the test instead of lingering.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines still running, want at most %d", runtime.NumGoroutine(), n)
		}
		runtime.Gosched()
	}
}

func TestCallbackErrorStops(t *testing.T) {
	data := sampleBytes(t, 1000)
	before := runtime.NumGoroutine()
	stop := errors.New("stop here")
	calls := 0
	sum, err := Parse(bytes.NewReader(data), testOpts(), func(p Payment) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	}, nil)
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v, want the callback's error", err)
	}
	if calls != 3 || sum.Rows != 3 {
		t.Errorf("calls = %d, summary %+v; want 3 rows then stop", calls, sum)
	}
	waitGoroutines(t, before)

	findingErr := errors.New("finding sink full")
	_, err = Parse(bytes.NewReader(testdata(t, "csv/invalid_rows.csv")), testOpts(), nil,
		func(Finding) error { return findingErr })
	if !errors.Is(err, findingErr) {
		t.Errorf("err = %v, want the finding callback's error", err)
	}
	waitGoroutines(t, before)
}

func TestCallbackPanicPropagates(t *testing.T) {
	data := sampleBytes(t, 100)
	before := runtime.NumGoroutine()
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want boom", p)
			}
		}()
		_, _ = Parse(bytes.NewReader(data), testOpts(), func(Payment) error { panic("boom") }, nil)
		t.Error("Parse returned after the callback panicked")
	}()
	waitGoroutines(t, before)
}

func TestRecordSizeLimit(t *testing.T) {
	head := "amount,memo,name,email,bank_routing,bank_account\n1.00,ok,Ann,a@b.co,999900001,1111000016\n"
	open := head + "2.00,\"never closed" + strings.Repeat(" filler text,\n", 30000)
	o := testOpts()
	o.MaxRecordBytes = 4096
	res := parseString(open, o)
	fe := mustFileError(t, res.err)
	if fe.Line != 3 || !strings.Contains(fe.Reason, "longer than 4096 bytes") {
		t.Errorf("FileError = %+v", fe)
	}
	// The default bound accepts the same file as a quoting error instead.
	res = parseString(open, testOpts())
	if fe := mustFileError(t, res.err); !strings.Contains(fe.Reason, "not closed") {
		t.Errorf("default bound: %+v", fe)
	}
	long := "amount,memo,name,email,bank_routing,bank_account\n" + strings.Repeat("x", 300_000) + "\n"
	if fe := mustFileError(t, parseString(long, o).err); fe.Line != 2 || !strings.Contains(fe.Reason, "longer than") {
		t.Errorf("long line: %+v", fe)
	}
	longHeader := strings.Repeat("amount", 50_000) + "\n"
	if fe := mustFileError(t, parseString(longHeader, o).err); fe.Line != 1 || !strings.Contains(fe.Reason, "header row is too long") {
		t.Errorf("long header: %+v", fe)
	}
}

type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		r.n++
		return copy(p, "amount,memo,name,email,bank_routing,bank_account\n1.00,ok,Ann,a@b.co,999900001,1111000016\n"), nil
	}
	return 0, errors.New("connection reset")
}

func TestReadErrorIsNotFileError(t *testing.T) {
	_, err := Parse(&failingReader{}, testOpts(), nil, nil)
	var fe *FileError
	if err == nil || errors.As(err, &fe) || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("err = %v, want a wrapped I/O error", err)
	}
}

func TestOptionsRequireRunDate(t *testing.T) {
	_, err := Parse(strings.NewReader(csvOf(baseRow())), Options{TestMode: true}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "RunDate") {
		t.Errorf("err = %v", err)
	}
}

func TestRunDateUsesItsOwnCalendarDay(t *testing.T) {
	// 23:30 on June 15 in UTC-5 is June 16 in UTC; the civil date is June 15.
	zone := time.FixedZone("UTC-5", -5*3600)
	o := testOpts()
	o.RunDate = time.Date(2025, 6, 15, 23, 30, 0, 0, zone)
	res := parseString(csvOf(with(map[string]string{"authorization_date": "2025-06-16"})), o)
	if len(res.findings) != 1 {
		t.Errorf("June 16 on run date June 15 (UTC-5): findings %v", res.findings)
	}
	if got := DateOf(o.RunDate); !got.Equal(runDate) {
		t.Errorf("DateOf = %v, want %v", got, runDate)
	}
}

func TestStrayValueInUnnamedColumn(t *testing.T) {
	in := "amount,memo,name,email,bank_routing,bank_account,,\n" +
		"1.00,a,Ann,a@b.co,999900001,1111000016,,\n" +
		"2.00,b,Ann,a@b.co,999900001,1111000016,,oops\n"
	res := parseString(in, testOpts())
	equal(t, "findings", res.where(), []string{"3:"})
	equal(t, "rows", res.rowLines(), []int{2})
	if !strings.Contains(res.findings[0].Message, "column 8") {
		t.Errorf("message = %q", res.findings[0].Message)
	}
}

// TestChangedGocsvGlobals: Parse sets no gocsv global, but another package
// in the process might. Parse does not depend on them: gocsv hands each
// column to record.UnmarshalCSVWithFields in column order, whatever the
// header normalizer, TagName or FailIfUnmatchedStructTags.
// The test changes the globals and puts them back (SetHeaderNormalizer also
// clears gocsv's struct cache); no test here runs in parallel.
func TestChangedGocsvGlobals(t *testing.T) {
	defer gocsv.SetHeaderNormalizer(gocsv.DefaultNameNormalizer())

	gocsv.SetHeaderNormalizer(strings.ToUpper)
	res := parseString(csvOf(baseRow(), with(map[string]string{"amount": "0"})), testOpts())
	if res.err != nil || len(res.rows) != 1 || res.rows[0].BankAccount != "1111000016" {
		t.Errorf("with an upper-case normalizer: rows %v, err %v", res.rows, res.err)
	}
	equal(t, "findings", res.where(), []string{"3:amount"})

	gocsv.FailIfUnmatchedStructTags = true
	res = parseFile(t, "csv/valid.csv", testOpts())
	gocsv.FailIfUnmatchedStructTags = false
	if res.err != nil || len(res.rows) != 5 {
		t.Errorf("with FailIfUnmatchedStructTags: err = %v, rows %v", res.err, res.rows)
	}

	gocsv.TagName = "json"
	defer func() { gocsv.TagName = "csv" }()
	gocsv.SetHeaderNormalizer(gocsv.DefaultNameNormalizer())
	res = parseString(csvOf(baseRow()), testOpts())
	if res.err != nil || len(res.rows) != 1 || res.rows[0].BankAccount != "1111000016" {
		t.Errorf("with TagName json: err = %v, rows %v", res.err, res.rows)
	}
}

// TestRecordOfWrongLength: a record whose cells do not match the header
// handed to gocsv stops Parse rather than misplace data.
func TestRecordOfWrongLength(t *testing.T) {
	hdr := &header{index: []int{0, 1}, fields: []int{0, 1}}
	for _, cells := range [][]string{nil, {"1001", "2,2,0"}, {"1001", "10.00", "x", "2,2,0"}} {
		c := &consumer{v: newValidator(testOpts(), hdr)}
		c.handle(record{cells: cells})
		if c.err == nil || !strings.Contains(c.err.Error(), "columns") || c.sum.Rows != 0 {
			t.Errorf("%q: err %v, rows %d", cells, c.err, c.sum.Rows)
		}
	}
}

func TestConcurrentParses(t *testing.T) {
	data := sampleBytes(t, 500)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			sum, err := Parse(bytes.NewReader(data), testOpts(), nil, nil)
			if err == nil && sum.Valid != 500 {
				err = errors.New("not all rows valid")
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
