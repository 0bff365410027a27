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

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/report"
)

// process takes one claimed file through download, dedup, parse, fence,
// report, commit and move. The returned error is the file's failure (see
// Run for which ones stop the run); a bad file is an Outcome, not an
// error. errClaimLost means another instance took the file back before
// anything final was written here.
func (j *Job) process(ctx context.Context, rem Remote, h *held) (Outcome, error) {
	o := Outcome{File: h.name}
	if j.opts.MaxFileBytes > 0 && h.size > j.opts.MaxFileBytes {
		reason := fmt.Sprintf("the file is %d bytes; ingest.max_file_bytes allows %d. Split it into smaller files.", h.size, j.opts.MaxFileBytes)
		return j.fail(ctx, rem, o, TooLarge, h, reason, settleAs{})
	}
	if err := os.MkdirAll(j.opts.SpoolDir, 0o700); err != nil {
		return j.errored(o, fmt.Errorf("spool %s: %w", j.opts.SpoolDir, err))
	}
	local, sum, size, err := rem.Download(ctx, h.path, j.opts.SpoolDir)
	if err != nil {
		if !h.committing && errors.Is(err, fs.ErrNotExist) {
			return o, errClaimLost
		}
		if errors.Is(err, remote.ErrNotRegular) {
			return j.notRegular(ctx, rem, o, h, err), nil
		}
		if !h.committing && errors.Is(err, remote.ErrChanged) && j.giveBack(ctx, rem, h) {
			o.Outcome = Waiting
			o.Detail = "it changed while it was read, so it is still being written: returned to the inbox, to be read once it has stopped changing"
			return o, nil
		}
		return j.errored(o, fmt.Errorf("download %s: %w", h.path, err))
	}
	defer os.Remove(local)
	if size == 0 {
		return j.fail(ctx, rem, o, Empty, h, j.emptyReason(), settleAs{})
	}

	prior, err := j.db.File(sum)
	switch {
	case errors.Is(err, payment.ErrNotFound):
		prior = nil
	case err != nil:
		return j.errored(o, err)
	case prior.Accepted:
		return j.known(ctx, rem, o, h, prior)
	}
	if done, o, err := j.finishRejection(ctx, rem, o, h, prior); done {
		return o, err
	}
	kind, err := j.detect(local, h.name)
	if err != nil {
		return j.errored(o, fmt.Errorf("read %s: %w", o.File, err))
	}
	if info, _ := kind.Info(); info.Applied {
		return j.applyFile(ctx, rem, o, h, local, payment.FileMeta{Kind: kind, Name: h.name, SHA256: sum, Size: size})
	}
	return j.load(ctx, rem, o, h, local, payment.FileMeta{Kind: kind, Name: h.name, SHA256: sum, Size: size}, prior)
}

// emptyReason is the note of an empty file: what, why, and the fix.
func (j *Job) emptyReason() string {
	why := fmt.Sprintf("it stayed empty (0 bytes) for %s", j.opts.StableFor)
	if j.opts.DoneMarker {
		why = "it was empty (0 bytes) when its .done marker was there"
	}
	return "the file is empty: " + why + ", so it holds nothing to pay, and it was moved here so that it does not hold up the inbox. " +
		"If it was meant to carry payments, export it again and upload it; if there was nothing to pay, nothing needs doing."
}

// notRegular settles a claimed entry that turned out not to be a regular
// file (it was swapped for a link, say, after it was listed): nothing of
// it was read. It goes back to the inbox, where it is reported like any
// other entry that is not a regular file; one past the fence stays.
func (j *Job) notRegular(ctx context.Context, rem Remote, o Outcome, h *held, err error) Outcome {
	o.Outcome = Ignored
	left := "left there"
	if back := path.Join(j.opts.Inbox, h.name); !h.committing {
		if rerr := rem.Rename(ctx, h.path, back); rerr == nil {
			h.moved(back)
			left = "returned to the inbox"
		} else {
			j.log.Warn("cannot return an entry that is not a regular file to the inbox", "file", h.name, "at", h.path, "err", rerr)
		}
	}
	j.log.Warn("claimed entry is not a regular file: not read", "file", h.name, "at", h.path, "err", err)
	o.Detail = fmt.Sprintf("not read: it stopped being a regular file after it was listed (%v), and batchd never follows a link nor reads a device, socket, pipe or folder; %s. "+
		"Upload the file itself (a copy, not a link), or remove the entry.", err, left)
	return o
}

