package remote

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/sftpd"
)

// After a reconnect, Rename first finds out whether the lost rename
// happened, and tells "another client took it" from "it is done".
func TestRenameRetryChecksLostRename(t *testing.T) {
	s, err := sftpd.Start(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := dialInternal(t, Options{Address: s.Addr, User: s.User, IdentityFile: s.IdentityFile, KnownHosts: s.KnownHostsFile})
	from, to := path.Join(s.Root, "in.csv"), path.Join(s.Root, "claim.csv")
	if err := os.WriteFile(from, []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := c.cur.sftp.Lstat(from) // as Rename records it: whole seconds
	if err != nil {
		t.Fatal(err)
	}
	retry := &call{cn: c.cur, wd: newWatchdog(time.Hour, func() {}), retried: true}
	defer retry.wd.stop()

	// The rename happened before the answer was lost: done, nothing more.
	r := &renamer{from: from, to: to, src: src, sent: true}
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
	if err := r.rename(retry); err != nil {
		t.Fatalf("rename after a lost, completed rename: %v", err)
	}

	// Another client took the source meanwhile: gone, not done.
	r = &renamer{from: to, to: from + ".mine", src: src, sent: true}
	if err := os.Rename(to, from+".theirs"); err != nil {
		t.Fatal(err)
	}
	if err := r.rename(retry); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("rename of a file taken meanwhile: %v", err)
	}

	// It did not happen: it is done afresh.
	r = &renamer{from: from + ".theirs", to: to, src: src, sent: true}
	if err := r.rename(retry); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(to); string(b) != "abc" {
		t.Fatalf("target holds %q", b)
	}
}
