package remote_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/testsshd"
)

// These tests run against a real OpenSSH sshd. It has an unpinned ECDSA host
// key besides the pinned ed25519 one, so every successful Dial also proves
// that the client asks for the pinned key type.

func TestListStatExistsReadFile(t *testing.T) {
	t.Parallel()
	s := testsshd.Start(t)
	c := dial(t, sshdOptions(s))
	ctx := ctxT(t)
	writeFile(t, s.Path("inbox", "b.csv"), "bb")
	writeFile(t, s.Path("inbox", "a.csv"), "a")
	writeFile(t, s.Path("inbox", "a.csv.done"), "ok\n")
	if err := os.Mkdir(s.Path("inbox", "sub"), 0o700); err != nil {
		t.Fatal(err)
	}

	got, err := c.List(ctx, s.Path("inbox"))
	if err != nil {
		t.Fatal(err)
	}
	var summary []string
	for _, fi := range got {
		summary = append(summary, fi.Name+map[bool]string{true: "/", false: ""}[fi.IsDir])
	}
	if want := []string{"a.csv", "a.csv.done", "b.csv", "sub/"}; !slices.Equal(summary, want) {
		t.Fatalf("List = %v, want %v", summary, want)
	}
	if got[2].Size != 2 || got[2].ModTime.IsZero() || !got[2].Mode.IsRegular() {
		t.Errorf("b.csv info = %+v", got[2])
	}

	fi, err := c.Stat(ctx, s.Path("inbox", "b.csv"))
	if err != nil || fi.Name != "b.csv" || fi.Size != 2 || fi.IsDir {
		t.Errorf("Stat = %+v, %v", fi, err)
	}
	if _, err := c.Stat(ctx, s.Path("inbox", "nope")); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "sftp stat "+s.Path("inbox", "nope")) {
		t.Errorf("Stat missing: %v", err)
	}
	for name, want := range map[string]bool{"a.csv": true, "nope.csv": false} {
		if ok, err := c.Exists(ctx, s.Path("inbox", name)); err != nil || ok != want {
			t.Errorf("Exists(%s) = %v, %v", name, ok, err)
		}
	}

	if b, err := c.ReadFile(ctx, s.Path("inbox", "a.csv.done"), 16); err != nil || string(b) != "ok\n" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if _, err := c.ReadFile(ctx, s.Path("inbox", "a.csv.done"), 2); err == nil || !strings.Contains(err.Error(), "larger than 2 bytes") {
		t.Errorf("ReadFile over limit: %v", err)
	}
}

func TestDownloadStreamsToHashNamedFile(t *testing.T) {
	t.Parallel()
	s := testsshd.Start(t)
	c := dial(t, sshdOptions(s))
	content := make([]byte, 1<<20+123) // many SFTP packets
	rand.Read(content)
	writeFile(t, s.Path("inbox", "Payments 2024.csv"), string(content))
	spool := t.TempDir()

	local, sum, size, err := c.Download(ctxT(t), s.Path("inbox", "Payments 2024.csv"), spool)
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(content)
	if sum != hex.EncodeToString(want[:]) || size != int64(len(content)) {
		t.Fatalf("sum, size = %s, %d", sum, size)
	}
	if local != filepath.Join(spool, sum+".csv") {
		t.Fatalf("local = %s", local)
	}
	if got, err := os.ReadFile(local); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("local content differs (err %v)", err)
	}
	if fi, _ := os.Stat(local); fi.Mode().Perm() != 0o600 {
		t.Errorf("local mode %v, want 0600: the spool holds bank data", fi.Mode().Perm())
	}
	if n := names(t, spool); len(n) != 1 {
		t.Errorf("spool holds %v, want only the download", n)
	}
	// The remote file is untouched.
	if _, err := os.Stat(s.Path("inbox", "Payments 2024.csv")); err != nil {
		t.Error(err)
	}
}

func TestDownloadMissingLeavesNothing(t *testing.T) {
	t.Parallel()
	s := testsshd.Start(t)
	c := dial(t, sshdOptions(s))
	spool := t.TempDir()
	_, _, _, err := c.Download(ctxT(t), s.Path("inbox", "gone.csv"), spool)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
	if n := names(t, spool); len(n) != 0 {
		t.Errorf("spool holds %v", n)
	}
}