// known handles content the ledger has accepted before: the tail of a run
// that stopped between commit and move (or whose move failed), or a
// duplicate.
func (j *Job) known(ctx context.Context, rem Remote, o Outcome, h *held, f *payment.File) (Outcome, error) {
	o.Batch = f.BatchID
	o.Kind = j.batchKind(f.BatchID)
	if f.Name == o.File && (f.Moved == "" || h.committing) {
		// Committed here, not yet archived. The name recorded before the
		// move was tried is kept if it is still free: reports may bear it.
		dir, prefer := j.dayDir(), ""
		if f.Moved != "" {
			dir, prefer = path.Dir(f.Moved), path.Base(f.Moved)
		}
		name, err := j.chooseName(ctx, rem, dir, h.name, prefer, f.BatchID, true)
		if err != nil {
			return j.errored(o, fmt.Errorf("archive %s: %w", h.path, err))
		}
		to, err := j.moveTo(ctx, rem, h, dir, name, f.SHA256, f.BatchID, true)
		if err != nil {
			return j.errored(o, fmt.Errorf("archive %s: %w", h.path, err))
		}
		o.Outcome, o.MovedTo = Recovered, to
		o.Detail = fmt.Sprintf("batch %d was committed before the last run stopped; archived now", f.BatchID)
		j.log.Info("finished an interrupted pickup", "file", o.File, "batch", f.BatchID, "from", h.path, "moved_to", to)
		return o, nil
	}
	reason := fmt.Sprintf("duplicate: the same content was already ingested as %q on %s (batch %d); it was not ingested again, and nothing in it was sent. %s",
		f.Name, f.Seen.In(j.opts.Location).Format("2006-01-02 15:04 MST"), f.BatchID, sendAgainAdvice(j.batchKind(f.BatchID)))
	return j.fail(ctx, rem, o, Duplicate, h, reason, settleAs{})
}

// sendAgainAdvice says how a file sent again on purpose (a monthly
// payroll with the same rows) can be made to go through: batchd refuses
// the same content twice, and the same check number twice, so a copy is
// paid only once it is changed where it must be.
func sendAgainAdvice(kind payment.BatchKind) string {
	if kind == payment.KindPayments {
		return "If these payments must really be made again (next month's run of the same file), give every row a new check number " +
			"(the number column; or leave it empty for batchd to number the checks, and change the memo) and upload the file again"
	}
	return "If these rows must really be sent again, change the file (the rows to send again, only) and upload it again"
}

// batchKind is the kind of a batch the ledger has, for an Outcome; a
// payment batch's when the ledger cannot read it.
func (j *Job) batchKind(id uint64) payment.BatchKind {
	if b, err := j.db.Batch(id); err == nil {
		return b.Kind
	}
	return payment.KindPayments
}

// finishRejection settles a file whose rejection this instance recorded,
// with the name it was to be moved under, but which is still in its
// .commit folder: a run stopped, or the move failed. Its rejects report
// went out before the rejection was recorded, so it is moved on under
// that name without being read again (nor recorded again, as a new batch,
// at every run while the move keeps failing). done is false when f is not
// such a file.
func (j *Job) finishRejection(ctx context.Context, rem Remote, o Outcome, h *held, f *payment.File) (done bool, _ Outcome, _ error) {
	if f == nil || f.Accepted || !h.committing || f.Moved == "" || f.Name != h.name || path.Dir(f.Moved) != path.Clean(j.opts.Failed) {
		return false, o, nil
	}
	b, err := j.db.Batch(f.BatchID)
	if errors.Is(err, payment.ErrNotFound) || err == nil && b.Status != payment.BatchRejected {
		return false, o, nil
	}
	if err != nil {
		o, err = j.errored(o, err)
		return true, o, err
	}
	o.Batch, o.Rows, o.Rejected, o.Valid = b.ID, b.Rows, b.Invalid, b.Rows-b.Invalid
	o.Kind = b.Kind
	outcome, reason := Rejected, b.Note
	switch {
	case strings.HasPrefix(b.Note, lostPrefix):
		outcome = LostBatch
	case b.Invalid == 0:
		outcome, reason = Unreadable, "the file cannot be read as "+b.Kind.Word()+": "+b.Note
	}
	o, err = j.fail(ctx, rem, o, outcome, h, reason, settleAs{name: path.Base(f.Moved), sha: f.SHA256, batch: b.ID, reports: b.Invalid > 0})
	return true, o, err
}

