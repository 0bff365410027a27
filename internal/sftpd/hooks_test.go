package sftpd_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/batchd/batchd/internal/sftpd"
)

func sftpClient(t *testing.T, s *sftpd.Server) *sftp.Client {
	t.Helper()
	c, err := ssh.Dial("tcp", s.Addr, clientConfig(t, s.User, s.IdentityFile, s.KnownHostsFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sc, err := sftp.NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.Close() })
	return sc
}

// Hooks refuse what they are asked about, with "permission denied", and
// let everything else through untouched.
func TestHooksRefuseRequests(t *testing.T) {
	s := start(t)
	sc := sftpClient(t, s)
	p := func(name string) string { return filepath.Join(s.Root, name) }
	var asked []string
	s.SetHooks(sftpd.Hooks{
		Create: func(path string) error {
			asked = append(asked, "create "+filepath.Base(path))
			if strings.HasPrefix(filepath.Base(path), ".") {
				return errors.New("no dotfiles")
			}
			return nil
		},
		Write: func(path string, off int64, n int) error {
			if filepath.Base(path) == "quota.csv" && off+int64(n) > 10 {
				return errors.New("quota")
			}
			return nil
		},
		Remove: func(path string) error { return errors.New("no deletes") },
		Rename: func(from, to string) error {
			if filepath.Base(to) == "locked.csv" {
				return errors.New("no renames to locked.csv")
			}
			return nil
		},
		Mkdir: func(path string) error {
			if strings.HasPrefix(filepath.Base(path), ".") {
				return errors.New("no dot folders")
			}
			return nil
		},
	})
	if err := sc.Mkdir(p(".commit")); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("create a dot folder: %v", err)
	}
	if err := sc.Mkdir(p("commit")); err != nil {
		t.Fatalf("an allowed folder: %v", err)
	}
	if _, err := sc.Create(p(".hidden")); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("create a dotfile: %v", err)
	}
	f, err := sc.Create(p("quota.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("0123456789")); err != nil {
		t.Fatalf("a write within the quota: %v", err)
	}
	if _, err := f.Write([]byte("x")); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("a write past the quota: %v", err)
	}
	f.Close()
	if b, _ := os.ReadFile(p("quota.csv")); string(b) != "0123456789" {
		t.Fatalf("quota.csv = %q", b)
	}
	if err := sc.Remove(p("quota.csv")); err == nil {
		t.Fatal("a delete went through")
	}
	if err := sc.Rename(p("quota.csv"), p("locked.csv")); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("rename: %v", err)
	}
	if err := sc.PosixRename(p("quota.csv"), p("locked.csv")); !errors.Is(err, os.ErrPermission) {
		t.Fatalf("posix-rename: %v", err)
	}
	if err := sc.Rename(p("quota.csv"), p("moved.csv")); err != nil {
		t.Fatalf("an allowed rename: %v", err)
	}
	if _, err := os.Stat(p("moved.csv")); err != nil {
		t.Fatal(err)
	}
	if strings.Join(asked, ",") != "create .hidden,create quota.csv" {
		t.Fatalf("Create asked about %v", asked)
	}
}

// ErrDropConnection closes the client's connection instead of answering.
func TestHookDropsTheConnection(t *testing.T) {
	s := start(t)
	sc := sftpClient(t, s)
	s.SetHooks(sftpd.Hooks{Write: func(string, int64, int) error { return sftpd.ErrDropConnection }})
	f, err := sc.Create(filepath.Join(s.Root, "r.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("data")); err == nil || errors.Is(err, os.ErrPermission) {
		t.Fatalf("write = %v, want a lost connection", err)
	}
	_ = sc.Wait() // returns once the session has ended
}
