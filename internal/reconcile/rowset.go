package reconcile

import (
	"math/bits"

	"github.com/batchd/batchd/internal/payment"
)

// rowSet is a set of ledger rows, one bit per line of each batch: a run
// over 1,000,000 rows marks them all in 125 kB, where a map of row keys
// would hold tens of megabytes. Not safe for concurrent use; the matcher
// guards it with its lock.
type rowSet struct {
	bits map[uint64][]uint64 // batch -> bit per line
	n    int
}

// add puts k in the set and reports whether it was absent.
func (s *rowSet) add(k payment.RowKey) bool {
	if s.bits == nil {
		s.bits = map[uint64][]uint64{}
	}
	b := s.bits[k.Batch]
	word, bit := int(k.Line/64), uint64(1)<<(k.Line%64)
	if word >= len(b) {
		b = append(b, make([]uint64, word+1-len(b), max(word+1, 2*len(b))-len(b))...)
		s.bits[k.Batch] = b
	}
	if b[word]&bit != 0 {
		return false
	}
	b[word] |= bit
	s.n++
	return true
}

func (s *rowSet) has(k payment.RowKey) bool {
	b := s.bits[k.Batch]
	word := int(k.Line / 64)
	return word < len(b) && b[word]&(uint64(1)<<(k.Line%64)) != 0
}

// len is the number of rows in the set.
func (s *rowSet) len() int { return s.n }

// after calls fn with each key of the set in k's batch past k's line, in
// line order, until fn returns false.
func (s *rowSet) after(k payment.RowKey, fn func(payment.RowKey) bool) {
	b := s.bits[k.Batch]
	for word := int(k.Line / 64); word < len(b); word++ {
		w := b[word]
		if word == int(k.Line/64) {
			w &^= uint64(1)<<(k.Line%64+1) - 1 // k's line and those before it
		}
		for ; w != 0; w &= w - 1 {
			line := uint32(word*64 + bits.TrailingZeros64(w))
			if !fn(payment.RowKey{Batch: k.Batch, Line: line}) {
				return
			}
		}
	}
}