// A reader of outbox never sees the report under its final name before it
// is complete: the upload is blocked halfway while the directory is listed.
func TestUploadIsAtomic(t *testing.T) {
	t.Parallel()
	s := testsshd.Start(t)
	c := dial(t, sshdOptions(s))
	watcher := dial(t, sshdOptions(s))
	ctx := ctxT(t)
	outbox := s.Path("outbox")
	writeFile(t, filepath.Join(outbox, "report.csv"), "old report\n")

	head := bytes.Repeat([]byte("row,1\n"), 20000) // 120 kB: several packets
	tail := []byte("last,row\n")
	r := newGateReader(head, tail)
	done := make(chan error, 1)
	go func() { done <- c.Upload(ctx, outbox, "report.csv", r) }()
	<-r.reached

	// Half the data is on the server, under a hidden temporary name.
	var tmp string
	eventually(t, "partial data in a temporary file", func() bool {
		for _, n := range names(t, outbox) {
			if strings.HasPrefix(n, ".report.csv.") && strings.HasSuffix(n, ".tmp") {
				fi, err := os.Stat(filepath.Join(outbox, n))
				tmp = n
				return err == nil && fi.Size() > 0
			}
		}
		return false
	})
	list, err := watcher.List(ctx, outbox)
	if err != nil {
		t.Fatal(err)
	}
	for _, fi := range list {
		if fi.Name == "report.csv" && fi.Size != int64(len("old report\n")) {
			t.Fatalf("report.csv visible with %d bytes mid-upload", fi.Size)
		}
	}
	if got := readFile(t, filepath.Join(outbox, "report.csv")); got != "old report\n" {
		t.Fatalf("report.csv changed mid-upload: %d bytes", len(got))
	}

	close(r.release)
	if err := <-done; err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if got := readFile(t, filepath.Join(outbox, "report.csv")); got != string(head)+string(tail) {
		t.Fatalf("report.csv has %d bytes, want %d", len(got), len(head)+len(tail))
	}
	if n := names(t, outbox); !slices.Equal(n, []string{"report.csv"}) {
		t.Fatalf("outbox holds %v (temporary %s should be gone)", n, tmp)
	}
}

func TestUploadFailureRemovesTemporaryFile(t *testing.T) {
	t.Parallel()
	s := testsshd.Start(t)
	c := dial(t, sshdOptions(s))
	r := newGateReader(bytes.Repeat([]byte("x"), 70000), nil)
	close(r.release)
	r.err = errors.New("disk read failed")
	err := c.Upload(ctxT(t), s.Path("outbox"), "r.csv", r)
	if err == nil || !strings.Contains(err.Error(), "disk read failed") || !strings.Contains(err.Error(), "sftp upload "+s.Path("outbox", "r.csv")) {
		t.Fatalf("Upload err = %v", err)
	}
	if errors.Is(err, remote.ErrConnectionLost) {
		t.Errorf("a reader error was taken for a lost connection: %v", err)
	}
	if n := names(t, s.Path("outbox")); len(n) != 0 {
		t.Fatalf("outbox holds %v after a failed upload", n)
	}
	if c.Reconnects() != 0 {
		t.Errorf("reconnected %d times after a local error", c.Reconnects())
	}
}

func TestUploadCreatesDirectory(t *testing.T) {
	t.Parallel()
	s := testsshd.Start(t)
	c := dial(t, sshdOptions(s))
	dir := s.Path("outbox", "2024-01-02")
	if err := c.Upload(ctxT(t), dir, "status.csv", strings.NewReader("a,b\n")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "status.csv")); got != "a,b\n" {
		t.Fatalf("got %q", got)
	}
}

func TestMoveNeverOverwrites(t *testing.T) {
	t.Parallel()
	s := testsshd.Start(t)
	c := dial(t, sshdOptions(s))
	ctx := ctxT(t)
	day := s.Path("archive", "2024-01-02")
	writeFile(t, filepath.Join(day, "pay.csv"), "first")
	writeFile(t, filepath.Join(day, "pay-1.csv"), "second")

	writeFile(t, s.Path("inbox", "pay.csv"), "third")
	got, err := c.Move(ctx, s.Path("inbox", "pay.csv"), day, "pay.csv")
	if err != nil {
		t.Fatal(err)
	}
	if got != filepath.Join(day, "pay-2.csv") {
		t.Fatalf("moved to %s", got)
	}
	for name, want := range map[string]string{"pay.csv": "first", "pay-1.csv": "second", "pay-2.csv": "third"} {
		if c := readFile(t, filepath.Join(day, name)); c != want {
			t.Errorf("%s = %q, want %q", name, c, want)
		}
	}
	if n := names(t, s.Path("inbox")); len(n) != 0 {
		t.Errorf("inbox still holds %v", n)
	}

	// A fresh directory is created; no clash, no suffix.
	writeFile(t, s.Path("inbox", "x.csv"), "x")
	failed := s.Path("failed", "2024-01-03")
	if got, err := c.Move(ctx, s.Path("inbox", "x.csv"), failed, "x.csv"); err != nil || got != filepath.Join(failed, "x.csv") {
		t.Fatalf("Move = %s, %v", got, err)
	}
	if _, err := c.Move(ctx, s.Path("inbox", "x.csv"), failed, "x.csv"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Move of a missing file: %v", err)
	}
}

