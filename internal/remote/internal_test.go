package remote

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/sftpd"
	"github.com/batchd/batchd/internal/sftpd/sshkey"
	"github.com/batchd/batchd/internal/testsshd"
)

func TestNumbered(t *testing.T) {
	cases := []struct {
		name string
		i    int
		want string
	}{
		{"pay.csv", 0, "pay.csv"},
		{"pay.csv", 1, "pay-1.csv"},
		{"pay.csv", 12, "pay-12.csv"},
		{"pay.2024.csv", 2, "pay.2024-2.csv"},
		{"README", 3, "README-3"},
		{".done", 1, ".done-1"},
		{"a.", 1, "a-1."},
	}
	for _, tc := range cases {
		if got := Numbered(tc.name, tc.i); got != tc.want {
			t.Errorf("Numbered(%q, %d) = %q, want %q", tc.name, tc.i, got, tc.want)
		}
	}
}

// FuzzNumbered checks that every numbered variant of a valid name is a valid
// name too, differs from the original, and differs between numbers.
func FuzzNumbered(f *testing.F) {
	for _, s := range []string{"pay.csv", "README", ".done", "a.b.c", "x-1.csv", "."} {
		f.Add(s, 1)
	}
	f.Fuzz(func(t *testing.T, name string, i int) {
		if checkName(name) != nil || i < 1 {
			return
		}
		a, b := Numbered(name, i), Numbered(name, i+1)
		if checkName(a) != nil || a == name || a == b {
			t.Fatalf("Numbered(%q, %d) = %q, next %q", name, i, a, b)
		}
	})
}

