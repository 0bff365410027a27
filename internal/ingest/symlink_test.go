package ingest

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// secretContent is what a link in the inbox points to: it must never be
// paid, nor quoted in a note, report, outcome or log line.
const secretContent = "SECRET-do-not-quote"

// plant puts outside the SFTP area a CSV that would be paid if read, and a
// secret file, and returns their paths.
func plant(t *testing.T) (csv, secret string) {
	t.Helper()
	dir := t.TempDir()
	csv, secret = filepath.Join(dir, "outside.csv"), filepath.Join(dir, "secret")
	if err := os.WriteFile(csv, []byte(rows(7, 0)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte(secretContent+",x\n"+secretContent+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return csv, secret
}

// assertNotQuoted fails if the secret shows anywhere batchd writes: the
// server's folders but the planted file, the outcomes, the log.
func assertNotQuoted(t *testing.T, r *rig, out []Outcome, log string) {
	t.Helper()
	filepath.WalkDir(r.srv.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if b, _ := os.ReadFile(p); strings.Contains(string(b), secretContent) {
			t.Errorf("%s quotes the secret", p)
		}
		return nil
	})
	for _, o := range out {
		if strings.Contains(o.Detail, secretContent) {
			t.Errorf("outcome of %s quotes the secret: %s", o.File, o.Detail)
		}
	}
	if strings.Contains(log, secretContent) {
		t.Errorf("log quotes the secret")
	}
}

// A symbolic link in the inbox, to a payment file outside it or to a
// secret, a link to a folder, a named pipe and a folder are neither paid
// nor read nor quoted: each is left where it is and reported once per run,
// by name, and the run, which lost nothing, does not fail. The valid file
// beside them is ingested. Both servers, the real OpenSSH first.
func TestSymlinkAndNotRegularEntriesAreNeverRead(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		var l logs
		r := newRig(t, srv, withLogs(&l))
		csv, secret := plant(t)
		inbox := r.opts.Inbox
		r.drop("pay.csv", rows(1, 0))
		for link, target := range map[string]string{"outside.csv": csv, "secret.csv": secret, "dir.csv": filepath.Dir(csv)} {
			if err := os.Symlink(target, filepath.Join(inbox, link)); err != nil {
				t.Fatal(err)
			}
		}
		if err := syscall.Mkfifo(filepath.Join(inbox, "pipe.csv"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(inbox, "old"), 0o755); err != nil {
			t.Fatal(err)
		}

		j := New(r.db, r.opts)
		first, err := j.Run(context.Background(), r.rem)
		if err != nil {
			t.Fatalf("first run: %v", err)
		}
		r.clk.add(2 * r.opts.StableFor)
		out, err := j.Run(context.Background(), r.rem)
		if err != nil {
			t.Fatalf("second run: %v", err)
		}
		if got, want := summary(out), "dir.csv:ignored,old:ignored,outside.csv:ignored,pipe.csv:ignored,secret.csv:ignored,pay.csv:accepted"; got != want {
			t.Fatalf("outcomes %s, want %s", got, want)
		}
		if n := strings.Count(summary(first), ":ignored"); n != 5 {
			t.Fatalf("first run reported %d entries: %s", n, summary(first))
		}
		for _, o := range out {
			if o.Outcome == "ignored" {
				mustContain(t, o.Detail, filepath.Join(inbox, o.File)+" (left there)", "not a regular file")
			}
			if o.File == "secret.csv" {
				mustContain(t, o.Detail, "symbolic link", "Upload the file itself")
			}
		}
		// Nothing but pay.csv was paid; nothing moved; nothing failed.
		if bs := r.batches(); len(bs) != 1 || r.pendingRows() != 1 {
			t.Fatalf("ledger: %d batches, %d rows", len(bs), r.pendingRows())
		}
		if f := r.files("failed"); len(f) != 0 {
			t.Fatalf("failed %v", f)
		}
		if f := r.files("outbox"); len(f) != 0 {
			t.Fatalf("outbox %v", f)
		}
		for _, n := range []string{"outside.csv", "secret.csv", "dir.csv", "pipe.csv"} {
			if fi, err := os.Lstat(filepath.Join(inbox, n)); err != nil || fi.Mode().IsRegular() {
				t.Fatalf("%s not left in place: %v", n, err)
			}
		}
		mustContain(t, l.String(), "inbox entry is not a regular file", "file=secret.csv", `kind="symbolic link"`)
		assertNotQuoted(t, r, append(first, out...), l.String())
	})
}

// A file swapped for a link between the listing and the download (after it
// was claimed) is caught by the download's own check: it is not read, it
// goes back to the inbox, and is reported; nothing is paid or quoted. A
// link left in this instance's claim folder is not resumed either.
func TestSymlinkSwappedInAfterClaimIsNotRead(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		var l logs
		r := newRig(t, srv, withLogs(&l))
		_, secret := plant(t)
		r.drop("swap.csv", rows(1, 0))
		if err := os.MkdirAll(r.claimDir(), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(secret, filepath.Join(r.claimDir(), "left.csv")); err != nil {
			t.Fatal(err)
		}
		swapped := &beforeDownload{Remote: r.rem, then: func(p string) {
			if err := os.Remove(p); err != nil {
				t.Error(err)
			}
			if err := os.Symlink(secret, p); err != nil {
				t.Error(err)
			}
		}}
		out, err := r.run(swapped)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := summary(out), "left.csv:ignored,swap.csv:ignored"; got != want {
			t.Fatalf("outcomes %s, want %s", got, want)
		}
		mustContain(t, out[1].Detail, "returned to the inbox", "not a regular file")
		if fi, err := os.Lstat(filepath.Join(r.opts.Inbox, "swap.csv")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("swapped link not back in the inbox: %v", err)
		}
		if fi, err := os.Lstat(filepath.Join(r.claimDir(), "left.csv")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("link in the claim folder not left there: %v", err)
		}
		if len(r.batches()) != 0 || len(r.files("failed")) != 0 {
			t.Fatalf("paid or failed: %d batches, failed %v", len(r.batches()), r.files("failed"))
		}
		assertNotQuoted(t, r, out, l.String())
	})
}

// beforeDownload runs then on the remote path once, before the first
// download.
type beforeDownload struct {
	Remote
	once sync.Once
	then func(p string)
}

func (b *beforeDownload) Download(ctx context.Context, p, dir string) (string, string, int64, error) {
	b.once.Do(func() { b.then(p) })
	return b.Remote.Download(ctx, p, dir)
}
