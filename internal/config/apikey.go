package config

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode"
)

// maxKeyFileBytes bounds the read of api.key_file: a key is tens of bytes,
// so anything larger is the wrong file, and it should not be read whole.
const maxKeyFileBytes = 4096

// loadAPIKey sets c.apiKey from api.key_file, or from $BATCHD_API_KEY when
// key_file is empty. The file wins when both are set, so that a stray
// variable in a shell cannot override the credential systemd provides.
// No finding quotes the key or the file's contents.
func (c *Config) loadAPIKey(env Env) *FieldError {
	if c.API.KeyFile == "" {
		v, _ := env.lookup(EnvAPIKey)
		c.apiKey = NewSecret(v)
		if c.apiKey.IsZero() {
			return &FieldError{Key: "api.key_file", Msg: "no API key: set api.key_file to a file holding it, or set $" + EnvAPIKey}
		}
		if msg := keyShapeProblem(c.apiKey.Reveal()); msg != "" {
			return &FieldError{Key: "api.key_file", Msg: "$" + EnvAPIKey + ": " + msg}
		}
		return nil
	}
	return apiKeyFile.load(&c.apiKey, c.API.KeyFile, env)
}

// describeFileErr keeps the reason of an *fs.PathError but not its path
// (the caller names the path, through showValue), and keeps it for
// errors.Is(err, fs.ErrNotExist).
func describeFileErr(what string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", what, pe.Err)
	}
	return fmt.Errorf("%s: %s", what, safeErr(err))
}

// keyShapeProblem rejects what would break the Authorization header or
// could not be checked against api.mode.
func keyShapeProblem(key string) string {
	for _, r := range key {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r > unicode.MaxASCII {
			return "it contains spaces, line breaks or other characters an API key does not have"
		}
	}
	if !strings.HasPrefix(key, "sk_test_") && !strings.HasPrefix(key, "sk_live_") {
		return "it starts with neither sk_test_ nor sk_live_ (batchd needs a secret key)"
	}
	return ""
}

// keyModeProblem explains a missing key or one whose prefix disagrees with
// mode, quoting only the prefix.
func keyModeProblem(key, mode string) string {
	switch {
	case key == "":
		return "no API key: set api.key_file to a file holding it, or set $" + EnvAPIKey
	case mode == ModeLive && strings.HasPrefix(key, "sk_test_"):
		return `api.mode is "live" but the API key is a test key (sk_test_…); use a live key or set api.mode: test`
	case mode == ModeTest && strings.HasPrefix(key, "sk_live_"):
		return `api.mode is "test" but the API key is a live key (sk_live_…); use a test key or set api.mode: live`
	case !strings.HasPrefix(key, "sk_test_") && !strings.HasPrefix(key, "sk_live_"):
		return "api.mode: the API key starts with neither sk_test_ nor sk_live_, so its mode cannot be checked"
	}
	return ""
}
