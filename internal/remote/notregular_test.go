package remote_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/testsshd"
)

// secret is content no error, listing or download may ever show.
const secret = "SECRET-do-not-quote"

// notRegularServers are the two servers batchd meets: the real OpenSSH
// sshd (production) and the in-process one (the demo), each with its area.
func notRegularServers(t *testing.T) map[string]func(t *testing.T) (remote.Options, string) {
	return map[string]func(t *testing.T) (remote.Options, string){
		"openssh": func(t *testing.T) (remote.Options, string) {
			s := testsshd.Start(t)
			return sshdOptions(s), s.Root
		},
		"inprocess": func(t *testing.T) (remote.Options, string) {
			s, dir := startSFTPD(t)
			return sftpdOptions(s), dir
		},
	}
}

// List shows links, folders and FIFOs as what they are, without following
// them, and Download refuses every one of them before reading a byte of
// what they point to; Lstat describes a link as a link.
func TestNotRegularEntriesAreListedAsSuchAndNeverDownloaded(t *testing.T) {
	for name, start := range notRegularServers(t) {
		t.Run(name, func(t *testing.T) {
			opts, root := start(t)
			c := dial(t, opts)
			ctx := ctxT(t)
			outside := filepath.Join(t.TempDir(), "secret.csv")
			writeFile(t, outside, secret+"\n")
			inbox := filepath.Join(root, "inbox")
			writeFile(t, filepath.Join(inbox, "plain.csv"), "a,b\n")
			must(t, os.Symlink(outside, filepath.Join(inbox, "link.csv")))
			must(t, os.Symlink(t.TempDir(), filepath.Join(inbox, "dirlink.csv")))
			must(t, syscall.Mkfifo(filepath.Join(inbox, "fifo.csv"), 0o600))
			must(t, os.Mkdir(filepath.Join(inbox, "sub.csv"), 0o700))

			list, err := c.List(ctx, inbox)
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]string{}
			for _, f := range list {
				kinds[f.Name] = f.Kind()
				if f.Regular() != (f.Name == "plain.csv") {
					t.Errorf("%s: Regular() = %v (mode %v)", f.Name, f.Regular(), f.Mode)
				}
			}
			want := map[string]string{"plain.csv": "regular file", "link.csv": "symbolic link", "dirlink.csv": "symbolic link",
				"fifo.csv": "named pipe", "sub.csv": "folder"}
			for n, k := range want {
				if kinds[n] != k {
					t.Errorf("%s listed as %q, want %q", n, kinds[n], k)
				}
			}
			if fi, err := c.Lstat(ctx, filepath.Join(inbox, "link.csv")); err != nil || fi.Regular() || fi.Kind() != "symbolic link" {
				t.Errorf("Lstat link: %+v %v", fi, err)
			}

			spool := t.TempDir()
			for _, n := range []string{"link.csv", "dirlink.csv", "fifo.csv", "sub.csv"} {
				_, _, _, err := c.Download(ctx, filepath.Join(inbox, n), spool)
				if !errors.Is(err, remote.ErrNotRegular) {
					t.Errorf("download %s: %v, want ErrNotRegular", n, err)
				}
				if err != nil && strings.Contains(err.Error(), secret) {
					t.Errorf("download %s: error quotes the target: %v", n, err)
				}
			}
			if left := names(t, spool); len(left) != 0 {
				t.Errorf("spool holds %v after refused downloads", left)
			}
			if _, _, _, err := c.Download(ctx, filepath.Join(inbox, "plain.csv"), spool); err != nil {
				t.Errorf("download a regular file: %v", err)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
