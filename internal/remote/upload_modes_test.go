package remote_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/sftpd"
	"github.com/batchd/batchd/internal/testsshd"
)

var modes = []string{remote.TempDot, remote.TempSuffix, remote.TempNone}

// uploadServer is one of the two servers, with what a test needs of it.
type uploadServer struct {
	root   string
	opts   remote.Options
	sftpd  *sftpd.Server    // the in-process one, with hooks
	sshd   *testsshd.Server // the real one
	outbox string
}

func uploadServers() map[string]func(t *testing.T) uploadServer {
	return map[string]func(t *testing.T) uploadServer{
		"openssh": func(t *testing.T) uploadServer {
			s := testsshd.Start(t)
			return uploadServer{root: s.Root, opts: sshdOptions(s), sshd: s, outbox: s.Path("outbox")}
		},
		"inprocess": func(t *testing.T) uploadServer {
			s, _ := startSFTPD(t)
			out := filepath.Join(s.Root, "outbox")
			if err := os.MkdirAll(out, 0o700); err != nil {
				t.Fatal(err)
			}
			return uploadServer{root: s.Root, opts: sftpdOptions(s), sftpd: s, outbox: out}
		},
	}
}

func withMode(o remote.Options, mode string) remote.Options {
	o.TempUpload = mode
	return o
}

func sumLine(content, name string) string {
	h := sha256.Sum256([]byte(content))
	return hex.EncodeToString(h[:]) + "  " + name + "\n"
}

// In every mode, on both servers, the report arrives whole under its name,
// replacing the old one; in none mode its .done marker follows, holding
// its SHA-256, and nothing else is left.
func TestUploadModesDeliverWholeFiles(t *testing.T) {
	for server, start := range uploadServers() {
		t.Run(server, func(t *testing.T) {
			s := start(t)
			for _, mode := range modes {
				t.Run(mode, func(t *testing.T) {
					c := dial(t, withMode(s.opts, mode))
					dir := filepath.Join(s.outbox, mode)
					writeFile(t, filepath.Join(dir, "r.csv"), "old\n")
					if mode == remote.TempNone {
						writeFile(t, filepath.Join(dir, "r.csv.done"), "old marker\n")
					}
					data := strings.Repeat("row,1\n", 50000) // several packets
					if err := c.Upload(ctxT(t), dir, "r.csv", strings.NewReader(data)); err != nil {
						t.Fatal(err)
					}
					if got := readFile(t, filepath.Join(dir, "r.csv")); got != data {
						t.Fatalf("r.csv has %d bytes, want %d", len(got), len(data))
					}
					want := []string{"r.csv"}
					if mode == remote.TempNone {
						want = append(want, "r.csv.done")
						if got := readFile(t, filepath.Join(dir, "r.csv.done")); got != sumLine(data, "r.csv") {
							t.Fatalf("marker %q", got)
						}
					}
					if n := names(t, dir); !slices.Equal(n, want) {
						t.Fatalf("%s holds %v, want %v", dir, n, want)
					}
				})
			}
		})
	}
}

// Halfway through an upload, a reader of the folder never sees part of the
// report for the whole: under its name there is the old report (dot,
// suffix), or a file without its marker (none).
func TestUploadModesHideThePartialFile(t *testing.T) {
	s := testsshd.Start(t)
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			c := dial(t, withMode(sshdOptions(s), mode))
			dir := s.Path("outbox", mode)
			writeFile(t, filepath.Join(dir, "r.csv"), "old\n")
			writeFile(t, filepath.Join(dir, "r.csv.done"), "old marker\n")
			head, tail := bytes.Repeat([]byte("row,1\n"), 20000), []byte("last\n")
			g := newGateReader(head, tail)
			done := make(chan error, 1)
			go func() { done <- c.Upload(ctxT(t), dir, "r.csv", g) }()
			<-g.reached

			partial := map[string]func(string) bool{
				remote.TempDot:    func(n string) bool { return strings.HasPrefix(n, ".r.csv.") && strings.HasSuffix(n, ".tmp") },
				remote.TempSuffix: func(n string) bool { return strings.HasPrefix(n, "r.csv.") && strings.HasSuffix(n, ".partial") },
				remote.TempNone:   func(n string) bool { return n == "r.csv" },
			}[mode]
			eventually(t, "partial data on the server", func() bool {
				for _, n := range names(t, dir) {
					if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && partial(n) && fi.Size() > 100 {
						return true
					}
				}
				return false
			})
			if mode == remote.TempNone {
				if _, err := os.Stat(filepath.Join(dir, "r.csv.done")); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("the old marker is still there while r.csv is written: %v", err)
				}
			} else if got := readFile(t, filepath.Join(dir, "r.csv")); got != "old\n" {
				t.Fatalf("r.csv changed mid-upload: %d bytes", len(got))
			}
			close(g.release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(dir, "r.csv")); got != string(head)+string(tail) {
				t.Fatalf("r.csv has %d bytes", len(got))
			}
			if mode == remote.TempNone {
				if got := readFile(t, filepath.Join(dir, "r.csv.done")); got != sumLine(string(head)+string(tail), "r.csv") {
					t.Fatalf("marker %q", got)
				}
			}
		})
	}
}

