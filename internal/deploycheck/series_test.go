package deploycheck

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/daemon"
	"github.com/batchd/batchd/internal/metrics"
)

// This file checks that a fresh daemon's first scrape already holds every
// series the alert rules and the dashboard select, at 0: a selector that
// matches nothing shows "No data", and an alert on increase() misses the
// first event of a series that appears at 1.
//
// The selectors are read with a small reader of the PromQL subset the
// deploy/ files use (selectors(), below), not with the Prometheus
// parser: github.com/prometheus/prometheus is not a dependency of batchd,
// and is too heavy a module to add for a test. promtool checks the syntax
// of both files (make test, TestDashboardQueriesParse); evaluating the
// expressions with a real Prometheus server is left to a later check.

// daemonJobs are the jobs `batchd run` schedules (cmd/batchd/run.go's
// build), with backup, webhook and prune all enabled: the scheduler makes
// each job's series (metrics.InitJob) when it is created.
var daemonJobs = []string{"ingest", "submit", "reconcile", "backup", "webhook", "prune"}

// firstEventOnly are families whose series appear with their first event,
// by design; for them the test checks only that batchd exports the family.
// None today: the API families are made at 0 for the endpoints and codes
// the rules and dashboard select (metrics/initial.go).
var firstEventOnly = map[string]string{}

// matcher is one label matcher of a selector.
type matcher struct {
	label, op, value string
}

// selector is one vector or range selector: a metric name and its
// matchers.
type selector struct {
	name     string
	matchers []matcher
}

func (s selector) String() string {
	var ms []string
	for _, m := range s.matchers {
		ms = append(ms, fmt.Sprintf("%s%s%q", m.label, m.op, m.value))
	}
	return s.name + "{" + strings.Join(ms, ", ") + "}"
}

