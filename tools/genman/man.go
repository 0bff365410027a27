package main

import (
	"fmt"
	"io"
	"strings"
)

// manPage holds what batchd(1) says besides the commands' help.
type manPage struct {
	version string // the package version, for the footer
	date    string // YYYY-MM-DD, the commit's date: the same sources give the same page
}

// write writes batchd(1) in man(7) roff: a synopsis, then each command's
// summary, usage line and flags, exactly as the commands' help has them.
func (m manPage) write(w io.Writer, cmds []command) error {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH BATCHD 1 %s %s \"User Commands\"\n", quote(m.date), quote("batchd "+m.version))
	b.WriteString(".SH NAME\nbatchd \\- eCheck payment file daemon\n")
	b.WriteString(".SH SYNOPSIS\n.B batchd\n.I command\n.RI [ flags ]\n.br\n.B batchd help\n")
	b.WriteString(".SH DESCRIPTION\n")
	b.WriteString("batchd picks up payment files from SFTP, submits each row as an eCheck exactly once, ")
	b.WriteString("reconciles daily and writes reports back to SFTP.\n")
	b.WriteString("Each command below prints its usage and flags with \\fBbatchd\\fR \\fIcommand\\fR \\fB\\-h\\fR.\n")
	b.WriteString("A flag may be written with one dash or two.\n")
	b.WriteString(".SH COMMANDS\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, ".SS %s\n%s\n.PP\n.B batchd %s\n", roff(c.name), roff(c.summary), roff(c.name))
		if c.args != "" {
			b.WriteString(roff(c.args) + "\n")
		}
		for _, f := range c.flags {
			b.WriteString(".TP\n\\fB\\-\\-" + roff(f.name) + "\\fR")
			if f.value != "" {
				b.WriteString(" \\fI" + roff(f.value) + "\\fR")
			}
			b.WriteString("\n" + roff(f.usage) + "\n")
		}
	}
	b.WriteString(".SH FILES\n.TP\n.I /etc/batchd/batchd.yaml\nthe configuration\n")
	b.WriteString(".TP\n.I /etc/batchd/credentials\nthe API key and SFTP identity the service unit loads\n")
	b.WriteString(".SH SEE ALSO\n.I /usr/share/doc/batchd/README.md\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// roff escapes text for a roff line: backslashes, dashes (a minus sign in
// a flag must print as one) and a leading dot or quote that would make
// the line a request.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// quote makes s one roff argument.
func quote(s string) string {
	return `"` + strings.ReplaceAll(roff(s), `"`, `""`) + `"`
}