// begin starts the batch of meta's kind: a payment batch, or a funding
// batch whose loader also takes funding rows (sources, nil otherwise).
func (j *Job) begin(meta payment.FileMeta) (payment.Loader, funding.Loader, error) {
	if meta.Kind.Payments() {
		l, err := j.db.BeginBatch(meta)
		return l, nil, err
	}
	l, err := j.db.BeginSourceBatch(meta)
	if err != nil {
		return nil, nil, err
	}
	return l, l, nil
}

// load parses the spooled file into a new batch of its kind (meta.Kind)
// and settles the file. prior is the ledger's record of a refused file of
// the same content, or nil.
func (j *Job) load(ctx context.Context, rem Remote, o Outcome, h *held, local string, meta payment.FileMeta, prior *payment.File) (Outcome, error) {
	o.Kind = meta.Kind
	loader, sources, err := j.begin(meta)
	if err != nil {
		return j.errored(o, err)
	}
	o.Batch = loader.Batch().ID
	marked, err := j.markPayees(loader, meta)
	if err != nil {
		return j.errored(o, abortWith(loader, err))
	}
	loader, lost, err := j.watchLost(marked, meta)
	if err != nil {
		return j.errored(o, abortWith(marked, err))
	}
	rej, sum, perr := j.parseFile(ctx, local, meta.Name, loader, sources, meta.Kind)
	defer os.Remove(rej)
	// The spool's copy holds account numbers in the clear, and nothing
	// reads it past the parse: it goes now, not once the file is moved, so
	// that a run killed after the commit leaves none behind (the inbox or
	// the claim folder still holds the file until it is settled).
	os.Remove(local)
	o.Rows, o.Valid, o.Rejected = sum.Rows, sum.Valid, sum.Invalid

	var ferr *csvfile.FileError
	unreadable := errors.As(perr, &ferr)
	if perr != nil && !unreadable {
		if err := loader.Abort(); err != nil {
			perr = errors.Join(perr, err)
		}
		return j.errored(o, fmt.Errorf("read %s: %w", o.File, perr))
	}
	rejected := unreadable || sum.Invalid > 0 && (j.opts.OnInvalid != SkipRows || sum.Valid == 0)
	paid := ""
	if !unreadable {
		if paid, err = j.lostRefusal(ctx, rem, lost, meta.SHA256, meta.Size); err != nil {
			return j.errored(o, abortWith(loader, err))
		}
	}
	dir := j.dayDir()
	if rejected || paid != "" {
		dir = j.opts.Failed
	}

	// Past the fence before any report goes out: a file whose report is
	// in the outbox is settled by this instance, under the name the
	// report bears. That name is chosen now, unique in the outbox.
	if err := j.fenceOrAbort(ctx, rem, h, loader); err != nil {
		return j.errored(o, err)
	}
	prefer := ""
	if prior != nil && prior.Name == h.name && prior.Moved != "" && path.Dir(prior.Moved) == path.Clean(dir) {
		prefer = path.Base(prior.Moved) // an earlier attempt's name, and report
	}
	withReport := !unreadable && (sum.Invalid > 0 || sum.Warnings > 0) // warnings too: a lossy export must not be silent
	name, err := j.chooseName(ctx, rem, dir, h.name, prefer, o.Batch, withReport || !rejected)
	if err != nil {
		return j.errored(o, abortWith(loader, fmt.Errorf("name %s in %s: %w", h.name, dir, err)))
	}
	if withReport {
		if err := j.deliverRejects(ctx, rem, rej, Outcome{File: name, Batch: o.Batch}); err != nil {
			return j.errored(o, abortWith(loader, err))
		}
	}
	as := settleAs{name: name, sha: meta.SHA256, batch: o.Batch, reports: withReport}
	redeliver := func(o Outcome) {
		if moved := path.Base(o.MovedTo); withReport && o.MovedTo != "" && moved != name {
			if err := j.deliverRejects(ctx, rem, rej, Outcome{File: moved, Batch: o.Batch}); err != nil {
				j.log.Warn("deliver rejects report under the file's new name", "file", o.File, "name", moved, "err", err)
			}
		}
	}

	switch {
	case unreadable:
		if _, err := loader.Reject(sum.Rows, sum.Invalid, ferr.Error()); err != nil {
			return j.errored(o, err)
		}
		return j.fail(ctx, rem, o, "unreadable", h, "the file cannot be read as "+meta.Kind.Word()+": "+ferr.Error(), as)
	case paid != "":
		if _, err := loader.Reject(sum.Rows, sum.Invalid, paid); err != nil {
			return j.errored(o, err)
		}
		o, err := j.fail(ctx, rem, o, LostBatch, h, paid, as)
		redeliver(o)
		return o, err
	case rejected:
		reason := fmt.Sprintf("%d of %d rows are invalid, so nothing in this file was submitted (ingest.on_invalid: %s). "+
			"Every problem is listed in %s. Fix the file and upload it again.",
			sum.Invalid, sum.Rows, j.opts.OnInvalid, path.Join(j.opts.Outbox, rejectsName(name)))
		if _, err := loader.Reject(sum.Rows, sum.Invalid, reason); err != nil {
			return j.errored(o, err)
		}
		o, err := j.fail(ctx, rem, o, "rejected", h, reason, as)
		redeliver(o)
		return o, err
	}
	if _, err := loader.Commit(sum.Rows, sum.Invalid); err != nil {
		return j.errored(o, err)
	}
	o.Outcome = Accepted
	switch {
	case sum.Invalid > 0:
		o.Outcome = AcceptedWithRejects
		o.Detail = fmt.Sprintf("%d invalid rows skipped; see %s", sum.Invalid, path.Join(j.opts.Outbox, rejectsName(name)))
	case sum.Warnings > 0:
		o.Detail = fmt.Sprintf("%d warnings (rows accepted); see %s", sum.Warnings, path.Join(j.opts.Outbox, rejectsName(name)))
	}
	to, err := j.moveTo(ctx, rem, h, dir, name, meta.SHA256, o.Batch, true)
	if err != nil {
		return j.errored(o, fmt.Errorf("archive %s: %w", h.path, err))
	}
	o.MovedTo = to
	redeliver(o)
	j.log.Info("file accepted", "file", o.File, "kind", meta.Kind.String(), "batch", o.Batch, "rows", o.Valid, "from", h.path, "moved_to", to)
	if note := j.slowFileNote(o.Valid); note != "" && meta.Kind.Payments() {
		j.log.Warn("file accepted, but it takes several submit runs: "+note, "file", o.File, "batch", o.Batch, "rows", o.Valid)
		o.Detail = joinNotes(o.Detail, note)
	}
	return o, nil
}

