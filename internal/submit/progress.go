package submit

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"time"

	"github.com/batchd/batchd/internal/logattr"
	"github.com/batchd/batchd/internal/payment"
)

// ShowProgress reports the runner's progress until ctx is done: on a
// terminal, one line rewritten in place every second; otherwise a log line
// every interval, which journald keeps. total is the number of open rows
// when the run started.
func (r *Runner) ShowProgress(ctx context.Context, w io.Writer, terminal bool, interval time.Duration, total int64) {
	if terminal {
		interval = time.Second
	}
	if interval <= 0 {
		interval = 10 * time.Second
	}
	start := r.opts.Now()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if terminal {
				fmt.Fprintln(w)
			}
			return
		case <-t.C:
		}
		done := r.Done()
		line := progressLine(done, total, r.opts.Now().Sub(start))
		if terminal {
			fmt.Fprintf(w, "\r\033[K%s", line.text)
		} else {
			r.log.Info("submit progress", slog.Int64("done", done), slog.Int64("remaining", line.remaining),
				slog.Float64("rows_per_second", line.rate), logattr.Duration("eta", line.eta))
		}
	}
}

type progress struct {
	text      string
	remaining int64
	rate      float64
	eta       time.Duration
}

func progressLine(done, total int64, elapsed time.Duration) progress {
	p := progress{remaining: max(total-done, 0)}
	if secs := elapsed.Seconds(); secs > 0 {
		p.rate = float64(done) / secs
	}
	eta := "?"
	if p.rate > 0 {
		p.eta = time.Duration(float64(p.remaining) / p.rate * float64(time.Second)).Round(time.Second)
		eta = p.eta.String()
	}
	p.text = fmt.Sprintf("submitted %d, remaining %d, %.1f rows/s, ETA %s", done, p.remaining, p.rate, eta)
	return p
}

// OpenCount counts the rows with no check yet, for a progress total.
func (r *Runner) OpenCount() (int64, error) {
	var n int64
	err := r.led.OpenRows(func(*payment.Row) (bool, error) { n++; return true, nil })
	return n, err
}