// selectors returns every selector of expr, with its matchers. Like
// parseRefs (promql_test.go) it skips keywords, functions, aggregations
// and grouping clauses; a selector without a metric name must name it
// with __name__="...".
func selectors(expr string) ([]selector, error) {
	toks, err := lex(expr)
	if err != nil {
		return nil, err
	}
	at := func(i int) token {
		if i < len(toks) {
			return toks[i]
		}
		return token{}
	}
	var out []selector
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == 'i' && slices.Contains([]string{"by", "without", "on", "ignoring", "group_left", "group_right"}, t.text):
			if at(i+1).text == "(" {
				for i += 2; i < len(toks) && toks[i].text != ")"; i++ {
				}
			}
		case t.kind == 'i' && !keywords[t.text] && at(i+1).text != "(":
			s := selector{name: t.text}
			if at(i+1).text == "{" {
				if s.matchers, i, err = readMatchers(toks, i+1); err != nil {
					return nil, fmt.Errorf("selector of %s: %w", t.text, err)
				}
			}
			out = append(out, s)
		case t.text == "{":
			var s selector
			if s.matchers, i, err = readMatchers(toks, i); err != nil {
				return nil, err
			}
			for _, m := range s.matchers {
				if m.label == "__name__" && m.op == "=" {
					s.name = m.value
				}
			}
			if s.name == "" {
				return nil, fmt.Errorf("a selector without a metric name: %v", s)
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// readMatchers reads the matchers of the braces opening at toks[open], and
// returns them with the index of the closing brace.
func readMatchers(toks []token, open int) ([]matcher, int, error) {
	var ms []matcher
	i := open + 1
	for ; i < len(toks) && toks[i].text != "}"; i++ {
		if toks[i].text == "," {
			continue
		}
		if i+2 >= len(toks) || toks[i].kind != 'i' || !isMatchOp(toks[i+1].text) || toks[i+2].kind != 's' {
			return nil, 0, fmt.Errorf("malformed matcher at %q", toks[i].text)
		}
		ms = append(ms, matcher{toks[i].text, toks[i+1].text, toks[i+2].text})
		i += 2
	}
	if i >= len(toks) {
		return nil, 0, fmt.Errorf("unterminated selector")
	}
	return ms, i, nil
}

// matches reports whether value satisfies m, as Prometheus matches: a
// regular expression is anchored at both ends, and a missing label is "".
func (m matcher) matches(value string) (bool, error) {
	switch m.op {
	case "=":
		return value == m.value, nil
	case "!=":
		return value != m.value, nil
	}
	re, err := regexp.Compile("^(?:" + m.value + ")$")
	if err != nil {
		return false, fmt.Errorf("matcher %s%s%q: %w", m.label, m.op, m.value, err)
	}
	return re.MatchString(value) == (m.op == "=~"), nil
}

// freshScrape returns the series of a fresh daemon's metrics, before any
// run: series name -> the label sets of its series. A histogram's series
// are listed under their _bucket (with le), _sum and _count names. It
// fails on a batchd series that does not read 0.
func freshScrape(t *testing.T) map[string][]map[string]string {
	t.Helper()
	m := metrics.New()
	var jobs []daemon.Job
	for _, name := range daemonJobs {
		jobs = append(jobs, daemon.Job{Name: name, Spec: "@every 5m",
			Run: func(context.Context) (string, error) { return "", nil }})
	}
	if _, err := daemon.New(jobs, daemon.Options{Metrics: m}); err != nil {
		t.Fatal(err)
	}
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string][]map[string]string{}
	for _, mf := range mfs {
		name := mf.GetName()
		batchd := strings.HasPrefix(name, metrics.Namespace+"_")
		for _, mt := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range mt.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			if h := mt.GetHistogram(); h != nil {
				for _, b := range h.GetBucket() {
					out[name+"_bucket"] = append(out[name+"_bucket"], with(labels, "le", strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)))
				}
				out[name+"_bucket"] = append(out[name+"_bucket"], with(labels, "le", "+Inf"))
				out[name+"_sum"] = append(out[name+"_sum"], labels)
				out[name+"_count"] = append(out[name+"_count"], labels)
				if batchd && h.GetSampleCount() != 0 {
					t.Errorf("fresh scrape: %s%v has %d samples, want 0", name, labels, h.GetSampleCount())
				}
				continue
			}
			out[name] = append(out[name], labels)
			if v := mt.GetCounter().GetValue() + mt.GetGauge().GetValue(); batchd && v != 0 {
				t.Errorf("fresh scrape: %s%v = %v, want 0", name, labels, v)
			}
		}
	}
	return out
}

func with(labels map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for lk, lv := range labels {
		out[lk] = lv
	}
	return out
}

