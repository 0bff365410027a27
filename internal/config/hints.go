package config

import (
	"github.com/batchd/batchd/internal/suggest"
	"reflect"
	"strings"
)

// unknownHint completes an "unknown key" message: why a tempting key does
// not exist, or which known key was probably meant.
func unknownHint(t reflect.Type, prefix, name string) string {
	lower := strings.ToLower(name)
	if prefix == "state" && (strings.Contains(lower, "dsn") || strings.Contains(lower, "password") || strings.Contains(lower, "url") ||
		strings.Contains(lower, "conn")) && lower != "postgres_dsn_file" {
		return ": batchd never reads the PostgreSQL DSN from the config file (it holds the database password); " +
			"put it in a file named by state.postgres_dsn_file, or in $" + EnvPostgresDSN
	}
	if best := closest(t, name); best != "" {
		return " (did you mean " + joinPath(prefix, best) + "?)"
	}
	switch {
	case prefix == "api" && (strings.Contains(lower, "key") || strings.Contains(lower, "secret") || strings.Contains(lower, "token")):
		return ": batchd never reads the API key from the config file; put it in a file named by api.key_file, or in $" + EnvAPIKey
	case prefix == "sftp" && (strings.Contains(lower, "password") || strings.Contains(lower, "passphrase")):
		return ": batchd logs in only with the private key named by sftp.identity_file"
	case prefix == "sftp" && (strings.Contains(lower, "insecure") || strings.Contains(lower, "host_key") || strings.Contains(lower, "hostkey") || strings.Contains(lower, "verify")):
		return ": batchd always verifies the server's host key against sftp.known_hosts; there is no option to skip it"
	}
	return ""
}

// closest returns the yaml key of struct type t nearest to name, when it is
// near enough to be a likely typo.
func closest(t reflect.Type, name string) string {
	if len(name) > 64 {
		return ""
	}
	var tags []string
	for i := range t.NumField() {
		if sf := t.Field(i); sf.IsExported() {
			tag, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
			tags = append(tags, tag)
		}
	}
	return suggest.Closest(strings.ToLower(name), tags, 2)
}
