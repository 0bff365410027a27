package deploycheck

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/batchd/batchd/internal/metrics"
)

var (
	alertsFile     = filepath.Join("..", "..", "deploy", "prometheus", "alerts.yml")
	alertsTestFile = filepath.Join("..", "..", "deploy", "prometheus", "alerts_test.yml")
	dashboardFile  = filepath.Join("..", "..", "deploy", "grafana", "batchd.json")
)

// targetLabels are the labels Prometheus itself puts on every series of
// the batchd scrape job (deploy/prometheus/scrape.yml).
var targetLabels = []string{"instance", "job"}

// series is one series name a query may use, with its label names.
type series struct {
	family string
	labels []string
}

// exported returns every series name batchd's /metrics can show, with its
// labels: batchd's own families (a histogram as its _bucket, _sum and
// _count) plus the Go runtime and process collectors, and Prometheus's
// synthetic "up".
func exported(t *testing.T) map[string]series {
	t.Helper()
	m := metrics.New()
	out := map[string]series{"up": {family: "up"}}
	for _, f := range m.Families() {
		switch f.Type {
		case "histogram":
			out[f.Name+"_bucket"] = series{f.Name, append(slices.Clone(f.Labels), "le")}
			out[f.Name+"_sum"] = series{f.Name, f.Labels}
			out[f.Name+"_count"] = series{f.Name, f.Labels}
		default:
			out[f.Name] = series{f.Name, f.Labels}
		}
	}
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if _, ok := out[mf.GetName()]; !ok && !strings.HasPrefix(mf.GetName(), metrics.Namespace+"_") {
			out[mf.GetName()] = series{family: mf.GetName()}
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d series names exported; the catalog is broken", len(out))
	}
	return out
}

// checkExpr reports every metric or label expr names that batchd does not
// export. It returns the label names the expr's selectors may carry.
func checkExpr(t *testing.T, where, expr string, known map[string]series) []string {
	t.Helper()
	r, err := parseRefs(expr)
	if err != nil {
		t.Errorf("%s: %v in %q", where, err, expr)
		return nil
	}
	if len(r.metrics) == 0 {
		t.Errorf("%s: names no metric: %q", where, expr)
	}
	avail := slices.Clone(targetLabels)
	for name, labels := range r.metrics {
		s, ok := known[name]
		if !ok {
			t.Errorf("%s: metric %s is not exported by batchd (internal/metrics)%s", where, name, hint(name, known))
			continue
		}
		avail = append(avail, s.labels...)
		for _, l := range labels {
			if l != "__name__" && !slices.Contains(s.labels, l) && !slices.Contains(targetLabels, l) {
				t.Errorf("%s: %s has no label %q (it has %v)", where, name, l, s.labels)
			}
		}
	}
	for _, l := range r.grouping {
		if !slices.Contains(avail, l) {
			t.Errorf("%s: groups by label %q, which none of its metrics has (%v)", where, l, avail)
		}
	}
	return avail
}

// hint names the exported series closest to a missing one.
func hint(name string, known map[string]series) string {
	var near []string
	stem := strings.TrimSuffix(strings.TrimSuffix(name, "_total"), "_seconds")
	for k := range known {
		if strings.HasPrefix(k, stem) || strings.HasPrefix(stem, strings.TrimSuffix(k, "_total")) {
			near = append(near, k)
		}
	}
	if len(near) == 0 {
		return ""
	}
	sort.Strings(near)
	return fmt.Sprintf("; did you mean %s?", strings.Join(near, " or "))
}

type rule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

