package csvfile

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteSampleIsValidAndRepeatable(t *testing.T) {
	a, b := sampleBytes(t, 2000), sampleBytes(t, 2000)
	if !bytes.Equal(a, b) {
		t.Error("the same seed wrote different files")
	}
	var other bytes.Buffer
	if err := WriteSample(&other, 2000, 2); err != nil || bytes.Equal(a, other.Bytes()) {
		t.Errorf("another seed wrote the same file (err %v)", err)
	}
	res := parseReader(bytes.NewReader(a), testOpts())
	if res.err != nil || res.sum != (Summary{Rows: 2000, Valid: 2000}) {
		t.Fatalf("sample: %+v, first findings %v, err %v", res.sum, res.findings[:min(5, len(res.findings))], res.err)
	}
	if !bytes.Contains(a, []byte(`""`)) || !strings.Contains(res.rows[0].Memo+string(a), ", ") {
		t.Error("sample memos never need quoting")
	}
	addresses := 0
	for _, p := range res.rows {
		if p.Address != "" {
			addresses++
		}
	}
	if addresses == 0 || addresses == len(res.rows) {
		t.Errorf("%d of %d rows have an address; want a mix", addresses, len(res.rows))
	}
}

func TestLiveSampleIsValidInLiveMode(t *testing.T) {
	var b bytes.Buffer
	if err := (Sample{Rows: 1000, Seed: 5, Live: true}).Write(&b); err != nil {
		t.Fatal(err)
	}
	o := testOpts()
	o.TestMode = false
	res := parseReader(&b, o)
	if res.err != nil || res.sum.Valid != 1000 {
		t.Fatalf("live sample: %+v, findings %v, err %v", res.sum, res.findings[:min(5, len(res.findings))], res.err)
	}
}