// abortWith discards a half-loaded batch after err.
func abortWith(loader payment.Loader, err error) error {
	if aerr := loader.Abort(); aerr != nil {
		return fmt.Errorf("%w; discard batch %d: %w", err, loader.Batch().ID, aerr)
	}
	return err
}

// fenceOrAbort passes the fence, or discards the half-loaded batch.
func (j *Job) fenceOrAbort(ctx context.Context, rem Remote, h *held, loader payment.Loader) error {
	if err := j.fence(ctx, rem, h); err != nil {
		return abortWith(loader, err)
	}
	return nil
}

// dayDir is today's archive folder, archive/YYYY-MM-DD.
func (j *Job) dayDir() string {
	return path.Join(j.opts.Archive, j.opts.Now().In(j.opts.Location).Format("2006-01-02"))
}

// moveTo moves a held file to dir/name, never replacing anything. sha, if
// set, names the ledger's record of the file, which is told where the file
// goes before each rename, so that a run that stops in between finishes
// the move under the same name. If name was taken meanwhile (another
// client), another is chosen. It returns the file's new path.
func (j *Job) moveTo(ctx context.Context, rem Remote, h *held, dir, name, sha string, batch uint64, reports bool) (string, error) {
	if err := rem.MkdirAll(ctx, dir); err != nil {
		return "", err
	}
	for attempt := 1; ; attempt++ {
		to := path.Join(dir, name)
		if sha != "" {
			if err := j.db.FileMoved(sha, to); err != nil {
				return "", err
			}
		}
		err := rem.Rename(ctx, h.path, to)
		if err == nil {
			if j.opts.DoneMarker {
				j.moveMarker(ctx, rem, h.path, to)
			}
			return to, nil
		}
		if !errors.Is(err, fs.ErrExist) || attempt == 3 {
			return "", err
		}
		if name, err = j.chooseName(ctx, rem, dir, h.name, "", batch, reports); err != nil {
			return "", err
		}
	}
}