func loadAlerts(t *testing.T) []rule {
	t.Helper()
	b, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []rule `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	var rules []rule
	for _, g := range doc.Groups {
		rules = append(rules, g.Rules...)
	}
	if len(rules) == 0 {
		t.Fatalf("%s has no rules", alertsFile)
	}
	return rules
}

var templateLabel = regexp.MustCompile(`\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)`)

// TestAlertsUseExportedMetrics checks every alert's expression against
// batchd's metrics, and its shape: a severity the routing knows, and a
// summary and a description for the person paged.
func TestAlertsUseExportedMetrics(t *testing.T) {
	known := exported(t)
	seen := map[string]bool{}
	for _, r := range loadAlerts(t) {
		where := "alert " + r.Alert
		if r.Alert == "" {
			t.Errorf("a rule without an alert name (recording rules belong elsewhere): %q", r.Expr)
			continue
		}
		if seen[r.Alert] {
			t.Errorf("%s: defined twice", where)
		}
		seen[r.Alert] = true
		avail := checkExpr(t, where, r.Expr, known)
		if s := r.Labels["severity"]; s != "critical" && s != "warning" {
			t.Errorf("%s: severity %q, want critical or warning", where, s)
		}
		for _, a := range []string{"summary", "description"} {
			if len(strings.Fields(r.Annotations[a])) < 3 {
				t.Errorf("%s: annotation %s is missing or too short", where, a)
			}
		}
		for _, text := range r.Annotations {
			for _, m := range templateLabel.FindAllStringSubmatch(text, -1) {
				if !slices.Contains(avail, m[1]) {
					t.Errorf("%s: annotation uses $labels.%s, which none of its metrics has", where, m[1])
				}
			}
		}
	}
}

// TestEveryAlertIsTested checks that alerts_test.yml has, for every alert,
// a case where it fires and one where it does not, and no case for an
// alert that does not exist.
func TestEveryAlertIsTested(t *testing.T) {
	b, err := os.ReadFile(alertsTestFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
				ExpAlerts []any  `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", alertsTestFile, err)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range doc.Tests {
		for _, c := range tc.AlertRuleTest {
			if len(c.ExpAlerts) > 0 {
				fires[c.Alertname] = true
			} else {
				quiet[c.Alertname] = true
			}
		}
	}
	alerts := map[string]bool{}
	for _, r := range loadAlerts(t) {
		alerts[r.Alert] = true
		if !fires[r.Alert] {
			t.Errorf("%s: no case in %s where it fires", r.Alert, alertsTestFile)
		}
		if !quiet[r.Alert] {
			t.Errorf("%s: no case in %s where it does not fire", r.Alert, alertsTestFile)
		}
	}
	for name := range fires {
		if !alerts[name] {
			t.Errorf("%s tests alert %s, which alerts.yml does not define", alertsTestFile, name)
		}
	}
}