func TestPlainExt(t *testing.T) {
	for in, want := range map[string]string{
		"/in/pay.csv": ".csv", "/in/pay.CSV": ".CSV", "/in/pay": "", "/in/a.tar.gz": ".gz",
		"/in/x.c v": "", "/in/x.verylongextension": "", "/in/x.": "", "/in/.csv": ".csv",
	} {
		if got := plainExt(in); got != want {
			t.Errorf("plainExt(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{
		"pay.csv": true, ".pay.csv": true, "": false, ".": false, "..": false, "a/b": false, "a\x00": false,
	} {
		if err := checkName(name); (err == nil) != ok {
			t.Errorf("checkName(%q) = %v", name, err)
		}
	}
}

// A redial that keeps failing gives up after the policy's attempts, logging
// each failure it retries and reporting the last.
func TestRedialGivesUpAfterMaxAttempts(t *testing.T) {
	s, err := sftpd.Start(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var logs lockedBuffer
	c := dialInternal(t, Options{Address: s.Addr, User: s.User, IdentityFile: s.IdentityFile, KnownHosts: s.KnownHostsFile,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	c.redials = retry.Policy{Base: time.Millisecond, Max: 2 * time.Millisecond, MaxAttempts: 3}
	s.Close()
	_, err = c.redial(t.Context())
	if err == nil || !strings.Contains(err.Error(), "gave up after 3 attempts") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("redial with the server gone = %v", err)
	}
	if n := strings.Count(logs.String(), "sftp reconnect failed"); n != 2 {
		t.Fatalf("%d retried failures logged, want 2:\n%s", n, logs.String())
	}
}

// A permanent failure (here a changed host key) stops the redial at once.
func TestRedialStopsAtPermanentFailure(t *testing.T) {
	s, err := sftpd.Start(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var logs lockedBuffer
	c := dialInternal(t, Options{Address: s.Addr, User: s.User, IdentityFile: s.IdentityFile, KnownHosts: s.KnownHostsFile,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	c.redials = retry.Policy{Base: time.Millisecond, Max: 2 * time.Millisecond, MaxAttempts: 5}
	other, err := sshkey.Generate(filepath.Join(t.TempDir(), "k"), "impostor")
	if err != nil {
		t.Fatal(err)
	}
	if err := sshkey.WriteKnownHosts(s.KnownHostsFile, s.Addr, other.PublicKey()); err != nil {
		t.Fatal(err)
	}
	_, err = c.redial(t.Context())
	var hke *HostKeyError
	if !errors.As(err, &hke) || strings.Contains(err.Error(), "gave up") {
		t.Fatalf("redial = %v, want the host key error itself", err)
	}
	if strings.Contains(logs.String(), "sftp reconnect failed") {
		t.Fatalf("a permanent failure was retried:\n%s", logs.String())
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The algorithms offered are those of the keys pinned for this host only,
// RSA expanded to its SHA-2 signature algorithms.
func TestPinnedAlgorithms(t *testing.T) {
	dir := t.TempDir()
	var keys []ssh.PublicKey
	for _, gen := range []func(string, string) (ssh.Signer, error){sshkey.GenerateECDSA, sshkey.Generate} {
		s, err := gen(filepath.Join(dir, "k"), "")
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, s.PublicKey())
	}
	kh := filepath.Join(dir, "known_hosts")
	if err := sshkey.WriteKnownHosts(kh, "10.0.0.1:2222", keys[0]); err != nil {
		t.Fatal(err)
	}
	// Another host's key must not widen the list; an RSA line is added by
	// hand (generating an RSA key is slow).
	other := "[10.0.0.2]:2222 " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(keys[1]))) + "\n"
	rsa := "[10.0.0.1]:2222 ssh-rsa " + testRSAPub + "\n"
	b, _ := os.ReadFile(kh)
	if err := os.WriteFile(kh, append(b, other+rsa...), 0o600); err != nil {
		t.Fatal(err)
	}
	hk, err := loadHostKeys(kh, "10.0.0.1:2222")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ssh.KeyAlgoECDSA256, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	if !slices.Equal(hk.algorithms, want) {
		t.Fatalf("algorithms = %v, want %v", hk.algorithms, want)
	}
	if hk, _ := loadHostKeys(kh, "10.0.0.3:22"); hk.algorithms != nil {
		t.Fatalf("unknown host: algorithms = %v, want nil (let the server choose, then report it unknown)", hk.algorithms)
	}
}

// testRSAPub is the base64 blob of a 1024-bit RSA public key (never used to
// connect; only its type matters).
const testRSAPub = "AAAAB3NzaC1yc2EAAAADAQABAAAAgQDDHr/ofiGVJdOhNwZWc/YBOT/YyGj59WyFjs3kLWPDqHaHrw9CaMXDtzTn01jfqNN4Fgo2kLqzWnlzchUMBSp6yGrBqmTRLlNUbGcdnFNzIzZCn4T9n/s9Jwv1d1u+cBeG9MJcq8l6BQhKygRXbbxY58fs7Gy5g7FSDSUCITWBsw=="

func dialInternal(t *testing.T, o Options) *Client {
	t.Helper()
	c, err := Dial(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// After a reconnect, Move first finds out whether the lost rename happened.
func TestMoveRetryChecksLostRename(t *testing.T) {
	s, err := sftpd.Start(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := dialInternal(t, Options{Address: s.Addr, User: s.User, IdentityFile: s.IdentityFile, KnownHosts: s.KnownHostsFile})
	from, dir := path.Join(s.Root, "in.csv"), path.Join(s.Root, "archive")
	if err := os.WriteFile(from, []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	// As Move records it: through SFTP, which has whole-second times.
	src, err := c.cur.sftp.Stat(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	retry := &call{cn: c.cur, wd: newWatchdog(time.Hour, func() {}), retried: true}
	defer retry.wd.stop()

	// The rename happened before the answer was lost: report it, move nothing.
	m := &mover{from: from, toDir: dir, name: "in.csv", src: src, pending: path.Join(dir, "in.csv")}
	if err := os.Rename(from, m.pending); err != nil {
		t.Fatal(err)
	}
	if got, err := m.move(retry); err != nil || got != m.pending {
		t.Fatalf("move after a lost, completed rename = %q, %v; want %q", got, err, m.pending)
	}

	// It did not happen: the move is done afresh (and the target is taken).
	if err := os.WriteFile(from, []byte("abcd"), 0o600); err != nil {
		t.Fatal(err)
	}
	if src, err = c.cur.sftp.Stat(from); err != nil {
		t.Fatal(err)
	}
	m = &mover{from: from, toDir: dir, name: "in.csv", src: src, pending: path.Join(dir, "in.csv")}
	if got, err := m.move(retry); err != nil || got != path.Join(dir, "in-1.csv") {
		t.Fatalf("move after a lost, failed rename = %q, %v", got, err)
	}

	// The source vanished and the target is some other file: an error.
	m = &mover{from: from, toDir: dir, name: "in.csv", src: src, pending: path.Join(dir, "in.csv")}
	if _, err := m.move(retry); err == nil || !strings.Contains(err.Error(), "disappeared") {
		t.Fatalf("move of a vanished file: %v", err)
	}
}

// Without posix-rename, Upload still replaces the target, on OpenSSH whose
// plain rename refuses to.
func TestUploadReplacesWithoutPosixRename(t *testing.T) {
	s := testsshd.Start(t)
	c := dialInternal(t, Options{Address: s.Addr, User: s.User, IdentityFile: s.IdentityFile, KnownHosts: s.KnownHosts})
	if !c.cur.posixRename || !c.cur.fsync {
		t.Fatalf("OpenSSH offers posix-rename and fsync; got %v, %v", c.cur.posixRename, c.cur.fsync)
	}
	c.cur.posixRename = false
	target := s.Path("outbox", "r.csv")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.Upload(context.Background(), s.Path("outbox"), "r.csv", strings.NewReader("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Fatalf("target = %q", b)
	}
}
