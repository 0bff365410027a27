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

func (f factory) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help})
	f.reg.MustRegister(c)
	f.note(name, "counter", nil)
	return c
}

func (f factory) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	f.reg.MustRegister(c)
	f.note(name, "counter", labels)
	return c
}

func (f factory) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help})
	f.reg.MustRegister(g)
	f.note(name, "gauge", nil)
	return g
}

func (f factory) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	f.reg.MustRegister(g)
	f.note(name, "gauge", labels)
	return g
}

func (f factory) gaugeFunc(name, help string, fn func() float64) {
	f.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, fn))
	f.note(name, "gauge", nil)
}

func (f factory) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: name, Help: help, Buckets: buckets,
	}, labels)
	f.reg.MustRegister(h)
	f.note(name, "histogram", labels)
	return h
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
