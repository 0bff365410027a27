package ingest

import (
	"fmt"
	"math"
	"time"
)

// submitTime is how long the submit job needs for rows at rate (api.rate,
// requests per second: one create a row), and how many runs of at most
// timeout (schedule.submit_timeout) that takes; runs is 0 when one run is
// enough, or when rate or timeout is not set.
func submitTime(rows int, rate float64, timeout time.Duration) (need time.Duration, runs int) {
	if rows <= 0 || rate <= 0 || timeout <= 0 {
		return 0, 0
	}
	need = time.Duration(float64(rows) / rate * float64(time.Second))
	if need <= timeout {
		return need, 0
	}
	return need, int(math.Ceil(float64(need) / float64(timeout)))
}

// joinNotes joins an outcome's notes with "; ".
func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// slowFileNote is the warning for a payment file whose rows take longer
// to submit than one submit run may last: "" when one run is enough. A
// file accepted without a word took 15 hours against a 6-hour timeout,
// and each run ended as a timeout failure (BatchdJobTimedOut).
func (j *Job) slowFileNote(rows int) string {
	need, runs := submitTime(rows, j.opts.SubmitRate, j.opts.SubmitTimeout)
	if runs == 0 {
		return ""
	}
	return fmt.Sprintf("%d rows need about %s at api.rate %g/s, longer than schedule.submit_timeout (%s): "+
		"they are sent over %d submit runs, each cut off at the timeout (a timeout failure, BatchdJobTimedOut) and "+
		"the next going on, none paid twice; to send them in one run, raise schedule.submit_timeout above %s",
		rows, roughly(need), j.opts.SubmitRate, j.opts.SubmitTimeout, runs, roughly(need))
}

// roughly rounds d to the minute, or to the second under a minute.
func roughly(d time.Duration) time.Duration {
	if d < time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(time.Minute)
}
