package config

import (
	"fmt"
	"strings"
)

// expand replaces ${NAME} in s with the variable's value from env and $$
// with a literal $. It is strict where os.Expand is lenient, because a
// silently empty path is worse than a refusal: an undefined variable, a
// lone $, $NAME without braces, an unterminated ${ and a name that is not
// [A-Za-z_][A-Za-z0-9_]* are all errors. A defined but empty variable
// expands to "". Values are inserted verbatim; they are not expanded again.
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
		v, ok := env.lookup(name)
		if !ok {
			return "", fmt.Errorf("undefined variable ${%s}", showKey(name))
		}
		b.WriteString(v)
		i += 2 + end + 1
	}
	return b.String(), nil
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
