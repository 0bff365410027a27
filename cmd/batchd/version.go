package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

func runVersion(_ context.Context, env *environ, args []string) error {
	fs := newFlags(env, "version", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	fmt.Fprintln(env.stdout, "batchd", v)
	return nil
}
