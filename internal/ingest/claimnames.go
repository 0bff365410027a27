package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/batchd/batchd/internal/remote"
)

// The names of the folders batchd creates for claims. A partner's server
// may refuse every name starting with a dot (ProFTPD's PathDenyFilter,
// SFTPGo's denied_patterns): its administrators then set
// sftp.temp_upload to suffix or none, and batchd creates no dot-named
// folder either (Options.NoDotNames), or every ingest would fail at
// "mkdir .../.commit: permission denied".
const (
	dotClaim   = ".batchd"       // default claim folder under the inbox
	plainClaim = "batchd-claims" // the same, on a server refusing dot names
	dotCommit  = ".commit"       // the fence's folder in a claim folder
	// plainCommit is the fence's folder on a server refusing dot names. A
	// folder is never a claimed file (heldFile), so a partner's file of
	// this name is only ever left waiting in the inbox.
	plainCommit = "committing"
)

// claimNames are the default claim folder's and the commit folder's names,
// with or without a leading dot.
func claimNames(noDot bool) (claim, commit string) {
	if noDot {
		return plainClaim, plainCommit
	}
	return dotClaim, dotCommit
}

// defaultClaim is Options.Claim's default for an inbox.
func defaultClaim(inbox string, noDot bool) string {
	name, _ := claimNames(noDot)
	return path.Join(inbox, name)
}

func (j *Job) claimDir() string { return path.Join(j.opts.Claim, j.opts.Instance) }

func (j *Job) commitDir() string {
	_, commit := claimNames(j.opts.NoDotNames)
	return path.Join(j.claimDir(), commit)
}

// claimFolder is one folder ownClaims resumes files from, as listed.
type claimFolder struct {
	dir        string
	committing bool // past the fence
	list       []remote.FileInfo
}

// ownFolders lists the folders this instance's held files may be in, past
// the fence first: its claim folder and its commit folder, and those of the
// other naming, where a file sits that was held when sftp.temp_upload
// changed between dot and the others (and, with the default claim folder,
// that folder's name with it). The other naming's are usually missing,
// and cost one listing a run at most.
func (j *Job) ownFolders(ctx context.Context, rem Remote) ([]claimFolder, error) {
	var claims []claimFolder
	for _, dir := range []string{j.commitDir(), j.claimDir()} {
		list, err := rem.List(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("list claim folder %s: %w", dir, err)
		}
		claims = append(claims, claimFolder{dir: dir, committing: dir == j.commitDir(), list: list})
	}
	fences := []claimFolder{claims[0]}
	claims = claims[1:]
	fences = append(fences, j.fencesIn(ctx, rem, claims[0])...)
	if j.opts.Claim == defaultClaim(j.opts.Inbox, j.opts.NoDotNames) {
		other, _ := claimNames(!j.opts.NoDotNames)
		dir := path.Join(j.opts.Inbox, other, j.opts.Instance)
		if list := j.listOther(ctx, rem, dir); list != nil {
			c := claimFolder{dir: dir, list: list}
			fences = append(fences, j.fencesIn(ctx, rem, c)...)
			claims = append(claims, c)
		}
	}
	return append(fences, claims...), nil
}

// fencesIn lists the commit folders, of either naming, that c's listing
// shows, but this instance's own (listed already).
func (j *Job) fencesIn(ctx context.Context, rem Remote, c claimFolder) []claimFolder {
	var out []claimFolder
	for _, f := range c.list {
		p := path.Join(c.dir, f.Name)
		if f.IsDir && (f.Name == dotCommit || f.Name == plainCommit) && p != j.commitDir() {
			out = append(out, claimFolder{dir: p, committing: true, list: j.listOther(ctx, rem, p)})
		}
	}
	return out
}

// listOther lists a folder of the other naming: one that is missing, or
// that a server refusing dot names will not show, holds nothing of ours.
func (j *Job) listOther(ctx context.Context, rem Remote, dir string) []remote.FileInfo {
	list, err := rem.List(ctx, dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
			j.log.Warn("list a claim folder of the other sftp.temp_upload naming", "dir", dir, "err", err)
		}
		return nil
	}
	return list
}
