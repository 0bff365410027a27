package testsshd_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/batchd/batchd/internal/testsshd"
)

// dial logs in as a test client would, verifying the host key against
// knownHosts.
func dial(t *testing.T, s *testsshd.Server, knownHosts string) (*ssh.Client, error) {
	return dialAlgos(t, s, knownHosts, []string{ssh.KeyAlgoED25519})
}

func dialAlgos(t *testing.T, s *testsshd.Server, knownHosts string, algos []string) (*ssh.Client, error) {
	t.Helper()
	key, err := os.ReadFile(s.IdentityFile)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := knownhosts.New(knownHosts)
	if err != nil {
		t.Fatal(err)
	}
	return ssh.Dial("tcp", s.Addr, &ssh.ClientConfig{
		User:              s.User,
		Auth:              []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback:   cb,
		HostKeyAlgorithms: algos,
		Timeout:           5 * time.Second,
	})
}

func TestStartServesSFTPInRoot(t *testing.T) {
	s := testsshd.Start(t)
	for _, d := range []string{"inbox", "archive", "failed", "outbox"} {
		if fi, err := os.Stat(s.Path(d)); err != nil || !fi.IsDir() {
			t.Fatalf("%s: %v", d, err)
		}
	}
	if err := os.WriteFile(s.Path("inbox", "a.csv"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := dial(t, s, s.KnownHosts)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	sc, err := sftp.NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	fis, err := sc.ReadDir(s.Root + "/inbox")
	if err != nil || len(fis) != 1 || fis[0].Name() != "a.csv" {
		t.Fatalf("ReadDir = %v, %v", fis, err)
	}
	if !strings.HasPrefix(s.HostKeyFingerprint, "SHA256:") {
		t.Errorf("fingerprint %q", s.HostKeyFingerprint)
	}
}

func TestWrongHostKnownHostsIsRefused(t *testing.T) {
	s := testsshd.Start(t)
	_, err := dial(t, s, s.WrongHostKnownHosts(t))
	var ke *knownhosts.KeyError
	if !errors.As(err, &ke) || len(ke.Want) == 0 {
		t.Fatalf("dial with wrong known_hosts: err = %v, want a key mismatch", err)
	}
}

func TestDropConnectionsKeepsListening(t *testing.T) {
	s := testsshd.Start(t)
	c, err := dial(t, s, s.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	s.DropConnections(t)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("client connection still open after DropConnections")
	}
	c2, err := dial(t, s, s.KnownHosts)
	if err != nil {
		t.Fatalf("dial after drop: %v", err)
	}
	c2.Close()
}

func TestStopAndRestartKeepAddressAndKey(t *testing.T) {
	s := testsshd.Start(t)
	addr := s.Addr
	c, err := dial(t, s, s.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	s.Stop(t)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("session survived Stop")
	}
	if _, err := dial(t, s, s.KnownHosts); err == nil {
		t.Fatal("dial succeeded while stopped")
	}
	s.Restart(t)
	if s.Addr != addr {
		t.Fatalf("address changed: %s -> %s", addr, s.Addr)
	}
	c2, err := dial(t, s, s.KnownHosts)
	if err != nil {
		t.Fatalf("dial after restart: %v", err)
	}
	c2.Close()
}

// A client that lets the server pick its host key gets the unpinned ECDSA
// key, as it would from a stock server with several keys.
func TestServerHasAnUnpinnedHostKeyGoPrefers(t *testing.T) {
	s := testsshd.Start(t)
	_, err := dialAlgos(t, s, s.KnownHosts, nil)
	var ke *knownhosts.KeyError
	if !errors.As(err, &ke) {
		t.Fatalf("dial without HostKeyAlgorithms: err = %v, want a key mismatch", err)
	}
	if s.OtherHostKey.Type() != ssh.KeyAlgoECDSA256 {
		t.Fatalf("other host key is %s", s.OtherHostKey.Type())
	}
}
