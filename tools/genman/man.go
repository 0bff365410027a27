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
	b.WriteString(".SH SYNOPSIS\n.B batchd\n.I command\n.RI [ flags ]\n.br\n.B batchd help\n.RI [ command ]\n.br\n.B batchd \\-\\-version\n")
	b.WriteString(".SH DESCRIPTION\n")
	b.WriteString("batchd picks up payment files from SFTP, submits each row as an eCheck exactly once, ")
	b.WriteString("reconciles daily and writes reports back to SFTP.\n")
	b.WriteString("Each command below prints its usage and flags with \\fBbatchd help\\fR \\fIcommand\\fR or \\fBbatchd\\fR \\fIcommand\\fR \\fB\\-h\\fR.\n")
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
	b.WriteString(manTail)
	_, err := io.WriteString(w, b.String())
	return err
}

// manTail is what batchd(1) says after the commands: what a script, an
// administrator or systemd needs of any command (its exit status, the
// signals it handles, the environment and files it reads). It is roff
// already; the README says the same at more length.
const manTail = `.SH EXIT STATUS
.TP
.B 0
done
.TP
.B 1
a failure: the configuration, SFTP, the API or the ledger; \fBvalidate\fR found a file ingest would reject; \fBcheck\fR found damage; \fBdoctor\fR found a FAIL
.TP
.B 2
a bad command line (an unknown command or flag, a missing argument)
.TP
.B 3
interrupted: a signal or \fB\-\-max\-duration\fR stopped the run with work left; run the command again to continue (nothing is paid twice)
.SH SIGNALS
.TP
.BR SIGINT ", " SIGTERM
\fBrun\fR and \fBsubmit\fR stop gracefully: no new payment is sent, requests already sent finish, and \fBrun\fR exits 0 once its jobs end within shutdown_timeout. A second signal exits at once with status 3, still safe: every payment's intent is on disk before it is sent.
.TP
.B SIGHUP
\fBrun\fR re\-reads its configuration: the schedules and run timeouts apply from the next runs, a changed webhook.url is registered at once; an invalid file is refused with a log line and the old configuration stays. Other settings take effect at the next restart.
.SH ENVIRONMENT
.TP
.B BATCHD_CONFIG
the configuration file when \fB\-\-config\fR is not given (default /etc/batchd/batchd.yaml; \fBvalidate\fR reads none without one of them)
.TP
.B BATCHD_API_KEY
the API key, when api.key_file is empty
.TP
.B BATCHD_POSTGRES_DSN
the PostgreSQL ledger's DSN, when state.backend is postgres and state.postgres_dsn_file is empty
.TP
.B CREDENTIALS_DIRECTORY
set by systemd inside the service (LoadCredential=); \fB${CREDENTIALS_DIRECTORY}\fR in the configuration is /etc/batchd/credentials where it is unset
.TP
.B GOGC
the garbage collector's target; batchd uses 50 unless it is set
.SH FILES
.TP
.I /etc/batchd/batchd.yaml
the configuration
.TP
.I /etc/batchd/credentials
the API key, SFTP identity and other secrets the service unit loads
.TP
.I /var/lib/batchd
state_dir: the ledger (batchd.db), the local copies of reports (reports/), downloads (spool/) and snapshots (backups/); /var/lib/private/batchd under the unit's DynamicUser
.TP
.I /usr/share/batchd/prometheus/alerts.yml
the alerting rules
.SH SEE ALSO
.I /usr/share/doc/batchd/README.md
`

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
