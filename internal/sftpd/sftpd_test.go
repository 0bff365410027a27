package sftpd_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/batchd/batchd/internal/sftpd"
	"github.com/batchd/batchd/internal/sftpd/sshkey"
)

func clientConfig(t *testing.T, user, identity, knownHostsFile string) *ssh.ClientConfig {
	t.Helper()
	key, err := os.ReadFile(identity)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := knownhosts.New(knownHostsFile)
	if err != nil {
		t.Fatal(err)
	}
	return &ssh.ClientConfig{
		User:            user,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: cb,
		Timeout:         5 * time.Second,
	}
}

func start(t *testing.T) *sftpd.Server {
	t.Helper()
	s, err := sftpd.Start(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestServesSFTPWithAbsolutePaths(t *testing.T) {
	s := start(t)
	if err := os.WriteFile(filepath.Join(s.Root, "a.csv"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := ssh.Dial("tcp", s.Addr, clientConfig(t, s.User, s.IdentityFile, s.KnownHostsFile))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	sc, err := sftp.NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	f, err := sc.Open(s.Root + "/a.csv")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, _ := f.Read(buf)
	f.Close()
	if string(buf[:n]) != "hello" {
		t.Fatalf("read %q", buf[:n])
	}
	if wd, err := sc.Getwd(); err != nil || wd != s.Root {
		t.Fatalf("Getwd = %q, %v; want Root %q", wd, err, s.Root)
	}
}

func TestRefusesOtherKeysAndUsers(t *testing.T) {
	s := start(t)
	other := filepath.Join(t.TempDir(), "other")
	if _, err := sshkey.Generate(other, "stranger"); err != nil {
		t.Fatal(err)
	}
	cases := map[string]*ssh.ClientConfig{
		"other key":  clientConfig(t, s.User, other, s.KnownHostsFile),
		"other user": clientConfig(t, "root", s.IdentityFile, s.KnownHostsFile),
	}
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := ssh.Dial("tcp", s.Addr, cfg)
			if err == nil {
				c.Close()
				t.Fatal("login succeeded")
			}
		})
	}
}

func TestRefusesShells(t *testing.T) {
	s := start(t)
	c, err := ssh.Dial("tcp", s.Addr, clientConfig(t, s.User, s.IdentityFile, s.KnownHostsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if err := sess.Shell(); err == nil {
		t.Fatal("shell request granted")
	}
}

// waitClosed fails the test unless c's connection ends within a deadline.
func waitClosed(t *testing.T, c *ssh.Client) {
	t.Helper()
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("connection still open")
	}
}

func TestCloseAndCancelEndConnections(t *testing.T) {
	for _, how := range []string{"close", "cancel"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			s, err := sftpd.Start(ctx, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			c, err := ssh.Dial("tcp", s.Addr, clientConfig(t, s.User, s.IdentityFile, s.KnownHostsFile))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if how == "close" {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				cancel()
			}
			waitClosed(t, c)
			if err := s.Close(); how == "close" && err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if c2, err := ssh.Dial("tcp", s.Addr, clientConfig(t, s.User, s.IdentityFile, s.KnownHostsFile)); err == nil {
				c2.Close()
				t.Fatal("server still accepting")
			}
		})
	}
}

func TestDropConnectionsKeepsListening(t *testing.T) {
	s := start(t)
	cfg := clientConfig(t, s.User, s.IdentityFile, s.KnownHostsFile)
	c, err := ssh.Dial("tcp", s.Addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s.DropConnections()
	waitClosed(t, c)
	c2, err := ssh.Dial("tcp", s.Addr, cfg)
	if err != nil {
		t.Fatalf("dial after drop: %v", err)
	}
	c2.Close()
}