// An upload that fails midway leaves nothing behind: on the in-process
// server a quota refuses writes past 64 KiB; on OpenSSH the connection is
// dropped mid-transfer (the reader cannot be replayed, so the upload
// fails, and its leftover is removed over a new connection).
func TestFailedUploadLeavesNothing(t *testing.T) {
	for server, start := range uploadServers() {
		t.Run(server, func(t *testing.T) {
			s := start(t)
			if s.sftpd != nil {
				s.sftpd.SetHooks(sftpd.Hooks{Write: func(p string, off int64, n int) error {
					if off+int64(n) > 64<<10 {
						return errors.New("quota exceeded")
					}
					return nil
				}})
			}
			for _, mode := range modes {
				t.Run(mode, func(t *testing.T) {
					c := dial(t, withMode(s.opts, mode))
					dir := filepath.Join(s.outbox, mode)
					if err := os.MkdirAll(dir, 0o700); err != nil {
						t.Fatal(err)
					}
					var err error
					if s.sftpd != nil {
						err = c.Upload(ctxT(t), dir, "r.csv", strings.NewReader(strings.Repeat("x", 200<<10)))
					} else {
						g := newGateReader(bytes.Repeat([]byte("row,1\n"), 20000), []byte("last\n"))
						done := make(chan error, 1)
						go func() { done <- c.Upload(ctxT(t), dir, "r.csv", g) }()
						<-g.reached
						eventually(t, "partial data on the server", func() bool {
							for _, n := range names(t, dir) {
								if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && fi.Size() > 0 {
									return true
								}
							}
							return false
						})
						s.sshd.DropConnections(t)
						close(g.release)
						err = <-done
					}
					if err == nil {
						t.Fatal("the upload succeeded")
					}
					if n := names(t, dir); len(n) != 0 {
						t.Fatalf("%s holds %v after a failed upload (%v)", dir, n, err)
					}
				})
			}
		})
	}
}

