package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/state"
)

// runBackup is `batchd backup`: a checked, consistent snapshot of the
// ledger, taken while batchd runs or not. A batchd process that holds the
// ledger serves the snapshot on state_dir/batchd.sock (the ledger's lock
// keeps any other process from reading the file); with none, the file is
// read under a shared lock.
func runBackup(ctx context.Context, env *environ, cl *cmdLine) error {
	to := cl.String("to", "", "the snapshot file to write, or a directory to write batchd-<time>.db into (default: backup.dir)")
	cfg, err := cl.config()
	if err != nil {
		return err
	}
	path := *to
	if path == "" || strings.HasSuffix(path, string(filepath.Separator)) {
		if path == "" {
			path = cfg.BackupDir()
		}
		if err := os.MkdirAll(path, 0o700); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, state.BackupName(time.Now()))
	}
	b, err := state.BackupLedger(cfg.StateDir, path)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "snapshot of %s as of %s (from %s)\n", b.Ledger, b.At.Format(time.RFC3339), b.Via)
	fmt.Fprintf(env.stdout, "written to %s (%d bytes, mode 0600)\n", b.Path, b.Size)
	fmt.Fprintf(env.stdout, "checked: OK: %d batches, %d rows, %d checks\n", b.Report.Batches, b.Report.Rows, b.Report.Checks)
	return nil
}
