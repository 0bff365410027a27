package main

import (
	"bufio"
	"fmt"
	"strings"
)

// command is one subcommand as batchd's own help describes it.
type command struct {
	name    string
	summary string // the line `batchd help` prints for it
	args    string // what follows "usage: batchd <name> " in `batchd <name> -h`
	flags   []flagDoc
}

// flagDoc is one flag as flag.PrintDefaults prints it.
type flagDoc struct {
	name  string // without the dash
	value string // the value's name ("string", "duration", "YYYY-MM-DD"); "" for a boolean
	usage string // the description, its lines joined by a space, with the default if any
}

// parseCommands reads `batchd help`: the lines under "commands:", each a
// name and its summary, in the order the command table has them.
func parseCommands(help string) ([]command, error) {
	var cmds []command
	in := false
	sc := bufio.NewScanner(strings.NewReader(help))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "commands:":
			in = true
		case !in:
		case strings.HasPrefix(line, "  ") && strings.TrimSpace(line) != "":
			name, summary, _ := strings.Cut(strings.TrimSpace(line), " ")
			cmds = append(cmds, command{name: name, summary: strings.TrimSpace(summary)})
		case strings.TrimSpace(line) == "":
			if len(cmds) > 0 {
				in = false
			}
		}
	}
	if len(cmds) == 0 {
		return nil, fmt.Errorf("parse batchd help: no commands under %q", "commands:")
	}
	return cmds, nil
}

// parseUsage reads `batchd <name> -h`: the usage line, then the flags as
// flag.PrintDefaults writes them ("  -name value" then the description on
// lines indented by four spaces and a tab, or on the same line after a tab
// for a one-letter flag).
func parseUsage(name, text string) (args string, flags []flagDoc, err error) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	prefix := "usage: batchd " + name
	if len(lines) == 0 || !strings.HasPrefix(lines[0], prefix) {
		return "", nil, fmt.Errorf("parse batchd %s -h: the first line is not %q: %q", name, prefix+" …", lines[0])
	}
	args = strings.TrimSpace(strings.TrimPrefix(lines[0], prefix))
	for i, line := range lines[1:] {
		switch {
		case strings.HasPrefix(line, "  -"):
			head, rest, _ := strings.Cut(strings.TrimPrefix(line, "  -"), "\t")
			fname, value, _ := strings.Cut(strings.TrimSpace(head), " ")
			flags = append(flags, flagDoc{name: fname, value: value, usage: strings.TrimSpace(rest)})
		case strings.HasPrefix(line, "    \t") && len(flags) > 0:
			f := &flags[len(flags)-1]
			f.usage = strings.TrimSpace(f.usage + " " + strings.TrimPrefix(line, "    \t"))
		default:
			return "", nil, fmt.Errorf("parse batchd %s -h: line %d is neither a flag nor its description: %q", name, i+2, line)
		}
	}
	return args, flags, nil
}
