package jobs

import (
	"context"
	"testing"

	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/metrics"
)

// counterValue reads a label-less counter of m by its full name.
func counterValue(t *testing.T, m *metrics.Metrics, name string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no counter %s", name)
	return 0
}

func TestFileCounterClassifies(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	count := FileCounter(m)
	for _, o := range []ingest.Result{ingest.Accepted, ingest.AcceptedWithRejects, ingest.Recovered, ingest.Rejected,
		ingest.Unreadable, ingest.Empty, ingest.Duplicate, ingest.TooLarge, ingest.Waiting, ingest.Ignored, ingest.Failed} {
		count(ingest.Outcome{File: string(o) + ".csv", Outcome: o})
	}
	if got := counterValue(t, m, "batchd_files_ingested_total"); got != 3 {
		t.Errorf("files ingested = %v, want 3 (accepted, with rejects, recovered)", got)
	}
	if got := counterValue(t, m, "batchd_files_rejected_total"); got != 5 {
		t.Errorf("files rejected = %v, want 5 (rejected, unreadable, empty, duplicate, too large); waiting, ignored and error are neither", got)
	}
	FileCounter(nil)(ingest.Outcome{Outcome: "accepted"}) // no metrics: no panic
}

// TestIngestCountsFilesAsTheyAreSettled: over a real sshd, the files
// counters move while the run goes on, file by file, and the scheduled
// ingest does not count them again at its end.
func TestIngestCountsFilesAsTheyAreSettled(t *testing.T) {
	c := newCycle(t)
	m := metrics.New()
	var during []float64 // files ingested + rejected as each file settled
	count := FileCounter(m)
	c.env.hooks.OnIngestOutcome = func(o ingest.Outcome) {
		count(o)
		during = append(during, counterValue(t, m, "batchd_files_ingested_total")+counterValue(t, m, "batchd_files_rejected_total"))
	}
	c.env.ingest = ingest.New(c.env.DB, c.env.ingestOptions())
	c.drop("a.csv", "amount,memo,name,email,bank_routing,bank_account\n100.00,pay,Ann,ann@example.com,999900001,1111000016\n")
	c.drop("b.csv", "amount,memo,name,email,bank_routing,bank_account\n200.00,pay,Bob,bob@example.com,999900001,1111000024\n")
	c.drop("c.csv", "not,a,payment,header\n1,2,3,4\n")
	sum, err := Scheduled{Env: c.env, Metrics: m}.Ingest(context.Background())
	if err != nil {
		t.Fatalf("ingest: %v (%s)", err, sum)
	}
	if len(during) != 3 || during[0] != 1 || during[1] != 2 || during[2] != 3 {
		t.Errorf("counters as each file settled = %v, want [1 2 3]", during)
	}
	if got := counterValue(t, m, "batchd_files_ingested_total"); got != 2 {
		t.Errorf("files ingested = %v, want 2 (%s)", got, sum)
	}
	if got := counterValue(t, m, "batchd_files_rejected_total"); got != 1 {
		t.Errorf("files rejected = %v, want 1 (%s)", got, sum)
	}
}
