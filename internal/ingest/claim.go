package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/batchd/batchd/internal/remote"
)

// Claims. Several batchd processes (two installations with their own
// ledgers, or two instances) may watch one inbox; the ledger's content
// hash only stops one ledger from taking a file twice. So before a file is
// read, it is renamed into this instance's claim folder,
//
//	<Claim>/<Instance>/<name>            claimed: being read and validated
//	<Claim>/<Instance>/.commit/<name>    past the fence: being committed
//
// (<Claim>/<Instance>/committing/ on a server that refuses names starting
// with a dot: claimnames.go)
//
// with a rename that never replaces (remote.Client.Rename): of several
// processes renaming one file, exactly one succeeds. The folder's name is
// the instance id, so an administrator can tell who holds a file.
//
// A claim untouched for ClaimTimeout (its file's modification time, set to
// the claiming instance's clock when it claimed) is taken to be a dead
// instance's and is taken back by renaming it into this instance's
// folder: again one rename, so two instances taking back the same claim
// cannot both win. A live but slow owner loses nothing by it: before it
// writes anything final to its ledger, it renames the file into its
// .commit folder (the fence), which fails once the file has been taken.
// Files under .commit are never taken back: their owner may have committed
// them, and taking them would pay twice; an administrator releases them by
// hand (docs/ops-claims.md).

// errClaimLost means another instance took the file back: it is not this
// run's any more, and nothing final about it was written here.
var errClaimLost = errors.New("claim lost")

// held is a file this instance holds in its claim folder.
type held struct {
	name       string // the file's name, as the partner gave it
	path       string // where it is now
	claimed    string // its path in this instance's claim folder
	size       int64
	committing bool     // in .commit: past the fence
	trail      []string // where it has been, for the outcome line
}

func (h *held) moved(to string) {
	h.path = to
	h.trail = append(h.trail, to)
}

// prepareClaims checks the claim settings and creates this instance's
// claim folder (and its .commit) on the server if missing.
func (j *Job) prepareClaims(ctx context.Context, rem Remote) error {
	inst := j.opts.Instance
	if inst == "" || inst == "." || inst == ".." || strings.HasPrefix(inst, ".") || strings.ContainsAny(inst, "/\x00") {
		return fmt.Errorf("ingest: instance id %q cannot name a claim folder", inst)
	}
	claim := path.Clean(j.opts.Claim)
	for _, d := range []string{j.opts.Inbox, j.opts.Archive, j.opts.Failed, j.opts.Outbox} {
		if d != "" && path.Clean(d) == claim {
			return fmt.Errorf("ingest: the claim folder %s must not be the inbox, archive, failed or outbox folder; leave sftp.claim empty for %s", claim, defaultClaim(j.opts.Inbox, j.opts.NoDotNames))
		}
	}
	if err := rem.MkdirAll(ctx, j.commitDir()); err != nil {
		return fmt.Errorf("create the claim folder %s (sftp.claim; the SFTP account must be allowed to create it, or set sftp.claim to a folder it may): %w", j.claimDir(), err)
	}
	return nil
}

// claim renames an inbox file into this instance's claim folder. It
// returns nil and no Outcome when another batchd claimed the file first.
func (j *Job) claim(ctx context.Context, rem Remote, f remote.FileInfo) (*held, Outcome, error) {
	from := path.Join(j.opts.Inbox, f.Name)
	to := path.Join(j.claimDir(), f.Name)
	err := rem.Rename(ctx, from, to)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		j.log.Info("another batchd claimed the file first", "file", f.Name, "inbox", j.opts.Inbox, "claims", j.opts.Claim)
		return nil, Outcome{}, nil
	case errors.Is(err, fs.ErrExist):
		detail := fmt.Sprintf("%s (left there): a file of the same name is already in this instance's claim folder %s; it is claimed once that one is settled", from, j.claimDir())
		j.log.Warn("file not claimed: same name already claimed", "file", f.Name, "at", from, "claim_folder", j.claimDir())
		return nil, Outcome{File: f.Name, Outcome: Waiting, Detail: detail}, nil
	case err != nil:
		err = fmt.Errorf("claim %s: %w", from, err)
		return nil, Outcome{File: f.Name, Outcome: Failed, Detail: from + " (left there): " + err.Error()}, err
	}
	j.touch(ctx, rem, to)
	if j.opts.DoneMarker {
		j.moveMarker(ctx, rem, from, to)
	}
	j.log.Info("claimed", "file", f.Name, "from", from, "to", to, "instance", j.opts.Instance)
	return &held{name: f.Name, path: to, claimed: to, size: f.Size, trail: []string{from, to}}, Outcome{}, nil
}

