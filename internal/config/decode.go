package config

import (
	"math"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// decoder walks a yaml.Node tree into a Config by the struct's yaml tags.
// Walking the tree ourselves, rather than yaml.Decoder with KnownFields,
// gives every finding a key path and a line, collects all of them instead
// of stopping at the first, and lets ${VAR} expansion apply to values only.
type decoder struct {
	env   Env
	errs  findings
	lines map[string]int // key path -> line where it was set
}

var durationType = reflect.TypeFor[Duration]()

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, prefix string) {
	n = deref(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errs.add(n.Line, prefix, "%s: want a mapping of keys, got %s", where(prefix), describe(n))
		return
	}
	seen := make(map[string]int)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errs.add(k.Line, prefix, "%s: keys must be plain names, got %s", where(prefix), describe(k))
			continue
		}
		path := joinPath(prefix, k.Value)
		if k.Tag == "!!merge" {
			d.errs.add(k.Line, path, "merge keys (<<) are not supported in %s; write the keys out", where(prefix))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.errs.add(k.Line, path, "duplicate key %s (first set on line %d)", showKey(path), first)
			continue
		}
		seen[k.Value] = k.Line
		f, ok := fieldByTag(v, k.Value)
		if !ok {
			d.errs.add(k.Line, path, "unknown key %s%s", showKey(path), unknownHint(v.Type(), prefix, k.Value))
			continue
		}
		d.lines[path] = k.Line
		d.value(val, f, path)
	}
}

func (d *decoder) value(n *yaml.Node, f reflect.Value, path string) {
	n = deref(n)
	t := f.Type()
	switch {
	case t == durationType:
		if s, ok := d.scalar(n, path, "a duration such as \"30s\""); ok {
			v, err := ParseDuration(s)
			if err != nil {
				d.errs.add(n.Line, path, "%s: %v", path, err)
				return
			}
			f.Set(reflect.ValueOf(v))
		}
	case t.Kind() == reflect.Struct:
		d.mapping(n, f, path)
	case t.Kind() == reflect.String:
		if isNull(n) {
			f.SetString("")
			return
		}
		if s, ok := d.scalar(n, path, "a string"); ok {
			f.SetString(s)
		}
	case t.Kind() == reflect.Bool:
		if s, ok := d.scalar(n, path, "true or false"); ok {
			switch s {
			case "true", "True", "TRUE":
				f.SetBool(true)
			case "false", "False", "FALSE":
				f.SetBool(false)
			default:
				d.errs.add(n.Line, path, "%s: want true or false, got %s", path, showValue(s))
			}
		}
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		if s, ok := d.scalar(n, path, "an integer"); ok {
			v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil || f.OverflowInt(v) {
				d.errs.add(n.Line, path, "%s: want an integer, got %s", path, showValue(s))
				return
			}
			f.SetInt(v)
		}
	case t.Kind() == reflect.Float64:
		if s, ok := d.scalar(n, path, "a number"); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				d.errs.add(n.Line, path, "%s: want a number, got %s", path, showValue(s))
				return
			}
			f.SetFloat(v)
		}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		d.stringList(n, f, path)
	default:
		// Only reachable if a field of an unsupported type is added to Config.
		panic("config: no decoder for field " + path + " of type " + t.String())
	}
}

// scalar returns the expanded text of a scalar node, or reports why the
// node cannot be a want.
func (d *decoder) scalar(n *yaml.Node, path, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.errs.add(n.Line, path, "%s: want %s, got %s", path, want, describe(n))
		return "", false
	}
	s, err := expand(n.Value, d.env)
	if err != nil {
		d.errs.add(n.Line, path, "%s: %v", path, err)
		return "", false
	}
	return s, true
}

func (d *decoder) stringList(n *yaml.Node, f reflect.Value, path string) {
	if isNull(n) {
		f.Set(reflect.MakeSlice(f.Type(), 0, 0))
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errs.add(n.Line, path, "%s: want a list such as [a, b], got %s", path, describe(n))
		return
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for i, item := range n.Content {
		item = deref(item)
		ipath := path + "[" + strconv.Itoa(i) + "]"
		d.lines[ipath] = item.Line
		s, good := d.scalar(item, ipath, "a string")
		ok = ok && good
		out = append(out, s)
	}
	if ok {
		f.Set(reflect.ValueOf(out))
	}
}

// fieldByTag finds the field of struct v whose yaml tag is name.
func fieldByTag(v reflect.Value, name string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		if tag, _, _ := strings.Cut(sf.Tag.Get("yaml"), ","); tag == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// deref follows aliases (*anchor) to the node they name. yaml.v3 never
// makes an alias of an alias, but the bound keeps a malformed tree finite.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; i < 8 && n.Kind == yaml.AliasNode && n.Alias != nil; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// describe names what a node is, for "want X, got Y" messages.
func describe(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "an empty value"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.AliasNode:
		return "an alias"
	case n.Kind == yaml.ScalarNode:
		return showValue(n.Value)
	}
	return "a YAML node of kind " + strconv.Itoa(int(n.Kind))
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// where names a mapping for messages: its path, or "the top level".
func where(prefix string) string {
	if prefix == "" {
		return "the top level"
	}
	return showKey(prefix)
}
