package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// version is set at link time by `make build` and `make deb`:
// -ldflags "-X main.version=$(VERSION)", from `git describe --tags
// --always --dirty` unless VERSION is given. Empty (a plain `go build`)
// falls back to the module version recorded in the build info.
var version string

func runVersion(_ context.Context, env *environ, args []string) error {
	fs := newFlags(env, "version", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(env.stdout, "batchd", versionString())
	return nil
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
