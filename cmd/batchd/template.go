package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/batchd/batchd/internal/ingest/sheet"
)

// runTemplate writes the XLSX template of a kind of file (sheet.WriteTemplate):
// its header row, with the identifier columns formatted as Text so that
// the numbers typed into them keep their leading zeros.
func runTemplate(_ context.Context, env *environ, args []string) error {
	flags := newFlags(env, "template", "KIND [--out FILE]   (KIND: "+sheet.TemplateKindNames()+")")
	out := flags.String("out", "", `the file to write (default KIND.xlsx in the current folder; "-" writes to standard output); `+
		"an existing file is never overwritten")
	var name string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	kind, name, ok := sheet.TemplateKind(name)
	if !ok {
		fmt.Fprintf(env.stderr, "batchd template: give the kind of file: %s\n", sheet.TemplateKindNames())
		return errUsage
	}
	path := *out
	if path == "" {
		path = name + ".xlsx"
	}
	if path == "-" {
		return sheet.WriteTemplate(env.stdout, kind)
	}
	if err := writeNew(path, func(f *os.File) error { return sheet.WriteTemplate(f, kind) }); err != nil {
		return fmt.Errorf("write the %s template: %w", name, err)
	}
	fmt.Fprintf(env.stdout, "wrote %s: the %s template; type the rows below its header, and keep the Text "+
		"columns Text\n", path, name)
	return nil
}

// writeNew writes a new file at path by fill, all or nothing: it is
// written beside path under a temporary name and then linked to path,
// which fails if path exists, so that no file is ever overwritten.
func writeNew(path string, fill func(*os.File) error) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s already exists; choose another name with --out, or remove it", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".template-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := fill(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil { // a template is for sharing
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists; choose another name with --out, or remove it", path)
		}
		return err
	}
	return nil
}
