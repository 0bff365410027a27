package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/sftpd"
)

// TestNoDotNamesOnAServerRefusingThem: on a server that refuses every name
// starting with a dot (ProFTPD's PathDenyFilter, SFTPGo's
// denied_patterns), with sftp.temp_upload: suffix, files are claimed,
// fenced, archived and refused, and the rejects report delivered, with
// sftp.claim set and with its default: batchd creates no dot-named folder
// or file there. Before, every ingest failed at "mkdir …/.commit".
func TestNoDotNamesOnAServerRefusingThem(t *testing.T) {
	for _, claim := range []string{"claims", ""} {
		t.Run("claim="+claim, func(t *testing.T) {
			s, err := sftpd.Start(context.Background(), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			var refused []string
			dotted := func(p string) error {
				rel, _ := filepath.Rel(s.Root, p)
				for _, part := range strings.Split(rel, "/") {
					if strings.HasPrefix(part, ".") && part != ".." {
						refused = append(refused, rel)
						return errors.New("names starting with a dot are denied")
					}
				}
				return nil
			}
			s.SetHooks(sftpd.Hooks{Create: dotted, Mkdir: dotted, Rename: func(_, to string) error { return dotted(to) }})
			srv := server{s.Root, remote.Options{Address: s.Addr, User: s.User, IdentityFile: s.IdentityFile,
				KnownHosts: s.KnownHostsFile, TempUpload: remote.TempSuffix}, s}
			r := newRig(t, srv, func(o *Options) {
				o.NoDotNames = true
				if claim != "" {
					o.Claim = filepath.Join(s.Root, claim)
				}
			})
			r.drop("a.csv", rows(1, 0))
			r.drop("b.csv", rows(2, 1))
			out, err := r.cycle(r.rem)
			if err != nil || summary(out) != "a.csv:accepted,b.csv:rejected" {
				t.Fatalf("outcomes %s, err %v", summary(out), err)
			}
			if got := r.files("archive"); !slices.Equal(got, []string{"2026-11-20/a.csv"}) {
				t.Fatalf("archive %v", got)
			}
			if got := r.files("outbox"); !slices.Contains(got, "b.csv.rejects.csv") {
				t.Fatalf("outbox %v", got)
			}
			mustContain(t, out[0].Detail, "/committing/a.csv")
			if len(refused) > 0 {
				t.Fatalf("batchd asked for names starting with a dot: %v", refused)
			}
		})
	}
}

// TestResumeClaimOfTheOtherNaming: a file this instance held in the
// default claim folder when sftp.temp_upload changed from dot to suffix
// (so the folder's name from .batchd to batchd-claims) is resumed from
// where it is, not left there forever.
func TestResumeClaimOfTheOtherNaming(t *testing.T) {
	s, err := sftpd.Start(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	srv := server{s.Root, remote.Options{Address: s.Addr, User: s.User, IdentityFile: s.IdentityFile, KnownHosts: s.KnownHostsFile}, s}
	r := newRig(t, srv, func(o *Options) { o.NoDotNames = true })
	old := filepath.Join(r.opts.Inbox, ".batchd", r.db.Instance())
	if err := os.MkdirAll(filepath.Join(old, ".commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "a.csv"), []byte(rows(1, 0)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := New(r.db, r.opts).Run(context.Background(), r.rem) // a resumed claim is read at once
	if err != nil || summary(out) != "a.csv:accepted" {
		t.Fatalf("outcomes %s, err %v", summary(out), err)
	}
	mustContain(t, out[0].Detail, "/.batchd/"+r.db.Instance()+"/a.csv (claimed by an earlier run) -> ", "/batchd-claims/"+r.db.Instance()+"/committing/a.csv")
}
