package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// node is a delivery body reduced to what Decode reads of it: scalar fields
// as strings and nested objects, keys lower-cased. JSON and form bodies
// become the same node, which is what makes one event sent both ways
// decode to the same Event (and the same ID). Arrays are dropped: no known
// shape puts anything Decode reads in one.
type node struct {
	vals map[string]string
	kids map[string]*node
}

func newNode() *node { return &node{vals: map[string]string{}, kids: map[string]*node{}} }

// maxDepth bounds how deep Decode looks into nested objects, including a
// JSON object carried in a string field. Known shapes need two levels.
const maxDepth = 4

// jsonHolders are the fields whose string value may itself be a JSON
// object: a form body's data= or payload= field, which some senders also
// use inside JSON.
var jsonHolders = map[string]bool{"data": true, "payload": true, "check": true, "funding_source": true}

// parseJSON reads a JSON body. Numbers keep their text, so that "25" and
// 25 read the same; the top level must be an object.
func parseJSON(b []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("JSON body: %s", jsonProblem(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("JSON body: data after the top-level value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("JSON body: top level is not an object")
	}
	return fromJSON(m, 1), nil
}

// jsonProblem describes a JSON error by its kind and offset, never by the
// text it choked on beyond what encoding/json's message holds (one
// character).
func jsonProblem(err error) string {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("%v (at byte %d)", se, se.Offset)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated"
	}
	return "not valid JSON"
}

func fromJSON(m map[string]any, depth int) *node {
	n := newNode()
	for _, key := range slices.Sorted(maps.Keys(m)) {
		v := m[key]
		k := strings.ToLower(strings.TrimSpace(key))
		if n.has(k) {
			continue
		}
		switch v := v.(type) {
		case map[string]any:
			if depth < maxDepth {
				n.kids[k] = fromJSON(v, depth+1)
			}
		case string:
			n.setString(k, v, depth)
		case json.Number:
			n.vals[k] = v.String()
		case bool:
			n.vals[k] = strconv.FormatBool(v)
		}
	}
	return n
}

// has reports whether a field named k was read already. Keys are visited
// in sorted order and the first one wins, so that a body with two
// spellings of one field ("Status" and "status") always decodes the same.
func (n *node) has(k string) bool {
	_, v := n.vals[k]
	_, o := n.kids[k]
	return v || o
}

// setString records a string field; in a field that may carry JSON, a
// string holding an object becomes a nested node instead.
func (n *node) setString(k, v string, depth int) {
	if jsonHolders[k] && depth < maxDepth {
		if t := strings.TrimSpace(v); strings.HasPrefix(t, "{") {
			var m map[string]any
			dec := json.NewDecoder(strings.NewReader(t))
			dec.UseNumber()
			if dec.Decode(&m) == nil {
				n.kids[k] = fromJSON(m, depth+1)
				return
			}
		}
	}
	n.vals[k] = strings.TrimSpace(v)
}

// parseForm reads an application/x-www-form-urlencoded body: flat fields
// (check_id=…), bracketed ones (data[check_id]=…, as PHP senders write
// nested objects) and a data= or payload= field holding JSON. Of a field
// given twice the first counts; keys are visited in sorted order, so that
// data= (JSON) is read before data[…]= fields, which then only fill gaps.
func parseForm(b []byte) (*node, error) {
	q, err := url.ParseQuery(string(b))
	if err != nil {
		return nil, errors.New("form body: invalid encoding")
	}
	root := newNode()
	for _, key := range slices.Sorted(maps.Keys(q)) {
		vs := q[key]
		if len(vs) == 0 {
			continue
		}
		path := splitBrackets(strings.ToLower(key))
		if len(path) == 0 || len(path) > maxDepth {
			continue
		}
		n := root
		for _, p := range path[:len(path)-1] {
			if n == nil {
				break
			}
			if n.kids[p] == nil && !n.has(p) {
				n.kids[p] = newNode()
			}
			n = n.kids[p] // nil when p is a scalar already: the field is dropped
		}
		if last := path[len(path)-1]; n != nil && !n.has(last) {
			n.setString(last, vs[0], len(path))
		}
	}
	return root, nil
}

// splitBrackets splits "data[check][status]" into data, check, status.
// A key that is not of that form is one name, brackets and all.
func splitBrackets(key string) []string {
	key = strings.TrimSpace(key)
	i := strings.IndexByte(key, '[')
	if i <= 0 || !strings.HasSuffix(key, "]") {
		if key == "" {
			return nil
		}
		return []string{key}
	}
	parts := []string{key[:i]}
	for _, p := range strings.Split(key[i+1:len(key)-1], "][") {
		if p == "" || strings.ContainsAny(p, "[]") {
			return []string{key}
		}
		parts = append(parts, strings.TrimSpace(p))
	}
	return parts
}
