package metrics

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"
)

// factory creates collectors named batchd_<name> and registers them on one
// registry; registration can only fail on a programming error (a duplicate
// name), hence MustRegister. It also records each family in a catalog (see
// Families), so that what the deploy/ rules and dashboard reference can be
// checked against what batchd exports.
type factory struct {
	reg     *prometheus.Registry
	catalog *[]Family
}

// Family describes one metric family batchd exports.
type Family struct {
	Name   string   // full name, such as "batchd_rows"
	Type   string   // "counter", "gauge" or "histogram"
	Labels []string // its label names, such as ["state"]
}

func (f factory) note(name, typ string, labels []string) {
	*f.catalog = append(*f.catalog, Family{Name: Namespace + "_" + name, Type: typ, Labels: append([]string(nil), labels...)})
}

// register registers c and notes it in the catalogue: every constructor
// below goes through it, so no family is served without being listed.
func register[C prometheus.Collector](f factory, c C, name, typ string, labels []string) C {
	f.reg.MustRegister(c)
	f.note(name, typ, labels)
	return c
}

func (f factory) counter(name, help string) prometheus.Counter {
	return register(f, prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}), name, "counter", nil)
}

func (f factory) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return register(f, prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels), name, "counter", labels)
}

func (f factory) gauge(name, help string) prometheus.Gauge {
	return register(f, prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}), name, "gauge", nil)
}

func (f factory) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return register(f, prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, labels), name, "gauge", labels)
}

func (f factory) gaugeFunc(name, help string, fn func() float64) {
	register(f, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, fn), name, "gauge", nil)
}

func (f factory) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return register(f, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: name, Help: help, Buckets: buckets,
	}, labels), name, "histogram", labels)
}

// Families lists batchd's own metric families (not the Go runtime and
// process collectors), sorted by name, whether or not they have a series
// yet. A histogram's series add _bucket, _sum and _count to its name.
func (m *Metrics) Families() []Family {
	if m == nil {
		return nil
	}
	out := make([]Family, len(m.catalog))
	for i, f := range m.catalog {
		out[i] = Family{Name: f.Name, Type: f.Type, Labels: append([]string(nil), f.Labels...)}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
