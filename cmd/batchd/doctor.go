package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/doctor"
)

// errDoctorFailed is `batchd doctor`'s verdict when a check failed; the
// lines above it said which and how to fix it.
var errDoctorFailed = errors.New("the installation cannot work as configured: fix the FAIL lines above, then run batchd doctor again")

// runDoctor is `batchd doctor`: it checks that the installation can work
// (configuration, secret files' modes, SFTP reach, host key and folders,
// the API key, the ledger, the webhook registration, the clock) and
// prints one line per check, "ok|warn|FAIL  check: what; fix: …". Exit 1
// on any FAIL; a warn alone exits 0. It changes nothing but a probe file
// written to and removed from each SFTP folder batchd writes to.
func runDoctor(ctx context.Context, env *environ, cl *cmdLine) error {
	if err := cl.parse(); err != nil {
		return err
	}
	path := cl.path()
	load := func(p string) (*config.Config, error) { return loadConfig(env, p) }
	res := doctor.Run(ctx, path, config.Env(env.lookupEnv), doctor.Options{Load: load})
	printDoctor(env.stdout, res)
	if doctor.Failed(res) {
		return errDoctorFailed
	}
	return nil
}

// printDoctor prints one line per result; a config that did not load
// says that the other checks did not run.
func printDoctor(w io.Writer, res []doctor.Result) {
	loaded := false
	for _, r := range res {
		line := fmt.Sprintf("%-4s  %s: %s", r.Status, r.Check, r.What)
		if r.Fix != "" {
			line += "; fix: " + r.Fix
		}
		fmt.Fprintln(w, line)
		loaded = loaded || (r.Check == "config" && r.Status == doctor.OK)
	}
	if !loaded {
		fmt.Fprintln(w, "(the other checks need a configuration that loads: SFTP, API, ledger, webhook and clock were not checked)")
	}
}
