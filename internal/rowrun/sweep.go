package rowrun

import (
	"context"
	"fmt"
)

// Sweep is a kind's pass over rows the main loop left with work to do
// (submit's checks to void, onboarding's micro-deposits to initiate): it
// walks the ledger, keeps the rows that match, and then calls do on each
// while the run goes on. The requests are made after the walk, never
// inside it, so that no ledger read stays open across the network. what
// names the rows for the error of a failed walk ("checks to void"). An
// error from do ends the sweep; otherwise Sweep returns why the run
// halted, or nil.
func Sweep[R any](ctx context.Context, s *State, what string,
	walk func(func(R) (bool, error)) error, match func(R) bool, do func(R) error) error {
	var rows []R
	err := walk(func(r R) (bool, error) {
		if match(r) {
			rows = append(rows, r)
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("find %s: %w", what, err)
	}
	for _, r := range rows {
		if s.Stopping(ctx) {
			break
		}
		if err := do(r); err != nil {
			return err
		}
	}
	return s.HaltedBy()
}