// ownClaims lists the files this instance claimed in a run that stopped
// before settling them: past the fence first, then the others. They are
// this instance's, whatever their age. Entries there that are not regular
// files are not resumed: they are reported, as "ignored", and left.
func (j *Job) ownClaims(ctx context.Context, rem Remote) ([]*held, []Outcome, error) {
	var (
		out, unmarked []*held
		ignored       []Outcome
	)
	folders, err := j.ownFolders(ctx, rem)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range folders {
		dir, list := c.dir, c.list
		names := map[string]bool{}
		for _, f := range list {
			names[f.Name] = true
		}
		for _, f := range list {
			if !heldFile(f) {
				continue
			}
			p := path.Join(dir, f.Name)
			if !f.Regular() {
				j.log.Warn("claim folder entry is not a regular file: left there, not followed or read", "file", f.Name, "at", p, "kind", f.Kind())
				ignored = append(ignored, Outcome{File: f.Name, Outcome: Ignored, Detail: p + " (left there): " + notRegularNote(f.Kind())})
				continue
			}
			h := &held{name: f.Name, path: p, claimed: p, size: f.Size, committing: c.committing}
			if h.committing {
				h.trail = []string{p + " (left by an earlier run while committing)"}
			} else {
				if err := j.touch(ctx, rem, p); errors.Is(err, fs.ErrNotExist) {
					j.log.Warn("claim lost while this instance was stopped: another batchd took it back", "file", f.Name, "was", p)
					continue
				}
				h.trail = []string{p + " (claimed by an earlier run)"}
			}
			j.log.Info("resuming a claim left by an earlier run", "file", f.Name, "at", p)
			out = append(out, h)
			if j.opts.DoneMarker && !names[f.Name+".done"] {
				unmarked = append(unmarked, h)
			}
		}
	}
	if len(unmarked) > 0 {
		j.fetchMarkers(ctx, rem, unmarked)
	}
	return out, ignored, nil
}

// fetchMarkers moves along the .done markers that a run stopped between
// claiming a file and moving its marker left in the inbox, so that a new
// upload of the same name is not taken for complete. A marker whose file
// is in the inbox again is that file's, and stays.
func (j *Job) fetchMarkers(ctx context.Context, rem Remote, hs []*held) {
	list, err := rem.List(ctx, j.opts.Inbox)
	if err != nil {
		j.log.Warn("list inbox for left-behind markers", "err", err)
		return
	}
	in := map[string]bool{}
	for _, f := range list {
		in[f.Name] = true
	}
	for _, h := range hs {
		if in[h.name+".done"] && !in[h.name] {
			j.moveMarker(ctx, rem, path.Join(j.opts.Inbox, h.name), h.path)
		}
	}
}

// staleClaims takes back the files other instances have held untouched
// for ClaimTimeout. Failures here are logged and skipped: the inbox still
// gets picked up.
func (j *Job) staleClaims(ctx context.Context, rem Remote) []*held {
	dirs, err := rem.List(ctx, j.opts.Claim)
	if err != nil {
		j.log.Warn("list claim folders", "dir", j.opts.Claim, "err", err)
		return nil
	}
	now := j.opts.Now()
	var out []*held
	for _, d := range dirs {
		if !d.IsDir || d.Name == j.opts.Instance || strings.HasPrefix(d.Name, ".") || ctx.Err() != nil {
			continue
		}
		dir := path.Join(j.opts.Claim, d.Name)
		list, err := rem.List(ctx, dir)
		if err != nil {
			j.log.Warn("list another instance's claim folder", "dir", dir, "err", err)
			continue
		}
		for _, f := range list {
			if !j.candidate(f) || now.Sub(f.ModTime) < j.opts.ClaimTimeout {
				continue
			}
			if h := j.takeBack(ctx, rem, d.Name, dir, f); h != nil {
				out = append(out, h)
			}
		}
		j.reportCommitting(ctx, rem, d.Name, dir)
	}
	return out
}

// takeBack renames a stale claim of instance other into this instance's
// claim folder. It returns nil if the file was not taken.
func (j *Job) takeBack(ctx context.Context, rem Remote, other, dir string, f remote.FileInfo) *held {
	from := path.Join(dir, f.Name)
	to := path.Join(j.claimDir(), f.Name)
	since := f.ModTime.In(j.opts.Location).Format("2006-01-02 15:04:05 MST")
	err := rem.Rename(ctx, from, to)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		j.log.Info("stale claim gone before it could be taken back", "file", f.Name, "from", from)
		return nil
	case err != nil:
		j.log.Warn("cannot take back a stale claim", "file", f.Name, "from", from, "to", to, "err", err)
		return nil
	}
	j.touch(ctx, rem, to)
	j.moveMarker(ctx, rem, from, to)
	j.log.Warn("took back a stale claim", "file", f.Name, "from", from, "to", to,
		"instance", other, "untouched_since", since, "claim_timeout", j.opts.ClaimTimeout.String())
	return &held{name: f.Name, path: to, claimed: to, size: f.Size, trail: []string{
		fmt.Sprintf("%s (claim of instance %s, untouched since %s)", from, other, since), to}}
}