type panel struct {
	ID         int             `json:"id"`
	Type       string          `json:"type"`
	Title      string          `json:"title"`
	Datasource json.RawMessage `json:"datasource"`
	Targets    []struct {
		Datasource   json.RawMessage `json:"datasource"`
		Expr         string          `json:"expr"`
		LegendFormat string          `json:"legendFormat"`
		RefID        string          `json:"refId"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

type dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource json.RawMessage `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
}

func loadDashboard(t *testing.T) (dashboard, []panel) {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s is not a valid dashboard JSON model: %v", dashboardFile, err)
	}
	var all []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			all = append(all, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return d, all
}

// promDS is the only datasource a panel, target or query variable may
// use: the dashboard's datasource variable, so that it imports into any
// Grafana whatever its Prometheus is called.
const promDS = `{"type":"prometheus","uid":"${datasource}"}`

func sameJSON(raw json.RawMessage, want string) bool {
	var a, b any
	if json.Unmarshal(raw, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

var (
	legendLabel = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)
	labelValues = regexp.MustCompile(`^label_values\(\s*(?:([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*)?([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$`)
)

// dashboardExpr makes a Grafana target's expression PromQL: its variables
// replaced by values of the same kind.
func dashboardExpr(expr string) string {
	return strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1d").Replace(expr)
}

// TestDashboardUsesExportedMetrics checks the Grafana dashboard: valid
// JSON, a datasource variable used by every panel, unique panel ids, and
// every metric, label and legend label its queries use exported by batchd.
func TestDashboardUsesExportedMetrics(t *testing.T) {
	known := exported(t)
	d, panels := loadDashboard(t)
	if d.Title == "" || d.UID == "" {
		t.Error("the dashboard has no title or uid")
	}
	var hasDS bool
	for _, v := range d.Templating.List {
		switch v.Type {
		case "datasource":
			hasDS = v.Name == "datasource" && sameJSON(v.Query, `"prometheus"`)
		case "query":
			if !sameJSON(v.Datasource, promDS) {
				t.Errorf("variable %s: datasource %s, want %s", v.Name, v.Datasource, promDS)
			}
			var q struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(v.Query, &q); err != nil {
				_ = json.Unmarshal(v.Query, &q.Query) // the older plain-string form
			}
			m := labelValues.FindStringSubmatch(q.Query)
			if m == nil {
				t.Errorf("variable %s: query %q is not label_values(metric, label)", v.Name, q.Query)
				continue
			}
			s, ok := known[m[1]]
			if !ok {
				t.Errorf("variable %s: metric %s is not exported by batchd", v.Name, m[1])
			} else if !slices.Contains(s.labels, m[2]) && !slices.Contains(targetLabels, m[2]) {
				t.Errorf("variable %s: %s has no label %s", v.Name, m[1], m[2])
			}
		}
	}
	if !hasDS {
		t.Error(`the dashboard has no datasource variable named "datasource" of type prometheus`)
	}
	ids := map[int]bool{}
	var queries int
	for _, p := range panels {
		where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
		if ids[p.ID] || p.ID == 0 {
			t.Errorf("%s: id missing or used twice", where)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if !sameJSON(p.Datasource, promDS) {
			t.Errorf("%s: datasource %s, want %s", where, p.Datasource, promDS)
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: no query", where)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			queries++
			if tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("%s: refId %q missing or used twice", where, tg.RefID)
			}
			refs[tg.RefID] = true
			if len(tg.Datasource) > 0 && !sameJSON(tg.Datasource, promDS) {
				t.Errorf("%s: query %s: datasource %s, want %s", where, tg.RefID, tg.Datasource, promDS)
			}
			expr := dashboardExpr(tg.Expr)
			avail := checkExpr(t, where, expr, known)
			if r, err := parseRefs(expr); err == nil {
				for name, labels := range r.metrics {
					if strings.HasPrefix(name, metrics.Namespace+"_") && !slices.Contains(labels, "instance") {
						t.Errorf(`%s: %s is not filtered by instance=~"$instance"`, where, name)
					}
				}
			}
			for _, m := range legendLabel.FindAllStringSubmatch(tg.LegendFormat, -1) {
				if !slices.Contains(avail, m[1]) {
					t.Errorf("%s: legend uses {{%s}}, which none of its metrics has", where, m[1])
				}
			}
		}
	}
	if queries == 0 {
		t.Error("the dashboard has no queries")
	}
}

// TestDashboardQueriesParse has promtool check that every dashboard query
// is valid PromQL, by checking them as recording rules. It needs promtool
// (Debian's prometheus package, which .ci/run installs), and fails loudly
// without it rather than skip.
func TestDashboardQueriesParse(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found: install it (apt-get install prometheus) to check the dashboard's queries")
	}
	_, panels := loadDashboard(t)
	type rec struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rec
	for _, p := range panels {
		for _, tg := range p.Targets {
			rules = append(rules, rec{fmt.Sprintf("dashboard:panel%d:%s", p.ID, tg.RefID), dashboardExpr(tg.Expr)})
		}
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "dashboard-queries.yml")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "rules", f).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules on the dashboard's queries: %v\n%s", err, out)
	}
}

// TestParseRefs pins down the small PromQL reader the checks rely on.
func TestParseRefs(t *testing.T) {
	r, err := parseRefs(`sum by (instance, code) (increase(batchd_api_requests_total{code=~"401|403", endpoint!="x"}[15m])) > 0
	  or absent(up{job="batchd"}) unless on (job) time() - batchd_job_last_success_timestamp_seconds offset 15m`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"batchd_api_requests_total": {"code", "endpoint"},
		"up":                        {"job"},
		"batchd_job_last_success_timestamp_seconds": {},
	}
	if fmt.Sprint(r.metrics) != fmt.Sprint(want) {
		t.Errorf("metrics = %v, want %v", r.metrics, want)
	}
	if fmt.Sprint(r.grouping) != "[instance code job]" {
		t.Errorf("grouping = %v", r.grouping)
	}
	if _, err := parseRefs(`batchd_rows{state=}`); err == nil {
		t.Error("a malformed matcher was accepted")
	}
	if _, err := parseRefs(`batchd_rows{state="x"`); err == nil {
		t.Error("an unterminated selector was accepted")
	}
}
