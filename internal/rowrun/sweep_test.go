package rowrun

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// walkOf is a ledger walk over rows.
func walkOf(rows ...int) func(func(int) (bool, error)) error {
	return func(fn func(int) (bool, error)) error {
		for _, r := range rows {
			if more, err := fn(r); err != nil || !more {
				return err
			}
		}
		return nil
	}
}

func TestSweepActsOnMatchesAfterTheWalkAndStopsWithTheRun(t *testing.T) {
	ctx := context.Background()
	even := func(r int) bool { return r%2 == 0 }

	var s State
	var did []int
	walking := false
	walk := func(fn func(int) (bool, error)) error {
		walking = true
		defer func() { walking = false }()
		return walkOf(1, 2, 3, 4, 6)(fn)
	}
	err := Sweep(ctx, &s, "even rows", walk, even, func(r int) error {
		if walking {
			t.Fatal("do ran inside the ledger walk")
		}
		did = append(did, r)
		return nil
	})
	if err != nil || !slices.Equal(did, []int{2, 4, 6}) {
		t.Fatalf("did %v, err %v; want [2 4 6], nil", did, err)
	}

	// A halt stops the sweep before its next row, and is its error.
	var halted State
	halt := errors.New("key refused")
	did = nil
	err = Sweep(ctx, &halted, "even rows", walkOf(2, 4, 6), even, func(r int) error {
		did = append(did, r)
		halted.Halt(halt)
		return nil
	})
	if !errors.Is(err, halt) || !slices.Equal(did, []int{2}) {
		t.Fatalf("did %v, err %v; want [2], the halt", did, err)
	}

	// A failed walk acts on nothing and names what it looked for.
	broken := errors.New("ledger closed")
	did = nil
	err = Sweep(ctx, &State{}, "even rows", func(func(int) (bool, error)) error { return broken }, even,
		func(r int) error { did = append(did, r); return nil })
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "find even rows") || did != nil {
		t.Fatalf("did %v, err %v", did, err)
	}

	// An error from do ends the sweep with it.
	failed := errors.New("void refused")
	did = nil
	err = Sweep(ctx, &State{}, "even rows", walkOf(2, 4), even, func(r int) error { did = append(did, r); return failed })
	if !errors.Is(err, failed) || !slices.Equal(did, []int{2}) {
		t.Fatalf("did %v, err %v", did, err)
	}
}
