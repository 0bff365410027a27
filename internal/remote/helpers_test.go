package remote_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/testsshd"
)

// testTimeout guards against hangs; no test asserts on elapsed time.
const testTimeout = 30 * time.Second

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func sshdOptions(s *testsshd.Server) remote.Options {
	return remote.Options{
		Address:      s.Addr,
		User:         s.User,
		IdentityFile: s.IdentityFile,
		KnownHosts:   s.KnownHosts,
	}
}

func dial(t *testing.T, o remote.Options) *remote.Client {
	t.Helper()
	c, err := remote.Dial(ctxT(t), o)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// names lists a local directory, dotfiles included.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// eventually polls cond until it holds or the test deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// gateReader yields head, then blocks until release is closed, then yields
// tail. reached is closed when it blocks.
type gateReader struct {
	head, tail []byte
	reached    chan struct{}
	release    chan struct{}
	blocked    bool
	err        error // returned after tail instead of io.EOF, if set
}

func newGateReader(head, tail []byte) *gateReader {
	return &gateReader{head: head, tail: tail, reached: make(chan struct{}), release: make(chan struct{})}
}

func (g *gateReader) Read(p []byte) (int, error) {
	if len(g.head) > 0 {
		n := copy(p, g.head)
		g.head = g.head[n:]
		return n, nil
	}
	if !g.blocked {
		g.blocked = true
		close(g.reached)
		<-g.release
	}
	if len(g.tail) > 0 {
		n := copy(p, g.tail)
		g.tail = g.tail[n:]
		return n, nil
	}
	if g.err != nil {
		return 0, g.err
	}
	return 0, io.EOF
}

// logBuffer collects a Client's log output for assertions.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func mustContain(t *testing.T, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Errorf("%q does not contain %q", s, p)
		}
	}
}
