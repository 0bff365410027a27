package config

import (
	"reflect"
	"strings"
)

// unknownHint completes an "unknown key" message: why a tempting key does
// not exist, or which known key was probably meant.
func unknownHint(t reflect.Type, prefix, name string) string {
	if best := closest(t, name); best != "" {
		return " (did you mean " + joinPath(prefix, best) + "?)"
	}
	lower := strings.ToLower(name)
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
	best, bestDist := "", 3
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if d := editDistance(strings.ToLower(name), tag); d < bestDist {
			best, bestDist = tag, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
