package remote_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/testsshd"
)

// renameServers are the two servers batchd meets: OpenSSH, whose plain
// rename refuses an existing target, and the in-process one, whose rename
// would replace it.
func renameServers(t *testing.T) map[string]func(t *testing.T) (root string, o remote.Options) {
	return map[string]func(t *testing.T) (string, remote.Options){
		"openssh": func(t *testing.T) (string, remote.Options) {
			s := testsshd.Start(t)
			return s.Root, sshdOptions(s)
		},
		"inprocess": func(t *testing.T) (string, remote.Options) {
			s, _ := startSFTPD(t)
			return s.Root, sftpdOptions(s)
		},
	}
}

func TestRenameNeverReplaces(t *testing.T) {
	for name, start := range renameServers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root, o := start(t)
			c := dial(t, o)
			ctx := ctxT(t)
			in, claim := filepath.Join(root, "inbox"), filepath.Join(root, "inbox", ".batchd", "a1")
			writeFile(t, filepath.Join(in, "pay.csv"), "new")
			writeFile(t, filepath.Join(claim, "pay.csv"), "held")

			err := c.Rename(ctx, filepath.Join(in, "pay.csv"), filepath.Join(claim, "pay.csv"))
			if !errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("rename onto an existing file: %v", err)
			}
			if readFile(t, filepath.Join(claim, "pay.csv")) != "held" || readFile(t, filepath.Join(in, "pay.csv")) != "new" {
				t.Fatal("a file was replaced or moved")
			}

			// A missing target folder is not "the source is gone".
			err = c.Rename(ctx, filepath.Join(in, "pay.csv"), filepath.Join(root, "nowhere", "pay.csv"))
			if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist) {
				t.Fatalf("rename into a missing folder: %v", err)
			}

			if err := c.Rename(ctx, filepath.Join(in, "pay.csv"), filepath.Join(claim, "pay-2.csv")); err != nil {
				t.Fatal(err)
			}
			if readFile(t, filepath.Join(claim, "pay-2.csv")) != "new" {
				t.Fatal("content changed")
			}
			err = c.Rename(ctx, filepath.Join(in, "pay.csv"), filepath.Join(claim, "pay-3.csv"))
			if !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("rename of a missing file: %v", err)
			}
			mustContain(t, err.Error(), "sftp rename "+filepath.Join(in, "pay.csv"))
		})
	}
}

// Two clients rename the same file into two folders at the same instant,
// many times: exactly one wins each time, the other is told the source is
// gone, and no copy is left behind.
func TestRenameRaceHasOneWinner(t *testing.T) {
	for name, start := range renameServers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root, o := start(t)
			clients := []*remote.Client{dial(t, o), dial(t, o)}
			ctx := ctxT(t)
			in := filepath.Join(root, "inbox")
			dirs := []string{filepath.Join(in, ".batchd", "aaaaaa"), filepath.Join(in, ".batchd", "bbbbbb")}
			for _, d := range dirs {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			const rounds = 40
			wins := []int{0, 0}
			for i := range rounds {
				f := fmt.Sprintf("f%02d.csv", i)
				writeFile(t, filepath.Join(in, f), f)
				var wg sync.WaitGroup
				start := make(chan struct{})
				errs := make([]error, 2)
				for k := range clients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						errs[k] = clients[k].Rename(ctx, filepath.Join(in, f), filepath.Join(dirs[k], f))
					}()
				}
				close(start)
				wg.Wait()
				won := -1
				for k, err := range errs {
					switch {
					case err == nil:
						if won >= 0 {
							t.Fatalf("%s: both renames succeeded", f)
						}
						won = k
						wins[k]++
					case !errors.Is(err, fs.ErrNotExist):
						t.Fatalf("%s: the loser's error does not say the file is gone: %v", f, err)
					}
				}
				if won < 0 {
					t.Fatalf("%s: nobody won: %v", f, errs)
				}
				if readFile(t, filepath.Join(dirs[won], f)) != f {
					t.Fatalf("%s: content changed", f)
				}
				if _, err := os.Stat(filepath.Join(dirs[1-won], f)); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("%s: the loser's folder holds a copy (%v)", f, err)
				}
				if _, err := os.Stat(filepath.Join(in, f)); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("%s: still in the inbox", f)
				}
			}
			t.Logf("wins %v", wins)
		})
	}
}

func TestTouchSetsModificationTime(t *testing.T) {
	for name, start := range renameServers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root, o := start(t)
			c := dial(t, o)
			p := filepath.Join(root, "inbox", "a.csv")
			writeFile(t, p, "a")
			at := time.Date(2026, 11, 20, 9, 30, 15, 0, time.UTC)
			if err := c.Touch(ctxT(t), p, at); err != nil {
				t.Fatal(err)
			}
			if fi, err := c.Stat(ctxT(t), p); err != nil || !fi.ModTime.Equal(at) {
				t.Fatalf("mtime %v, %v; want %v", fi.ModTime, err, at)
			}
			err := c.Touch(ctxT(t), p+".missing", at)
			if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "sftp touch") {
				t.Fatalf("touch of a missing file: %v", err)
			}
		})
	}
}
