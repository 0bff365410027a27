package daemon

import (
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/batchd/batchd/internal/metrics"
)

// gather returns the value of the series name{labels} (a histogram's
// sample count), failing the test when it does not exist.
func gather(t *testing.T, m *metrics.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, mt := range mf.GetMetric() {
			if !labelsMatch(mt, labels) {
				continue
			}
			switch {
			case mt.Counter != nil:
				return mt.GetCounter().GetValue()
			case mt.Gauge != nil:
				return mt.GetGauge().GetValue()
			case mt.Histogram != nil:
				return float64(mt.GetHistogram().GetSampleCount())
			}
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

func labelsMatch(mt *dto.Metric, want map[string]string) bool {
	n := 0
	for _, lp := range mt.GetLabel() {
		if v, ok := want[lp.GetName()]; ok {
			if v != lp.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}
