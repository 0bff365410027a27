package main

import (
	"context"

	"github.com/batchd/batchd/internal/demo"
)

func runDemo(ctx context.Context, env *environ, args []string) error {
	fs := newFlags(env, "demo", "[--dir D]")
	dir := fs.String("dir", "", "directory for the demo's files (default: a new temporary directory)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	_, err := demo.Run(ctx, demo.Options{Dir: *dir, Out: env.stdout})
	return err
}
