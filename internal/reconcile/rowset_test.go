package reconcile

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

// TestRowSetAgreesWithAMap: the bitset holds exactly the rows added, in
// any order, over lines far apart and several batches.
func TestRowSetAgreesWithAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var s rowSet
	want := map[payment.RowKey]bool{}
	for range 20000 {
		k := payment.RowKey{Batch: uint64(rng.IntN(5)), Line: uint32(rng.IntN(200000))}
		if got := s.add(k); got == want[k] {
			t.Fatalf("add(%v) = %v with the key already present: %v", k, got, want[k])
		}
		want[k] = true
	}
	if s.len() != len(want) {
		t.Fatalf("len %d, want %d", s.len(), len(want))
	}
	for range 20000 {
		k := payment.RowKey{Batch: uint64(rng.IntN(6)), Line: uint32(rng.IntN(250000))}
		if s.has(k) != want[k] {
			t.Fatalf("has(%v) = %v, want %v", k, s.has(k), want[k])
		}
	}
}

// TestRowSetAfter: after yields the set's later lines of one batch, in
// order, and stops when told.
func TestRowSetAfter(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var s rowSet
	want := map[payment.RowKey]bool{}
	for range 3000 {
		k := payment.RowKey{Batch: uint64(rng.IntN(3)), Line: uint32(rng.IntN(5000))}
		s.add(k)
		want[k] = true
	}
	for range 500 {
		from := payment.RowKey{Batch: uint64(rng.IntN(4)), Line: uint32(rng.IntN(5200))}
		stop := 1 + rng.IntN(40)
		var got []payment.RowKey
		s.after(from, func(k payment.RowKey) bool {
			got = append(got, k)
			return len(got) < stop
		})
		var exp []payment.RowKey
		for line := from.Line + 1; line < 5200 && len(exp) < stop; line++ {
			if k := (payment.RowKey{Batch: from.Batch, Line: line}); want[k] {
				exp = append(exp, k)
			}
		}
		if !slices.Equal(got, exp) {
			t.Fatalf("after(%v) stopped at %d = %v, want %v", from, stop, got, exp)
		}
	}
}