func TestHostKeyMismatchIsRefused(t *testing.T) {
	t.Parallel()
	s := testsshd.Start(t)
	o := sshdOptions(s)
	o.KnownHosts = s.WrongHostKnownHosts(t)
	_, err := remote.Dial(ctxT(t), o)
	var hke *remote.HostKeyError
	if !errors.As(err, &hke) || hke.Unknown() {
		t.Fatalf("Dial err = %v, want a host key mismatch", err)
	}
	mustContain(t, err.Error(), "sftp "+s.Addr+": host key mismatch", s.HostKeyFingerprint,
		"ssh-ed25519", o.KnownHosts+" (line 1)", "refusing to connect")
}

func TestUnknownHostIsRefused(t *testing.T) {
	t.Parallel()
	s := testsshd.Start(t)
	o := sshdOptions(s)
	o.KnownHosts = filepath.Join(t.TempDir(), "known_hosts")
	// Pins the right key, but for another port: not this host.
	line := strings.Replace(readFile(t, s.KnownHosts), s.Addr[strings.LastIndex(s.Addr, ":")+1:], "1", 1)
	writeFile(t, o.KnownHosts, line)
	_, err := remote.Dial(ctxT(t), o)
	var hke *remote.HostKeyError
	if !errors.As(err, &hke) || !hke.Unknown() {
		t.Fatalf("Dial err = %v, want unknown host", err)
	}
	mustContain(t, err.Error(), "is not in known_hosts "+o.KnownHosts, "ssh-keyscan", "refusing to connect")
}

func TestReconnectsAfterServerDropsConnection(t *testing.T) {
	t.Parallel()
	s := testsshd.Start(t)
	var logs logBuffer
	o := sshdOptions(s)
	o.Logger = logs.logger()
	c := dial(t, o)
	ctx := ctxT(t)
	writeFile(t, s.Path("inbox", "a.csv"), "a")
	if _, err := c.List(ctx, s.Path("inbox")); err != nil {
		t.Fatal(err)
	}

	s.DropConnections(t)
	got, err := c.List(ctx, s.Path("inbox"))
	if err != nil || len(got) != 1 {
		t.Fatalf("List after drop = %v, %v", got, err)
	}
	if n := c.Reconnects(); n != 1 {
		t.Fatalf("Reconnects = %d, want 1", n)
	}
	mustContain(t, logs.String(), "sftp reconnected")
}

func TestReconnectsAfterServerRestart(t *testing.T) {
	t.Parallel()
	s := testsshd.Start(t)
	c := dial(t, sshdOptions(s))
	ctx := ctxT(t)
	writeFile(t, s.Path("inbox", "a.csv"), "abc")
	s.Restart(t)
	_, _, size, err := c.Download(ctx, s.Path("inbox", "a.csv"), t.TempDir())
	if err != nil || size != 3 {
		t.Fatalf("Download after restart = %d, %v", size, err)
	}
	if n := c.Reconnects(); n != 1 {
		t.Fatalf("Reconnects = %d, want 1", n)
	}
}

func TestWrongClientKeyIsRefusedClearly(t *testing.T) {
	t.Parallel()
	s := testsshd.Start(t)
	o := sshdOptions(s)
	o.IdentityFile = generateKey(t)
	_, err := remote.Dial(ctxT(t), o)
	if err == nil {
		t.Fatal("Dial succeeded with an unauthorized key")
	}
	mustContain(t, err.Error(), "refused user", o.IdentityFile, "authorized_keys")
	assertNoKeyMaterial(t, o.IdentityFile, err.Error())
}
