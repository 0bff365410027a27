// Command genman writes batchd's man page and shell completions from the
// help a built batchd prints, so that they say what the commands accept
// and never drift from it: `batchd help` lists the commands (the CLI's
// command table) and `batchd <command> -h` prints each one's usage line
// and flags (the very FlagSet the command parses).
//
//	go run ./tools/genman -bin dist/pkg/batchd -out dist/pkg -version 1.2.3 -date 2026-11-25
//
// writes, in -out: batchd.1 (man(7) roff, not compressed), batchd.bash (for
// /usr/share/bash-completion/completions/batchd) and _batchd (for
// /usr/share/zsh/vendor-completions/_batchd). -bin must run on this
// machine.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

func main() {
	bin := flag.String("bin", "bin/batchd", "the batchd binary whose help to read")
	out := flag.String("out", ".", "directory to write batchd.1, batchd.bash and _batchd into")
	version := flag.String("version", "", "the version the man page names; required")
	date := flag.String("date", "", "the man page's date, YYYY-MM-DD (the commit's, for a reproducible page); required")
	flag.Parse()
	if *version == "" || *date == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*bin, *out, manPage{version: *version, date: *date}); err != nil {
		fmt.Fprintln(os.Stderr, "genman:", err)
		os.Exit(1)
	}
}

func run(bin, out string, m manPage) error {
	cmds, err := readHelp(bin)
	if err != nil {
		return err
	}
	files := []struct {
		name  string
		write func(io.Writer, []command) error
	}{
		{"batchd.1", m.write},
		{"batchd.bash", writeBash},
		{"_batchd", writeZsh},
	}
	for _, f := range files {
		var buf bytes.Buffer
		if err := f.write(&buf, cmds); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
		if err := os.WriteFile(filepath.Join(out, f.name), buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
	}
	return nil
}

// readHelp runs `bin help`, then `bin <command> -h` for each command.
func readHelp(bin string) ([]command, error) {
	help, err := exec.Command(bin, "help").Output()
	if err != nil {
		return nil, fmt.Errorf("run %s help: %w", bin, err)
	}
	cmds, err := parseCommands(string(help))
	if err != nil {
		return nil, err
	}
	for i := range cmds {
		c := &cmds[i]
		var stderr bytes.Buffer
		cmd := exec.Command(bin, c.name, "-h")
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("run %s %s -h: %w: %s", bin, c.name, err, stderr.Bytes())
		}
		if c.args, c.flags, err = parseUsage(c.name, stderr.String()); err != nil {
			return nil, err
		}
	}
	return cmds, nil
}
