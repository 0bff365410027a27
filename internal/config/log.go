package config

import (
	"log/slog"
	"reflect"
	"strings"
)

// LogValue renders the configuration for a startup log line: every key
// under its YAML name, durations as "30s", and the API key only as
// redact.Secret describes it (prefix and length).
func (c *Config) LogValue() slog.Value {
	attrs := structAttrs(reflect.ValueOf(c).Elem())
	for i, a := range attrs {
		if a.Key == "api" {
			group := append(a.Value.Group(), slog.Any("key", c.apiKey))
			attrs[i] = slog.Attr{Key: "api", Value: slog.GroupValue(group...)}
		}
	}
	return slog.GroupValue(attrs...)
}

func structAttrs(v reflect.Value) []slog.Attr {
	t := v.Type()
	var attrs []slog.Attr
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		f := v.Field(i)
		switch {
		case f.Type() == durationType:
			attrs = append(attrs, slog.String(name, f.Interface().(Duration).String()))
		case f.Kind() == reflect.Struct:
			attrs = append(attrs, slog.Attr{Key: name, Value: slog.GroupValue(structAttrs(f)...)})
		default:
			attrs = append(attrs, slog.Any(name, f.Interface()))
		}
	}
	return attrs
}
