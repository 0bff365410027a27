package csvfile

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/gocarina/gocsv"
)

// Sample describes a generated payment file of valid rows, for benchmarks,
// load tests and demos. The same Sample always writes the same bytes.
type Sample struct {
	Rows int
	Seed int64
	// Live draws random routing numbers that pass the ABA checksum and random
	// account numbers. Otherwise rows use the sandbox fixtures (routing
	// 999900001, accounts 1111000001 to 1111000022), valid in test mode only.
	Live bool
}

// WriteSample writes a sandbox-fixture payment file of rows valid rows to w.
func WriteSample(w io.Writer, rows int, seed int64) error {
	return Sample{Rows: rows, Seed: seed}.Write(w)
}

// sampleHeader are the columns of a sample file: those of sampleRow, in
// its order, which is not spec order (a file's columns may come in any).
var sampleHeader = csvTags(reflect.TypeFor[sampleRow]())

func csvTags(t reflect.Type) []string {
	out := make([]string, t.NumField())
	for i := range out {
		out[i] = t.Field(i).Tag.Get("csv")
	}
	return out
}

var (
	firstNames = []string{"Ann", "Bob", "Carla", "Dmitri", "Eve", "Farah", "Gus", "Hana", "Ivan", "Jo", "Kemal", "Lena", "María", "Noor", "Otto", "Priya"}
	lastNames  = []string{"Smith", "Jones", "O'Neil", "García", "Nguyen", "Okafor", "Schmidt", "Kowalski", "Chen", "Rossi", "Dubois", "Haddad"}
	streets    = []string{"Main St", "Oak Ave", "Elm St", "2nd St", "Lakeview Dr", "Park Blvd"}
	cities     = [][2]string{{"Springfield", "IL"}, {"Austin", "TX"}, {"Portland", "OR"}, {"Albany", "NY"}, {"Tampa", "FL"}, {"Denver", "CO"}}
	memos      = []string{"Invoice %d", "Payroll, week %d", `Consulting "phase %d"`, "Rent, unit %d", "Refund for order #%d, partial", "Membership dues %d"}
)

// Write writes the sample, header first, quoting as CSV requires.
func (s Sample) Write(w io.Writer) error {
	rng := rand.New(rand.NewPCG(uint64(s.Seed), 0x9e3779b97f4a7c15))
	bw := bufio.NewWriterSize(w, 64<<10)
	cw := csv.NewWriter(bw)
	if err := cw.Write(sampleHeader); err != nil {
		return fmt.Errorf("write sample header: %w", err)
	}
	firstNumber := 1000 + rng.IntN(1_000_000)
	for i := 0; i < s.Rows; i++ {
		if err := cw.Write(s.row(rng, firstNumber+i)); err != nil {
			return fmt.Errorf("write sample row %d: %w", i+1, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write sample: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write sample: %w", err)
	}
	return nil
}

func (s Sample) row(rng *rand.Rand, number int) []string {
	first, last := pick(rng, firstNames), pick(rng, lastNames)
	p := payment.Payment{Number: strconv.Itoa(number), Amount: sampleAmount(rng)}
	p.Memo = fmt.Sprintf(pick(rng, memos), 1+rng.IntN(9999))
	p.Name = first + " " + last
	if rng.IntN(5) == 0 { // some payers give a postal address instead of e-mail
		city := cities[rng.IntN(len(cities))]
		p.Address = fmt.Sprintf("%d %s", 1+rng.IntN(9999), pick(rng, streets))
		p.City, p.State = city[0], city[1]
		p.Zip = fmt.Sprintf("%05d", 10000+rng.IntN(89999))
	} else {
		p.Email = strings.ToLower(strings.ReplaceAll(last, "'", "")) + strconv.Itoa(rng.IntN(1000)) + "@example.com"
	}
	if rng.IntN(3) == 0 {
		p.Phone = fmt.Sprintf("555-%03d-%04d", rng.IntN(1000), rng.IntN(10000))
	}
	if s.Live {
		p.BankRouting, p.BankAccount = randomRouting(rng), randomDigits(rng, 6+rng.IntN(8))
	} else {
		p.BankRouting, p.BankAccount = SandboxRouting, fmt.Sprintf("11110000%02d", 1+rng.IntN(22))
	}
	p.VerifyBeforeSave = rng.IntN(10) == 0
	p.Label = "sample"
	row := make([]string, len(sampleColumns))
	for i, f := range sampleColumns {
		row[i] = cellOf(&f, &p)
	}
	return row
}

// sampleColumns are the fields of sampleHeader.
var sampleColumns = func() []payment.Field {
	out := make([]payment.Field, len(sampleHeader))
	for i, name := range sampleHeader {
		out[i] = payment.Fields[column(name)]
	}
	return out
}()

// cellOf writes f of p as a cell that Parse reads back as the same value:
// a flag as true or empty, a number in decimal, an amount as 1234.56.
func cellOf(f *payment.Field, p *payment.Payment) string {
	switch f.Kind {
	case payment.Cents:
		return f.Cents(p).String()
	case payment.Bool:
		if *f.Bool(p) {
			return "true"
		}
		return ""
	case payment.Int:
		return strconv.Itoa(*f.Int(p))
	}
	return *f.Text(p)
}

func pick(rng *rand.Rand, list []string) string { return list[rng.IntN(len(list))] }

// sampleAmount spreads amounts over five orders of magnitude, from 1.00 to
// 100000.00, the way a mixed batch looks.
func sampleAmount(rng *rand.Rand) money.Cents {
	scale := int64(1000)
	for range rng.IntN(5) {
		scale *= 10
	}
	return money.Cents(100 + rng.Int64N(scale))
}

func randomDigits(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + rng.IntN(10))
	}
	return string(b)
}

// randomRouting returns a routing number in an assigned range whose ninth
// digit makes the ABA checksum come out right.
func randomRouting(rng *rand.Rand) string {
	prefixes := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 21, 22, 26, 31, 32, 61, 67}
	s := fmt.Sprintf("%02d", prefixes[rng.IntN(len(prefixes))]) + randomDigits(rng, 6)
	w := [8]int{3, 7, 1, 3, 7, 1, 3, 7}
	sum := 0
	for i := 0; i < 8; i++ {
		sum += int(s[i]-'0') * w[i]
	}
	return s + strconv.Itoa((10-sum%10)%10)
}

// sampleRow holds the columns WriteSample writes, in the order it writes
// them, as bare strings: what gocsv decodes into when nothing is checked.
// It is the benchmarks' yardstick (DecodeBaseline), so it stays a plain
// struct for gocsv to decode into; the sample's columns are read from it.
type sampleRow struct {
	Number           string `csv:"number"`
	Amount           string `csv:"amount"`
	Memo             string `csv:"memo"`
	Name             string `csv:"name"`
	Email            string `csv:"email"`
	Phone            string `csv:"phone"`
	Address          string `csv:"address"`
	City             string `csv:"city"`
	State            string `csv:"state"`
	Zip              string `csv:"zip"`
	BankRouting      string `csv:"bank_routing"`
	BankAccount      string `csv:"bank_account"`
	VerifyBeforeSave string `csv:"verify_before_save"`
	Label            string `csv:"label"`
}

// DecodeBaseline is the yardstick of every ingest benchmark: gocsv alone
// streaming a sample file through its callback into bare strings, with no
// validation and no ledger. It returns the number of rows decoded.
func DecodeBaseline(r io.Reader) (int, error) {
	n := 0
	err := gocsv.UnmarshalToCallback(r, func(sampleRow) { n++ })
	return n, err
}
