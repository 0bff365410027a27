package ingest

import (
	"strings"
	"testing"
	"time"
)

// TestSubmitTime: the file, 540,179 rows at api.rate 10 against
// the 6-hour submit_timeout, takes about 15 hours: three runs.
func TestSubmitTime(t *testing.T) {
	for _, tc := range []struct {
		rows    int
		rate    float64
		timeout time.Duration
		runs    int
	}{
		{540179, 10, 6 * time.Hour, 3},
		{216000, 10, 6 * time.Hour, 0}, // exactly 6 hours: one run
		{216001, 10, 6 * time.Hour, 2},
		{10, 0, time.Hour, 0}, // no rate: no warning
	} {
		if _, runs := submitTime(tc.rows, tc.rate, tc.timeout); runs != tc.runs {
			t.Errorf("%d rows at %g/s within %s: %d runs, want %d", tc.rows, tc.rate, tc.timeout, runs, tc.runs)
		}
	}
}

// TestSlowFileIsWarnedOf: a payment file whose rows take longer to submit
// at api.rate than schedule.submit_timeout is accepted with a note, in
// its outcome (what batchd ingest prints) and a WARN log line, that says
// how many runs it takes and how to make it one; a file that fits gets
// none.
func TestSlowFileIsWarnedOf(t *testing.T) {
	var l logs
	r := newRig(t, servers()["inprocess"](t), func(o *Options) {
		o.SubmitRate, o.SubmitTimeout = 1, 2*time.Second
		withLogs(&l)(o)
	})
	r.drop("big.csv", rows(1, 0)+strings.Join(strings.Split(rows(2, 0), "\n")[1:], "\n")+strings.Join(strings.Split(rows(3, 0), "\n")[1:], "\n"))
	r.drop("small.csv", rows(4, 0))
	out, err := r.run(r.rem)
	if err != nil || summary(out) != "big.csv:accepted,small.csv:accepted" {
		t.Fatalf("outcomes %s, err %v", summary(out), err)
	}
	mustContain(t, out[0].Detail, "3 rows need about 3s at api.rate 1/s, longer than schedule.submit_timeout (2s)",
		"over 2 submit runs", "raise schedule.submit_timeout")
	if strings.Contains(out[1].Detail, "submit_timeout") {
		t.Errorf("a file that fits one run is warned of: %s", out[1].Detail)
	}
	mustContain(t, l.String(), "level=WARN", "takes several submit runs", "file=big.csv")
}
