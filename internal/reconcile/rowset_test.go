package reconcile

import (
	"math/rand/v2"
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
