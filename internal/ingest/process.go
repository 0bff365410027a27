package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/report"
)

// process takes one claimed file through download, dedup, parse, fence,
// commit and move. The returned error is for failures that should stop the
// run (SFTP, state); a bad file is an Outcome, not an error. errClaimLost
// means another instance took the file back before anything final was
// written here.
func (j *Job) process(ctx context.Context, rem Remote, h *held) (Outcome, error) {
	o := Outcome{File: h.name}
	if j.opts.MaxFileBytes > 0 && h.size > j.opts.MaxFileBytes {
		reason := fmt.Sprintf("the file is %d bytes; ingest.max_file_bytes allows %d. Split it into smaller files.", h.size, j.opts.MaxFileBytes)
		return j.fail(ctx, rem, o, "too-large", h, reason)
	}
	if err := os.MkdirAll(j.opts.SpoolDir, 0o700); err != nil {
		return j.errored(o, fmt.Errorf("spool %s: %w", j.opts.SpoolDir, err))
	}
	local, sum, size, err := rem.Download(ctx, h.path, j.opts.SpoolDir)
	if err != nil {
		if !h.committing && errors.Is(err, fs.ErrNotExist) {
			return o, errClaimLost
		}
		if !h.committing && errors.Is(err, remote.ErrChanged) && j.giveBack(ctx, rem, h) {
			o.Outcome = "waiting"
			o.Detail = "it changed while it was read, so it is still being written: returned to the inbox, to be read once it has stopped changing"
			return o, nil
		}
		return j.errored(o, fmt.Errorf("download %s: %w", h.path, err))
	}
	defer os.Remove(local)

	if known, err := j.db.File(sum); err == nil && known.Accepted {
		return j.known(ctx, rem, o, h, known)
	} else if err != nil && !errors.Is(err, payment.ErrNotFound) {
		return j.errored(o, err)
	}
	return j.load(ctx, rem, o, h, local, payment.FileMeta{Name: h.name, SHA256: sum, Size: size})
}

// known handles content the ledger has accepted before: the tail of a run
// that crashed between commit and move, or a duplicate.
func (j *Job) known(ctx context.Context, rem Remote, o Outcome, h *held, f *payment.File) (Outcome, error) {
	o.Batch = f.BatchID
	if f.Moved == "" && f.Name == o.File {
		to, err := j.archive(ctx, rem, h, f.SHA256)
		o.MovedTo = to
		if err != nil {
			return j.errored(o, err)
		}
		o.Outcome, o.MovedTo = "recovered", to
		o.Detail = fmt.Sprintf("batch %d was committed before the last run stopped; archived now", f.BatchID)
		j.log.Info("finished an interrupted pickup", "file", o.File, "batch", f.BatchID, "from", h.path, "moved_to", to)
		return o, nil
	}
	reason := fmt.Sprintf("duplicate: the same content was already ingested as %q on %s (batch %d); it was not ingested again",
		f.Name, f.Seen.In(j.opts.Location).Format("2006-01-02 15:04 MST"), f.BatchID)
	return j.fail(ctx, rem, o, "duplicate", h, reason)
}

// load parses the spooled file into a new batch and settles the file.
func (j *Job) load(ctx context.Context, rem Remote, o Outcome, h *held, local string, meta payment.FileMeta) (Outcome, error) {
	loader, err := j.db.BeginBatch(meta)
	if err != nil {
		return j.errored(o, err)
	}
	o.Batch = loader.Batch().ID
	rej, sum, perr := j.parse(local, loader)
	defer os.Remove(rej)
	o.Rows, o.Valid, o.Rejected = sum.Rows, sum.Valid, sum.Invalid

	var ferr *csvfile.FileError
	switch {
	case errors.As(perr, &ferr):
		if err := j.fenceOrAbort(ctx, rem, h, loader); err != nil {
			return j.errored(o, err)
		}
		if _, err := loader.Reject(sum.Rows, sum.Invalid, ferr.Error()); err != nil {
			return j.errored(o, err)
		}
		return j.fail(ctx, rem, o, "unreadable", h, "the file cannot be read as a payment file: "+ferr.Error())
	case perr != nil:
		if err := loader.Abort(); err != nil {
			perr = errors.Join(perr, err)
		}
		return j.errored(o, fmt.Errorf("read %s: %w", o.File, perr))
	}

	if sum.Invalid > 0 || sum.Warnings > 0 { // warnings too: a lossy export must not be silent
		if err := j.deliverRejects(ctx, rem, rej, o); err != nil {
			if aerr := loader.Abort(); aerr != nil {
				err = errors.Join(err, aerr)
			}
			return j.errored(o, err)
		}
	}
	if sum.Invalid > 0 && (j.opts.OnInvalid != SkipRows || sum.Valid == 0) {
		reason := fmt.Sprintf("%d of %d rows are invalid, so nothing in this file was submitted (ingest.on_invalid: %s). "+
			"Every problem is listed in %s. Fix the file and upload it again.",
			sum.Invalid, sum.Rows, j.opts.OnInvalid, path.Join(j.opts.Outbox, rejectsName(o.File)))
		if err := j.fenceOrAbort(ctx, rem, h, loader); err != nil {
			return j.errored(o, err)
		}
		if _, err := loader.Reject(sum.Rows, sum.Invalid, reason); err != nil {
			return j.errored(o, err)
		}
		return j.fail(ctx, rem, o, "rejected", h, reason)
	}
	if err := j.fenceOrAbort(ctx, rem, h, loader); err != nil {
		return j.errored(o, err)
	}
	if _, err := loader.Commit(sum.Rows, sum.Invalid); err != nil {
		return j.errored(o, err)
	}
	o.Outcome = "accepted"
	switch {
	case sum.Invalid > 0:
		o.Outcome = "accepted-with-rejects"
		o.Detail = fmt.Sprintf("%d invalid rows skipped; see %s", sum.Invalid, path.Join(j.opts.Outbox, rejectsName(o.File)))
	case sum.Warnings > 0:
		o.Detail = fmt.Sprintf("%d warnings (rows accepted); see %s", sum.Warnings, path.Join(j.opts.Outbox, rejectsName(o.File)))
	}
	to, err := j.archive(ctx, rem, h, meta.SHA256)
	o.MovedTo = to
	if err != nil {
		return j.errored(o, err)
	}
	j.log.Info("file accepted", "file", o.File, "batch", o.Batch, "rows", o.Valid, "from", h.path, "moved_to", to)
	return o, nil
}