// A server that refuses deletes keeps a failed upload's temporary file;
// Sweep removes it once deletes work, and only names of its own making,
// and only those untouched since the time it is given.
func TestSweepRemovesOnlyOldLeftovers(t *testing.T) {
	s, _ := startSFTPD(t)
	dir := filepath.Join(s.Root, "outbox")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s.SetHooks(sftpd.Hooks{
		Write:  func(string, int64, int) error { return errors.New("disk full") },
		Remove: func(string) error { return errors.New("deletes are not allowed") },
	})
	ctx := ctxT(t)
	for _, mode := range []string{remote.TempDot, remote.TempSuffix} {
		c := dial(t, withMode(sftpdOptions(s), mode))
		if err := c.Upload(ctx, dir, "r.csv", strings.NewReader("data")); err == nil {
			t.Fatalf("%s: upload succeeded", mode)
		}
	}
	left := names(t, dir)
	if len(left) != 2 || !remote.IsTempName(left[0]) || !remote.IsTempName(left[1]) {
		t.Fatalf("left %v, want the two temporary files", left)
	}
	decoys := []string{"r.csv", ".hidden", "r.csv.partial", "r.csv.0123456789abcdef.partial.csv", ".r.csv.0123456789ABCDEF.tmp", "r.csv.0123.partial"}
	for _, d := range decoys {
		writeFile(t, filepath.Join(dir, d), "keep")
	}
	if err := os.Mkdir(filepath.Join(dir, ".x.0123456789abcdef.tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	c := dial(t, sftpdOptions(s))

	removed, err := c.Sweep(ctx, dir, time.Now().Add(time.Hour))
	if len(removed) != 0 || err == nil || !strings.Contains(err.Error(), "permission denied") || !strings.Contains(err.Error(), left[0]) || !strings.Contains(err.Error(), left[1]) {
		t.Fatalf("sweep with deletes refused = %v, %v", removed, err)
	}
	s.SetHooks(sftpd.Hooks{})
	if removed, err := c.Sweep(ctx, dir, time.Now().Add(-time.Hour)); len(removed) != 0 || err != nil {
		t.Fatalf("sweep removed recent files: %v, %v", removed, err)
	}
	removed, err = c.Sweep(ctx, dir, time.Now().Add(time.Hour))
	if err != nil || len(removed) != 2 {
		t.Fatalf("sweep = %v, %v", removed, err)
	}
	for _, p := range removed {
		if !slices.Contains(left, path.Base(p)) {
			t.Fatalf("swept %s", p)
		}
	}
	want := append(slices.Clone(decoys), ".x.0123456789abcdef.tmp")
	slices.Sort(want)
	if got := names(t, dir); !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
	if removed, err := c.Sweep(ctx, filepath.Join(s.Root, "missing"), time.Now()); removed != nil || err != nil {
		t.Fatalf("sweep of a missing folder = %v, %v", removed, err)
	}
}

// The servers of the partners: one that refuses dotfiles needs suffix
// mode, one that refuses renames needs none mode; the error says so, and
// nothing is left behind.
func TestUploadModesSuitRestrictiveServers(t *testing.T) {
	s, _ := startSFTPD(t)
	dir := filepath.Join(s.Root, "outbox")
	ctx := ctxT(t)
	for _, tc := range []struct {
		server string
		hooks  sftpd.Hooks
		fails  string // the mode it refuses
		hint   string
		works  []string
	}{
		{"no dotfiles", sftpd.Hooks{Create: func(p string) error {
			if strings.HasPrefix(path.Base(p), ".") {
				return errors.New("names starting with a dot are not allowed")
			}
			return nil
		}}, remote.TempDot, "sftp.temp_upload: suffix", []string{remote.TempSuffix, remote.TempNone}},
		{"no renames", sftpd.Hooks{Rename: func(string, string) error { return errors.New("renames are not allowed") }},
			remote.TempDot, "sftp.temp_upload: none", []string{remote.TempNone}},
	} {
		t.Run(tc.server, func(t *testing.T) {
			s.SetHooks(tc.hooks)
			if err := os.RemoveAll(dir); err != nil || os.Mkdir(dir, 0o700) != nil {
				t.Fatal(err)
			}
			c := dial(t, withMode(sftpdOptions(s), tc.fails))
			err := c.Upload(ctx, dir, "r.csv", strings.NewReader("a,b\n"))
			if err == nil || !strings.Contains(err.Error(), tc.hint) {
				t.Fatalf("%s mode: %v, want a hint %q", tc.fails, err, tc.hint)
			}
			if n := names(t, dir); len(n) != 0 {
				t.Fatalf("left %v", n)
			}
			for i, mode := range tc.works {
				c := dial(t, withMode(sftpdOptions(s), mode))
				name := fmt.Sprintf("r%d.csv", i)
				if err := c.Upload(ctx, dir, name, strings.NewReader("a,b\n")); err != nil {
					t.Fatalf("%s mode: %v", mode, err)
				}
				if got := readFile(t, filepath.Join(dir, name)); got != "a,b\n" {
					t.Fatalf("%s mode: %q", mode, got)
				}
			}
		})
	}
}

// With deletes refused, a partial file of none mode stays, without its
// marker; the next upload of the same name replaces it and marks it.
func TestNoneModeRetryReplacesAPartialFile(t *testing.T) {
	s, _ := startSFTPD(t)
	dir := filepath.Join(s.Root, "outbox")
	c := dial(t, withMode(sftpdOptions(s), remote.TempNone))
	s.SetHooks(sftpd.Hooks{
		Write: func(_ string, off int64, n int) error {
			if off+int64(n) > 1000 {
				return errors.New("quota exceeded")
			}
			return nil
		},
		Remove: func(string) error { return errors.New("deletes are not allowed") },
	})
	if err := c.Upload(ctxT(t), dir, "r.csv", strings.NewReader(strings.Repeat("x", 5000))); err == nil {
		t.Fatal("upload succeeded")
	}
	if n := names(t, dir); !slices.Equal(n, []string{"r.csv"}) {
		t.Fatalf("left %v, want the partial r.csv without a marker", n)
	}
	s.SetHooks(sftpd.Hooks{Remove: func(string) error { return errors.New("deletes are not allowed") }})
	if err := c.Upload(ctxT(t), dir, "r.csv", strings.NewReader("whole\n")); err != nil {
		t.Fatal(err)
	}
	if readFile(t, filepath.Join(dir, "r.csv")) != "whole\n" || readFile(t, filepath.Join(dir, "r.csv.done")) != sumLine("whole\n", "r.csv") {
		t.Fatal("the retry did not replace the partial file")
	}
	// A second upload must remove the old marker first: with deletes
	// refused, it fails before touching the file.
	if err := c.Upload(ctxT(t), dir, "r.csv", strings.NewReader("newer\n")); err == nil || !strings.Contains(err.Error(), "old marker") {
		t.Fatalf("upload over an undeletable marker: %v", err)
	}
	if readFile(t, filepath.Join(dir, "r.csv")) != "whole\n" {
		t.Fatal("the marked file was changed")
	}
}

func TestUnknownUploadModeIsRefused(t *testing.T) {
	s, _ := startSFTPD(t)
	if _, err := remote.Dial(ctxT(t), withMode(sftpdOptions(s), "tmp")); err == nil || !strings.Contains(err.Error(), `"tmp"`) {
		t.Fatalf("Dial = %v", err)
	}
}