// reportCommitting warns about files another instance has held past its
// fence for ClaimTimeout: they may be committed in its ledger, so batchd
// never takes them back; a person must.
func (j *Job) reportCommitting(ctx context.Context, rem Remote, other, dir string) {
	for _, commit := range []string{dotCommit, plainCommit} { // the other's sftp.temp_upload may not be ours
		j.reportCommittingIn(ctx, rem, other, path.Join(dir, commit))
	}
}

func (j *Job) reportCommittingIn(ctx context.Context, rem Remote, other, cdir string) {
	list, err := rem.List(ctx, cdir)
	if err != nil {
		return // usually: no such folder
	}
	for _, f := range list {
		if heldFile(f) && j.opts.Now().Sub(f.ModTime) >= j.opts.ClaimTimeout {
			j.log.Warn("a stopped instance holds a file it may have committed; batchd never takes such a file back: release it by hand (see docs/ops-claims.md)",
				"file", f.Name, "at", path.Join(cdir, f.Name), "instance", other,
				"untouched_since", f.ModTime.In(j.opts.Location).Format("2006-01-02 15:04:05 MST"))
		}
	}
}

// fence renames a held file into the .commit folder before anything final
// is written to the ledger. It fails with errClaimLost if another instance
// has taken the file back meanwhile; from then on, none will.
func (j *Job) fence(ctx context.Context, rem Remote, h *held) error {
	if h.committing {
		return nil
	}
	to := path.Join(j.commitDir(), h.name)
	err := rem.Rename(ctx, h.path, to)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errClaimLost
	case err != nil:
		return fmt.Errorf("move %s to %s before committing: %w", h.path, to, err)
	}
	if j.opts.DoneMarker {
		j.moveMarker(ctx, rem, h.path, to)
	}
	j.log.Info("committing", "file", h.name, "from", h.path, "to", to)
	h.moved(to)
	h.committing = true
	return nil
}

// giveBack returns a claimed file that is still being written to the
// inbox, where the stability wait applies to it again (a resumed claim is
// read without one). It reports whether the file is back there.
func (j *Job) giveBack(ctx context.Context, rem Remote, h *held) bool {
	back := path.Join(j.opts.Inbox, h.name)
	if err := rem.Rename(ctx, h.path, back); err != nil {
		j.log.Warn("cannot return a file that is still changing to the inbox", "file", h.name, "at", h.path, "err", err)
		return false
	}
	j.moveMarker(ctx, rem, h.path, back)
	j.log.Warn("file changed while it was read: returned to the inbox", "file", h.name, "from", h.path, "to", back)
	h.moved(back)
	return true
}

// touch sets a claimed file's modification time to now, which is what
// other instances read a claim's age from. A server that refuses is
// logged: the claim then ages from the upload, and may be taken back
// early, which costs this instance the file but never pays it twice.
func (j *Job) touch(ctx context.Context, rem Remote, p string) error {
	err := rem.Touch(ctx, p, j.opts.Now())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		j.log.Warn("cannot set a claimed file's time; other instances may take it back ingest.claim_timeout after its upload", "at", p, "err", err)
		return nil
	}
	return err
}

// moveMarker moves <from>.done beside <to>, if there is one.
func (j *Job) moveMarker(ctx context.Context, rem Remote, from, to string) {
	err := rem.Rename(ctx, from+".done", to+".done")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		j.log.Warn("move done marker", "from", from+".done", "to", to+".done", "err", err)
	}
}

// heldFile reports whether an entry of a claim folder is a claimed file
// or what stands in its place (not a marker, a folder or a hidden file).
// A claimed file that is not a regular file is never read (see Regular).
func heldFile(f remote.FileInfo) bool {
	return !f.IsDir && !strings.HasPrefix(f.Name, ".") && !strings.HasSuffix(f.Name, ".done")
}

// settle processes a held file and records its Outcome, whose Detail
// starts with the file's path at every step, ending where it is now.
func (j *Job) settle(ctx context.Context, rem Remote, h *held, out *[]Outcome) error {
	o, err := j.process(ctx, rem, h)
	if errors.Is(err, errClaimLost) {
		j.log.Warn("claim lost: another batchd took the file back after ingest.claim_timeout; nothing of it was committed here",
			"file", h.name, "was", h.path, "claim_timeout", j.opts.ClaimTimeout.String())
		return nil
	}
	o.Claim = h.claimed
	steps := append([]string(nil), h.trail...)
	if o.MovedTo != "" {
		steps = append(steps, o.MovedTo)
	}
	where := strings.Join(steps, " -> ")
	if err != nil && o.MovedTo == "" {
		where += " (left there; the next run resumes it)"
	}
	if !o.Kind.Payments() && o.Batch != 0 {
		note := fmt.Sprintf("%s batch %d", o.Kind, o.Batch)
		if o.Detail != "" {
			note += "; " + o.Detail
		}
		o.Detail = note
	}
	if o.Detail != "" {
		where += ": " + o.Detail
	}
	o.Detail = where
	j.record(out, o)
	return err
}
