package deploycheck

import (
	"fmt"
	"strings"
	"unicode"
)

// ref is what one PromQL expression names: metric selectors with the
// label names of their matchers, and the label names of its grouping
// clauses (by, without, on, ignoring, group_left, group_right).
type ref struct {
	metrics  map[string][]string // metric name -> label names matched on it
	grouping []string
}

type token struct {
	kind byte // 'i' identifier, 's' string, 'n' number or duration, 'p' punctuation
	text string
}

// lex splits a PromQL expression into tokens. It knows just enough of the
// language for ref: strings (with escapes), identifiers, numbers and
// durations, and punctuation; a range or subquery "[5m:1m]" is one token.
func lex(expr string) ([]token, error) {
	var toks []token
	rs := []rune(expr)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '#':
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
		case r == '"' || r == '\'' || r == '`':
			j := i + 1
			var b strings.Builder
			for ; j < len(rs) && rs[j] != r; j++ {
				if rs[j] == '\\' && r != '`' && j+1 < len(rs) {
					j++
				}
				b.WriteRune(rs[j])
			}
			if j >= len(rs) {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			toks = append(toks, token{'s', b.String()})
			i = j + 1
		case r == '[':
			j := i
			for j < len(rs) && rs[j] != ']' {
				j++
			}
			if j >= len(rs) {
				return nil, fmt.Errorf("unterminated [ at %d", i)
			}
			toks = append(toks, token{'p', string(rs[i : j+1])})
			i = j + 1
		case r == '_' || r == ':' || unicode.IsLetter(r):
			j := i
			for j < len(rs) && (rs[j] == '_' || rs[j] == ':' || unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j])) {
				j++
			}
			toks = append(toks, token{'i', string(rs[i:j])})
			i = j
		case unicode.IsDigit(r) || r == '.':
			j := i
			for j < len(rs) && (unicode.IsDigit(rs[j]) || unicode.IsLetter(rs[j]) || rs[j] == '.') {
				j++
			}
			toks = append(toks, token{'n', string(rs[i:j])})
			i = j
		default:
			// Two-character operators matter only inside braces (=~, !=,
			// !~), where a lone '=' or '!' never appears otherwise.
			if i+1 < len(rs) && strings.Contains("=~ != !~ == <= >=", string(rs[i:i+2])) {
				toks = append(toks, token{'p', string(rs[i : i+2])})
				i += 2
				continue
			}
			toks = append(toks, token{'p', string(r)})
			i++
		}
	}
	return toks, nil
}

// keywords are identifiers that are never metric names: operators, and
// the aggregations, which may come before their "by (...)" clause.
var keywords = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
	"and": true, "or": true, "unless": true, "offset": true, "bool": true, "atan2": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"inf": true, "nan": true, "Inf": true, "NaN": true,
}

// parseRefs returns what expr names. It is no PromQL parser (promtool
// checks the syntax); it finds selectors and grouping labels, and fails on
// a malformed selector.
func parseRefs(expr string) (ref, error) {
	toks, err := lex(expr)
	if err != nil {
		return ref{}, err
	}
	out := ref{metrics: map[string][]string{}}
	next := func(i int) token {
		if i < len(toks) {
			return toks[i]
		}
		return token{}
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind != 'i' {
			continue
		}
		switch t.text {
		case "by", "without", "on", "ignoring", "group_left", "group_right":
			if next(i+1).text != "(" {
				continue // group_left without labels
			}
			j := i + 2
			for ; j < len(toks) && toks[j].text != ")"; j++ {
				if toks[j].kind == 'i' {
					out.grouping = append(out.grouping, toks[j].text)
				} else if toks[j].text != "," {
					return ref{}, fmt.Errorf("unexpected %q in %s (...)", toks[j].text, t.text)
				}
			}
			i = j
			continue
		}
		if keywords[t.text] || next(i+1).text == "(" {
			continue // a keyword, or a function or aggregation
		}
		labels := out.metrics[t.text]
		if labels == nil {
			labels = []string{}
		}
		if next(i+1).text == "{" {
			j := i + 2
			for ; j < len(toks) && toks[j].text != "}"; j++ {
				if toks[j].text == "," {
					continue
				}
				if toks[j].kind != 'i' || !isMatchOp(next(j+1).text) || next(j+2).kind != 's' {
					return ref{}, fmt.Errorf("malformed matcher in the selector of %s", t.text)
				}
				labels = append(labels, toks[j].text)
				j += 2
			}
			if j >= len(toks) {
				return ref{}, fmt.Errorf("unterminated selector of %s", t.text)
			}
			i = j
		}
		out.metrics[t.text] = labels
	}
	return out, nil
}

func isMatchOp(s string) bool { return s == "=" || s == "!=" || s == "=~" || s == "!~" }
