package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
)

// ErrBadArgs is returned for a manual run given an argument its job does
// not take (Job.Args).
var ErrBadArgs = errors.New("argument not taken by this job")

type argsKey struct{}

// Args are the arguments of a manual run (TriggerWith), for Job.Run; nil
// for a scheduled run, or one given none.
func Args(ctx context.Context) url.Values {
	v, _ := ctx.Value(argsKey{}).(url.Values)
	return v
}

// TriggerWith starts a run of the named job now, as Trigger does, with
// args for its Run (Args), and returns the run's number: /healthz's
// "runs" counts the runs started, and "last_run" names the last one
// finished, whose outcome and summary follow it, so a caller can wait for
// its own run and read how it ended.
func (s *Scheduler) TriggerWith(name string, args url.Values) (uint64, error) {
	return s.launchWith(name, CauseManual, args)
}

// checkArgs refuses an argument the job does not take.
func (j Job) checkArgs(args url.Values) error {
	var bad []string
	for k := range args {
		if !slices.Contains(j.Args, k) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	takes := "none"
	if len(j.Args) > 0 {
		takes = fmt.Sprint(j.Args)
	}
	return fmt.Errorf("%s: %w: %v (it takes %s)", j.Name, ErrBadArgs, bad, takes)
}
