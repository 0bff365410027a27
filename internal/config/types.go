package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/batchd/batchd/internal/redact"
)

// Env looks up an environment variable the way os.LookupEnv does: the value
// and whether the variable is set. Load and Parse read the environment only
// through it, so tests inject variables without touching the process. A nil
// Env has no variables.
type Env func(name string) (value string, ok bool)

// OSEnv is the process environment, for main.
func OSEnv(name string) (string, bool) { return os.LookupEnv(name) }

// MapEnv returns an Env holding exactly the variables in m, for tests.
func MapEnv(m map[string]string) Env {
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

func (e Env) lookup(name string) (string, bool) {
	if e == nil {
		return "", false
	}
	return e(name)
}

// Duration is a time.Duration written in YAML as a Go duration string such
// as "30s", "2m" or "1h30m". A bare number is rejected, because its unit
// would be a guess.
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String formats d like time.Duration does ("1m0s").
func (d Duration) String() string { return time.Duration(d).String() }

// ParseDuration parses a Go duration string into a Duration.
func ParseDuration(s string) (Duration, error) {
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("want a duration such as \"30s\" or \"2m\", got %s", showValue(s))
	}
	return Duration(v), nil
}

// UnmarshalYAML decodes a duration string, for callers that decode YAML
// with yaml.v3 directly. Load does not go through it: it decodes every
// field itself so that errors carry key paths.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration string", n.Line)
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = v
	return nil
}

// MarshalYAML writes d as a duration string, so that a Config round-trips.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// MarshalText writes d as a duration string (JSON, slog's JSON handler).
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses a duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Secret holds a credential so that it cannot reach a log line or an error
// by accident: every formatting path (fmt verbs, slog, JSON, text) shows
// only redact.Secret's description ("sk_test_…(32 chars)"). The value is
// behind a pointer, and inside a closure, so that even a reflective dump of
// a struct holding a Secret in an unexported field, where fmt calls no
// method (as for %s or %d of a Config, whose wrong-verb path prints the
// fields' values), prints addresses, not the key. Reveal returns the value
// for the one place that needs it.
type Secret struct{ v *secretValue }

type secretValue struct{ get func() string }

// NewSecret wraps s, trimming surrounding whitespace.
func NewSecret(s string) Secret {
	s = strings.TrimSpace(s)
	if s == "" {
		return Secret{}
	}
	return Secret{v: &secretValue{get: func() string { return s }}}
}

// Reveal returns the secret's value.
func (s Secret) Reveal() string {
	if s.v == nil {
		return ""
	}
	return s.v.get()
}

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.Reveal() == "" }

// String describes the secret without revealing it.
func (s Secret) String() string {
	if s.IsZero() {
		return "(unset)"
	}
	return redact.Secret(s.Reveal())
}

// GoString makes %#v as safe as %v.
func (s Secret) GoString() string { return "config.Secret(" + s.String() + ")" }

// Format makes every fmt verb (%s, %q, %x, %v, %+v …) print String.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, s.GoString())
		return
	}
	fmt.Fprint(f, s.String())
}

// LogValue makes slog print String.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText makes encoders print String.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// MarshalJSON makes encoding/json print String.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }
