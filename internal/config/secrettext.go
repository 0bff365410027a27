package config

import (
	"errors"
	"strings"
)

// secretText is a configured file holding one credential as text (an API
// key, a DSN, a token). Every such file is read one way, so that each gets
// ReadSecretFile's checks (private to its owner, bounded), is trimmed the
// same, and is refused with a finding that names the key and the path but
// never the contents.
type secretText struct {
	key   string // the config key naming the file, for findings
	limit int64  // the most bytes read; a larger file is the wrong one
	empty string // the words for an empty file; "" when problem says it
	// problem says why trimmed text cannot be this credential ("" when
	// it can), in words that never quote the text; about leads them.
	problem func(text string) string
	about   string
}

// The credential files with a fixed key; tokenFile makes the others.
var (
	apiKeyFile = secretText{key: "api.key_file", limit: maxKeyFileBytes, empty: "the key file is empty",
		problem: keyShapeProblem, about: "the key file's contents are not an API key: "}
	dsnFile = secretText{key: "state.postgres_dsn_file", limit: maxDSNFileBytes, empty: "the file is empty; it should hold the PostgreSQL DSN",
		problem: dsnShapeProblem, about: "the file's contents (not shown): "}
)

// load reads path and sets *dst to its trimmed text; on a finding *dst
// is left as it was.
func (s secretText) load(dst *Secret, path string, env Env) *FieldError {
	b, err := ReadSecretFile(path, s.limit, env)
	if err != nil {
		return fileFinding(s.key, path, err)
	}
	defer clear(b)
	text := strings.TrimSpace(string(b))
	if err := s.check(text); err != nil {
		return fileFinding(s.key, path, err)
	}
	*dst = NewSecret(text)
	return nil
}

// check is the error for text that cannot be this credential, nil when it can.
func (s secretText) check(text string) error {
	if text == "" && s.empty != "" {
		return errors.New(s.empty)
	}
	if msg := s.problem(text); msg != "" {
		return errors.New(s.about + msg)
	}
	return nil
}

// fileFinding is the finding for a file named by key that cannot be used:
// the key, the path (through showValue) and why.
func fileFinding(key, path string, err error) *FieldError {
	return &FieldError{Key: key, Msg: key + " " + showValue(path) + ": " + err.Error(), Err: err}
}
