package metrics

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// parseDir parses the non-test Go files of the package in dir (relative
// to this one).
func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no Go files in ../%s: %v", dir, err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// stringConsts returns the string values of the constants of files that
// keep returns true for (given the constant's name and the name of its
// declared type, "" when untyped).
func stringConsts(t *testing.T, files []*ast.File, keep func(name, typ string) bool) []string {
	t.Helper()
	var out []string
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				typ := ""
				if id, ok := vs.Type.(*ast.Ident); ok {
					typ = id.Name
				}
				for i, name := range vs.Names {
					if !keep(name.Name, typ) || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("constant %s is not a string literal", name.Name)
					}
					v, _ := strconv.Unquote(lit.Value)
					out = append(out, v)
				}
			}
		}
	}
	return out
}

func sameSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	got, want = sorted(got), sorted(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: the metrics pre-create %v, the source has %v", what, got, want)
	}
}

// TestPrecreatedLabelsMatchTheSource keeps the label values made at 0 by
// New equal to the values the code can record: the row states of
// internal/payment, the webhook outcomes of internal/webhook, and the
// endpoints internal/submit counts retries of. A value added there and
// not here would appear only with its first event.
func TestPrecreatedLabelsMatchTheSource(t *testing.T) {
	t.Parallel()
	states := stringConsts(t, parseDir(t, "payment"), func(_, typ string) bool { return typ == "RowState" })
	var have []string
	for _, s := range rowStates {
		have = append(have, string(s))
	}
	sameSet(t, "batchd_rows{state}", have, states)

	outcomes := stringConsts(t, parseDir(t, "webhook"), func(name, _ string) bool { return strings.HasPrefix(name, "Outcome") })
	sameSet(t, "batchd_webhook_deliveries_total{outcome}", webhookOutcomes, outcomes)

	sameSet(t, "batchd_api_retries_total{endpoint}", retriedEndpoints, retriedCalls(t, parseDir(t, "submit")))
}

// retriedCalls returns the endpoints of every call x.retried("...") in
// files, failing on a call whose argument is not a string literal (this
// test would then need to learn to read it).
func retriedCalls(t *testing.T, files []*ast.File) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "retried" || len(call.Args) != 1 {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				t.Errorf("submit calls retried with %T, not a string literal: teach retriedCalls to read it", call.Args[0])
				return true
			}
			v, _ := strconv.Unquote(lit.Value)
			seen[v] = true
			return true
		})
	}
	if len(seen) == 0 {
		t.Fatal("found no retried(...) call in internal/submit: where are retries counted now?")
	}
	var out []string
	for v := range seen {
		out = append(out, v)
	}
	return out
}

// TestFixedSeriesExistFromNew: a fresh Metrics shows every row state,
// retried endpoint and webhook outcome at 0, and SetRows still zeroes a
// state absent from its map.
func TestFixedSeriesExistFromNew(t *testing.T) {
	t.Parallel()
	m := New()
	body := scrape(t, m)
	for _, want := range []string{
		`batchd_rows{state="in_doubt"} 0`,
		`batchd_rows{state="pending"} 0`,
		`batchd_rows{state="held"} 0`,
		`batchd_api_retries_total{endpoint="check.create"} 0`,
		`batchd_api_retries_total{endpoint="check.list"} 0`,
		`batchd_webhook_deliveries_total{outcome="recorded"} 0`,
		`batchd_webhook_deliveries_total{outcome="unauthorized"} 0`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("a fresh scrape lacks %q", want)
		}
	}
	m.SetRows(map[string]int{"in_doubt": 2})
	m.SetRows(map[string]int{"pending": 1})
	if body := scrape(t, m); !strings.Contains(body, `batchd_rows{state="in_doubt"} 0`+"\n") {
		t.Error("a state absent from SetRows does not read 0")
	}
}