// fenceOrAbort passes the fence, or discards the half-loaded batch.
func (j *Job) fenceOrAbort(ctx context.Context, rem Remote, h *held, loader payment.Loader) error {
	err := j.fence(ctx, rem, h)
	if err != nil {
		if aerr := loader.Abort(); aerr != nil {
			return fmt.Errorf("%v; discard batch %d: %w", err, loader.Batch().ID, aerr)
		}
	}
	return err
}

// archive moves a committed file to archive/YYYY-MM-DD/ and records where.
func (j *Job) archive(ctx context.Context, rem Remote, h *held, sha string) (string, error) {
	day := j.opts.Now().In(j.opts.Location).Format("2006-01-02")
	src, name := h.path, h.name
	to, err := rem.Move(ctx, src, path.Join(j.opts.Archive, day), name)
	if err != nil {
		return "", fmt.Errorf("archive %s: %w", src, err)
	}
	if j.opts.DoneMarker {
		if _, err := rem.Move(ctx, src+".done", path.Join(j.opts.Archive, day), name+".done"); err != nil {
			j.log.Warn("move done marker", "file", name, "err", err)
		}
	}
	if err := j.db.FileMoved(sha, to); err != nil {
		return to, err
	}
	return to, nil
}

// fail moves a file to the failed folder with <name>.error.txt beside it.
func (j *Job) fail(ctx context.Context, rem Remote, o Outcome, outcome string, h *held, reason string) (Outcome, error) {
	o.Outcome, o.Detail = outcome, reason
	src := h.path
	to, err := rem.Move(ctx, src, j.opts.Failed, h.name)
	if err != nil {
		if !h.committing && errors.Is(err, fs.ErrNotExist) {
			return o, errClaimLost // nothing final was written: no fence was needed
		}
		return j.errored(o, fmt.Errorf("move %s to %s: %w", src, j.opts.Failed, err))
	}
	o.MovedTo = to
	if j.opts.DoneMarker {
		if _, err := rem.Move(ctx, src+".done", j.opts.Failed, h.name+".done"); err != nil {
			j.log.Warn("move done marker", "file", o.File, "err", err)
		}
	}
	note := fmt.Sprintf("batchd could not accept %s.\r\n\r\n%s\r\n", o.File, reason)
	if err := rem.Upload(ctx, j.opts.Failed, path.Base(to)+".error.txt", strings.NewReader(note)); err != nil {
		return j.errored(o, fmt.Errorf("write %s.error.txt: %w", to, err))
	}
	j.log.Warn("file not accepted", "file", o.File, "outcome", outcome, "from", src, "moved_to", to, "reason", reason)
	return o, nil
}

func (j *Job) errored(o Outcome, err error) (Outcome, error) {
	o.Outcome, o.Detail = "error", err.Error()
	return o, err
}

// deliverRejects keeps a local copy of the rejects report and uploads it
// to the outbox, from the kept copy.
func (j *Job) deliverRejects(ctx context.Context, rem Remote, local string, o Outcome) error {
	name := rejectsName(o.File)
	keep := filepath.Join(j.opts.ReportsDir, "rejects", fmt.Sprintf("batch-%06d-%s", o.Batch, strings.ReplaceAll(name, "/", "_")))
	if err := os.MkdirAll(filepath.Dir(keep), 0o750); err != nil {
		return fmt.Errorf("keep rejects report: %w", err)
	}
	if err := copyFile(local, keep); err != nil {
		return fmt.Errorf("keep rejects report: %w", err)
	}
	return report.Destination{Outbox: rem, Dir: j.opts.Outbox}.Deliver(ctx, keep, name)
}

func rejectsName(file string) string { return file + ".rejects.csv" }
