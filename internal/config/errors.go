package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/batchd/batchd/internal/redact"
)

// FieldError is one finding about a configuration: a syntax problem, an
// unknown key, a value of the wrong type or an invalid value. Load, Parse
// and Validate return every finding joined with errors.Join; use errors.As
// to pick them apart. No FieldError holds or prints the API key.
type FieldError struct {
	File string // the file name given to Load or Parse; empty from Validate
	Line int    // 1-based YAML line; 0 when not known
	Key  string // dotted key path such as "api.rate" or "submit.void_on_risk[1]"
	Msg  string // the finding, naming Key
	Err  error  // the underlying error, if any (such as fs.ErrNotExist)
}

// Error formats the finding as "file: line N: msg".
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Line > 0 {
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying error.
func (e *FieldError) Unwrap() error { return e.Err }

// findings collects FieldErrors in the order they are found.
type findings []*FieldError

func (f *findings) add(line int, key, format string, args ...any) {
	*f = append(*f, &FieldError{Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// join sorts findings by line (unknown lines last) and joins them; nil when
// there are none.
func (f findings) join() error {
	if len(f) == 0 {
		return nil
	}
	sorted := slices.Clone(f)
	slices.SortStableFunc(sorted, func(a, b *FieldError) int {
		return cmp.Compare(lineOrder(a.Line), lineOrder(b.Line))
	})
	errs := make([]error, len(sorted))
	for i, e := range sorted {
		errs[i] = e
	}
	return errors.Join(errs...)
}

func lineOrder(l int) int {
	if l <= 0 {
		return int(^uint(0) >> 1)
	}
	return l
}

// maxShown bounds how much of a value an error message quotes.
const maxShown = 60

// showValue quotes a value from the file or the environment for an error
// message. Anything that looks like an API key is described, not shown:
// an administrator may paste a key into the wrong field, and ${VAR}
// expansion may pull one in.
func showValue(s string) string {
	if looksSecret(s) {
		return withheld(s)
	}
	if len(s) > maxShown {
		return strconv.Quote(s[:maxShown]) + "…"
	}
	return strconv.Quote(s)
}

// withheld describes a value that looks like it holds an API key.
func withheld(s string) string {
	if strings.HasPrefix(s, "sk_test_") || strings.HasPrefix(s, "sk_live_") {
		return redact.Secret(s)
	}
	return "(withheld: it looks like it holds an API key)"
}

// showKey prints a key path, with the same care as showValue.
func showKey(k string) string {
	if looksSecret(k) {
		return withheld(k)
	}
	if len(k) > maxShown {
		return k[:maxShown] + "…"
	}
	return k
}

func looksSecret(s string) bool {
	return strings.Contains(s, "sk_test_") || strings.Contains(s, "sk_live_")
}

// safeErr is err's text for a message, unless that text quotes something
// that looks like an API key (library errors often quote their input).
func safeErr(err error) string {
	if msg := err.Error(); !looksSecret(msg) {
		return msg
	}
	return "invalid (details withheld: they would quote a secret)"
}
