package config

import (
	"net"
	"regexp"
	"strconv"
	"strings"
)

// AdminToken returns the bearer token of the admin server's POST
// endpoints; "" when admin.token_file is not set. Never log it.
func (c *Config) AdminToken() string { return c.adminToken.Reveal() }

// SetAdminToken sets the admin token of a Config built in code (tests).
func (c *Config) SetAdminToken(s string) { c.adminToken = NewSecret(s) }

// loadAdminToken reads admin.token_file when it is set. No finding quotes
// the token.
func (c *Config) loadAdminToken(env Env) *FieldError {
	p := c.Admin.TokenFile
	if p == "" || !strings.HasPrefix(p, "/") {
		return nil // validateAdmin says what is wrong with a relative path
	}
	return tokenFile("admin.token_file").load(&c.adminToken, p, env)
}

// hostName is a DNS name or an IPv4 address, as a Host header carries it.
var hostName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`)

func (c *Config) validateAdmin(f *findings) {
	a := c.Admin
	if a.Listen != "" {
		checkHostPort(f, "admin.listen", a.Listen, true)
	}
	checkAbsPath(f, "admin.token_file", a.TokenFile, false)
	for i, h := range a.Hosts {
		key := "admin.hosts[" + strconv.Itoa(i) + "]"
		if !validAdminHost(h) {
			f.add(0, key, "%s: want a host name, an IP address or host:port as a request's Host header carries it (no scheme, no path), got %s", key, showValue(h))
		}
	}
}

// validAdminHost accepts "name", "name:port", "1.2.3.4[:port]" and
// "[v6][:port]".
func validAdminHost(h string) bool {
	host, port := h, ""
	if hp, p, err := net.SplitHostPort(h); err == nil {
		host, port = hp, p
	} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		host = h[1 : len(h)-1]
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return false
		}
	}
	if ip := net.ParseIP(host); ip != nil {
		return true
	}
	return hostName.MatchString(host)
}