// selected returns how many scraped series s selects. A matcher on a
// target label (instance, job) that the series does not carry itself is
// Prometheus's to satisfy, and is skipped.
func selected(s selector, series []map[string]string) (int, error) {
	n := 0
	for _, labels := range series {
		ok := true
		for _, m := range s.matchers {
			v, has := labels[m.label]
			if m.label == "__name__" || (!has && slices.Contains(targetLabels, m.label)) {
				continue
			}
			hit, err := m.matches(v)
			if err != nil {
				return 0, err
			}
			ok = ok && hit
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// reporter is the part of testing.T checkFresh uses, so that a test can
// catch what it reports.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// recorder is a reporter that keeps the messages.
type recorder struct{ msgs []string }

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

// checkFresh fails unless every selector of expr selects a series of the
// fresh scrape, or names a family of firstEventOnly that batchd exports.
func checkFresh(t reporter, where, expr string, scraped map[string][]map[string]string, known map[string]series) {
	t.Helper()
	sels, err := selectors(expr)
	if err != nil {
		t.Errorf("%s: %v in %q", where, err, expr)
		return
	}
	if len(sels) == 0 {
		t.Errorf("%s: no selector found in %q", where, expr)
	}
	for _, s := range sels {
		if s.name == "up" {
			continue // Prometheus's own series for the scrape
		}
		if _, ok := known[s.name]; !ok {
			t.Errorf("%s: %s is not exported by batchd at all", where, s.name)
			continue
		}
		if _, ok := firstEventOnly[s.name]; ok {
			continue
		}
		n, err := selected(s, scraped[s.name])
		if err != nil {
			t.Errorf("%s: %v", where, err)
		} else if n == 0 {
			t.Errorf("%s: a fresh daemon's scrape has no series for %s (it has %v)", where, s, labelSets(scraped[s.name]))
		}
	}
}

func labelSets(series []map[string]string) []string {
	var out []string
	for _, l := range series {
		out = append(out, fmt.Sprint(l))
	}
	sort.Strings(out)
	return out
}

// TestFreshDaemonHasEverySeries is issue 20's "every series from the
// start": every selector of every alert rule, dashboard query and
// dashboard variable matches a series of a fresh daemon's first scrape,
// at 0, save the families firstEventOnly explains.
func TestFreshDaemonHasEverySeries(t *testing.T) {
	scraped := freshScrape(t)
	known := exported(t)
	for _, r := range loadAlerts(t) {
		checkFresh(t, "alert "+r.Alert, r.Expr, scraped, known)
	}
	d, panels := loadDashboard(t)
	for _, p := range panels {
		for _, tg := range p.Targets {
			checkFresh(t, fmt.Sprintf("panel %d %q query %s", p.ID, p.Title, tg.RefID), dashboardExpr(tg.Expr), scraped, known)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			_ = json.Unmarshal(v.Query, &q.Query) // the older plain-string form
		}
		if m := labelValues.FindStringSubmatch(q.Query); m != nil && m[1] != "" {
			checkFresh(t, "variable "+v.Name, m[1], scraped, known)
		}
	}
	for name := range firstEventOnly {
		if _, ok := known[name]; !ok {
			t.Errorf("firstEventOnly names %s, which batchd does not export", name)
		}
	}
}

// TestSelectors pins down the selector reader, and that the fresh-scrape
// check fails on a metric batchd does not export, naming it.
func TestSelectors(t *testing.T) {
	sels, err := selectors(`sum by (instance, code) (increase(batchd_api_requests_total{code=~"401|403", endpoint!="x"}[15m])) > 0
	  or absent(up{job="batchd"}) unless on (job) time() - batchd_job_last_success_timestamp_seconds offset 15m
	  or {__name__="batchd_rows", state="in_doubt"} + on (instance) group_left () batchd_leader`)
	if err != nil {
		t.Fatal(err)
	}
	want := `[batchd_api_requests_total{code=~"401|403", endpoint!="x"} up{job="batchd"} ` +
		`batchd_job_last_success_timestamp_seconds{} batchd_rows{__name__="batchd_rows", state="in_doubt"} batchd_leader{}]`
	if fmt.Sprint(sels) != want {
		t.Errorf("selectors =\n%v, want\n%s", sels, want)
	}
	for _, bad := range []string{`batchd_rows{state=}`, `batchd_rows{state="x"`, `{state="x"}`} {
		if _, err := selectors(bad); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}

	scraped := map[string][]map[string]string{"batchd_rows": {{"state": "pending"}, {"state": "in_doubt"}}}
	known := map[string]series{"batchd_rows": {family: "batchd_rows", labels: []string{"state"}}}
	for expr, wantErr := range map[string]string{
		`batchd_rows{state="in_doubt", instance=~"$instance"}`: "",
		`batchd_rows{state=~"in_.*"}`:                          "",
		`batchd_rows{state!~"pending|in_doubt"}`:               "no series for batchd_rows",
		`batchd_rows{state="held"}`:                            "no series for batchd_rows",
		`batchd_rows{job="x"}`:                                 "",
		`batchd_nonesuch_total`:                                "batchd_nonesuch_total is not exported by batchd at all",
	} {
		rec := &recorder{}
		checkFresh(rec, "test", expr, scraped, known)
		if got := strings.Join(rec.msgs, "; "); (wantErr == "") != (got == "") || !strings.Contains(got, wantErr) {
			t.Errorf("%s: error %q, want one containing %q", expr, got, wantErr)
		}
	}
}
