package ingest

import (
	"slices"
	"testing"
)

// Options.OnOutcome hears of each file as it is settled, with the same
// Outcomes Run returns, in the same order: what metrics count while a
// long run goes on.
func TestOnOutcomeHearsEachFileAsItIsSettled(t *testing.T) {
	var heard []Outcome
	r := newRig(t, servers()["inprocess"](t), func(o *Options) {
		o.OnOutcome = func(o Outcome) { heard = append(heard, o) }
	})
	r.drop("a.csv", rows(1, 0))
	r.drop("b.csv", oneBad)
	out, err := r.run(r.rem)
	if err != nil {
		t.Fatal(err)
	}
	if summary(out) != "a.csv:accepted,b.csv:rejected" {
		t.Fatalf("outcomes %s", summary(out))
	}
	// The first run (first sight) reports both as waiting; the second
	// settles them.
	if got, want := summary(heard), "a.csv:waiting,b.csv:waiting,a.csv:accepted,b.csv:rejected"; got != want {
		t.Fatalf("heard %s, want %s", got, want)
	}
	if !slices.EqualFunc(heard[2:], out, func(a, b Outcome) bool { return a.File == b.File && a.Detail == b.Detail && a.Batch == b.Batch }) {
		t.Fatalf("heard %+v, returned %+v", heard[2:], out)
	}
}
