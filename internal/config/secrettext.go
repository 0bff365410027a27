package config

import "strings"

// secretText is a configured file holding one credential as text (an API
// key, a DSN, a token). Every such file is read one way, so that each gets
// ReadSecretFile's checks (private to its owner, bounded), is trimmed the
// same, and is refused with a finding that names the key and the path but
// never the contents.
type secretText struct {
	key   string // the config key naming the file, for findings
	limit int64  // the most bytes read; a larger file is the wrong one
	// check refuses trimmed text that cannot be this credential; its
	// words never quote the text.
	check func(text string) error
}

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

// fileFinding is the finding for a file named by key that cannot be used:
// the key, the path (through showValue) and why.
func fileFinding(key, path string, err error) *FieldError {
	return &FieldError{Key: key, Msg: key + " " + showValue(path) + ": " + err.Error(), Err: err}
}
