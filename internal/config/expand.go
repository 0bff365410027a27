package config

import (
	"fmt"
	"strings"
)

// DefaultCredentialsDir is what ${CREDENTIALS_DIRECTORY} expands to when
// the variable is unset: the directory the unit's LoadCredential= lines
// read the secrets from (systemd/batchd.service). systemd sets the variable
// only inside the service, to a private copy of those files; an
// administrator running `batchd status`, `check`, `backup`, `restore` or
// `validate` from a shell has no such variable, and the shipped config
// must work for them as printed, reading the originals. There the strict
// secret-file rule applies (mode 0600, see CheckSecretFile): the
// group-read allowance is only for a $CREDENTIALS_DIRECTORY that systemd
// set. Keep it equal to the unit's LoadCredential= source directory.
const DefaultCredentialsDir = "/etc/batchd/credentials"

// expand replaces ${NAME} in s with the variable's value from env and $$
// with a literal $. It is strict where os.Expand is lenient, because a
// silently empty path is worse than a refusal: an undefined variable, a
// lone $, $NAME without braces, an unterminated ${ and a name that is not
// [A-Za-z_][A-Za-z0-9_]* are all errors. The one exception is
// ${CREDENTIALS_DIRECTORY}, which falls back to DefaultCredentialsDir when
// unset (see lookupVar). A defined but empty variable expands to "".
// Values are inserted verbatim; they are not expanded again.
func expand(s string, env Env) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == '$' {
			b.WriteByte('$')
			i += 2
			continue
		}
		if i+1 >= len(s) || s[i+1] != '{' {
			return "", fmt.Errorf("a lone \"$\" must be written \"$$\"; variables are written ${NAME}")
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated \"${\"")
		}
		name := s[i+2 : i+2+end]
		if !validVarName(name) {
			return "", fmt.Errorf("invalid variable name %s in ${…}: want letters, digits and _ (no defaults or other shell forms)", showValue(name))
		}
		v, ok := lookupVar(env, name)
		if !ok {
			return "", fmt.Errorf("undefined variable ${%s}", showKey(name))
		}
		b.WriteString(v)
		i += 2 + end + 1
	}
	return b.String(), nil
}

// lookupVar is env's value of name, except that an unset
// $CREDENTIALS_DIRECTORY is DefaultCredentialsDir, so that the credential
// paths resolve outside the service to the files the unit loads. Only
// unset falls back: a set value, even empty, is used as it is.
func lookupVar(env Env, name string) (string, bool) {
	v, ok := env.lookup(name)
	if !ok && name == EnvCredentialsDir {
		return DefaultCredentialsDir, true
	}
	return v, ok
}

func validVarName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_', 'A' <= r && r <= 'Z', 'a' <= r && r <= 'z':
		case '0' <= r && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
