package jobs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/state"
)

// BackupSummary is what one scheduled backup did.
type BackupSummary struct {
	Backup   *state.Backup
	Removed  []string // older snapshots deleted to keep backup.keep
	Uploaded string   // the remote path, when backup.upload is on
}

// Backup takes a checked snapshot of the ledger into backup.dir
// (state.BackupName), deletes the oldest snapshots there beyond
// backup.keep, and uploads the new one to sftp.backups through the
// outbox (report.Destination.Deliver) when backup.upload is on. On a
// ledger that takes no file snapshots (PostgreSQL) it fails with the
// ledger's error, which wraps state.ErrUnsupported and says how such a
// ledger is backed up.
func (e *Env) Backup(ctx context.Context) (BackupSummary, error) {
	var sum BackupSummary
	dir := e.Cfg.BackupDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return sum, fmt.Errorf("backup: %w", err)
	}
	b, err := e.DB.Backup(filepath.Join(dir, state.BackupName(e.now())))
	if err != nil {
		return sum, fmt.Errorf("backup: %w", err)
	}
	sum.Backup = b
	removed, err := keepNewest(dir, e.Cfg.Backup.Keep)
	sum.Removed = removed
	if err != nil {
		return sum, err
	}
	if !e.Cfg.Backup.Upload {
		return sum, nil
	}
	rem, err := e.Dial(ctx)
	if err != nil {
		return sum, fmt.Errorf("backup: upload: %w", err)
	}
	defer rem.Close()
	name := filepath.Base(b.Path)
	if err := (report.Destination{Outbox: rem, Dir: e.Cfg.SFTP.Backups}).Deliver(ctx, b.Path, name); err != nil {
		return sum, fmt.Errorf("backup: %w", err)
	}
	sum.Uploaded = e.Cfg.SFTP.Backups + "/" + name
	return sum, nil
}

// keepNewest deletes the snapshots in dir (the files state.BackupName
// names; nothing else) beyond the newest keep.
func keepNewest(dir string, keep int) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("backup: keep the newest %d: %w", keep, err)
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && state.IsBackupName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names) // oldest first: the names are times
	var removed []string
	for len(names) > max(keep, 1) {
		if err := os.Remove(filepath.Join(dir, names[0])); err != nil {
			return removed, fmt.Errorf("backup: remove an old snapshot: %w", err)
		}
		removed = append(removed, names[0])
		names = names[1:]
	}
	return removed, nil
}

// Backup is the scheduled snapshot of the ledger.
func (s Scheduled) Backup(ctx context.Context) (string, error) {
	sum, err := s.Env.Backup(ctx)
	uses := []payment.Source{payment.SourceLedger}
	if s.Env.Cfg.Backup.Upload {
		uses = append(uses, payment.SourceSFTP)
	}
	s.note(err, uses...)
	if sum.Backup == nil {
		return "", err
	}
	b := sum.Backup
	line := fmt.Sprintf("snapshot %s as of %s (%s, %d rows, checked OK)", b.Path, b.At.Format("2006-01-02 15:04:05Z07:00"), size(b.Size), b.Report.Rows)
	if len(sum.Removed) > 0 {
		line += fmt.Sprintf("; removed %d older (%s)", len(sum.Removed), strings.Join(sum.Removed, ", "))
	}
	if sum.Uploaded != "" {
		line += "; uploaded to " + sum.Uploaded
	}
	return line, err
}

func size(n int64) string {
	if n < 1e6 {
		return fmt.Sprintf("%d kB", (n+999)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