// settleAs says how fail moves a file: under name (already chosen, and
// borne by its rejects report if reports), recording the move in the
// ledger's record of the file sha, of batch. The zero value chooses a name
// free in the failed folder and records nothing (the file is not this
// content's batch: a duplicate, a file too large to read).
type settleAs struct {
	name, sha string
	batch     uint64
	reports   bool
}

// fail moves a file to the failed folder with <name>.error.txt beside it.
func (j *Job) fail(ctx context.Context, rem Remote, o Outcome, outcome Result, h *held, reason string, as settleAs) (Outcome, error) {
	o.Outcome, o.Detail = outcome, reason
	src := h.path
	name := as.name
	if name == "" {
		var err error
		if name, err = j.chooseName(ctx, rem, j.opts.Failed, h.name, "", as.batch, as.reports); err != nil {
			return j.errored(o, fmt.Errorf("move %s to %s: %w", src, j.opts.Failed, err))
		}
	}
	to, err := j.moveTo(ctx, rem, h, j.opts.Failed, name, as.sha, as.batch, as.reports)
	if err != nil {
		if !h.committing && errors.Is(err, fs.ErrNotExist) {
			return o, errClaimLost // nothing final was written: no fence was needed
		}
		return j.errored(o, fmt.Errorf("move %s to %s: %w", src, j.opts.Failed, err))
	}
	o.MovedTo = to
	note := fmt.Sprintf("batchd could not accept %s.\r\n\r\n%s\r\n", o.File, reason)
	if err := rem.Upload(ctx, j.opts.Failed, path.Base(to)+".error.txt", strings.NewReader(note)); err != nil {
		return j.errored(o, fmt.Errorf("write %s.error.txt: %w", to, err))
	}
	j.log.Warn("file not accepted", "file", o.File, "kind", o.Kind.String(), "outcome", outcome, "from", src, "moved_to", to, "reason", reason)
	return o, nil
}

func (j *Job) errored(o Outcome, err error) (Outcome, error) {
	o.Outcome, o.Detail = Failed, err.Error()
	return o, err
}

// deliverRejects writes the rejects report of o.File, from the findings
// parse spooled at local, in every configured format to a kept local copy
// (each atomically), and uploads each copy to the outbox: name.rejects.csv
// and name.rejects.xlsx. It may be called again for the same findings
// under another name.
func (j *Job) deliverRejects(ctx context.Context, rem Remote, local string, o Outcome) error {
	name := rejectsName(o.File)
	keep := filepath.Join(j.opts.ReportsDir, "rejects", fmt.Sprintf("batch-%06d-%s", o.Batch, strings.ReplaceAll(name, "/", "_")))
	kept, err := j.writeRejects(local, keep)
	if err != nil {
		return fmt.Errorf("keep rejects report: %w", err)
	}
	return report.Destination{Outbox: rem, Dir: j.opts.Outbox}.DeliverAll(ctx, kept, name)
}

func rejectsName(file string) string { return file + ".rejects.csv" }
