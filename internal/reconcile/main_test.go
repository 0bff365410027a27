package reconcile

import (
	"bufio"
	"fmt"
	"github.com/batchd/batchd/internal/delayproxy"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/sandbox"
)

// childEnv marks the test binary started as a sandbox server for the
// benchmark, so that the sandbox's memory is not counted as batchd's.
const childEnv = "RECONCILE_TEST_SANDBOX_CHILD"

// TestMain serves the sandbox when started as the benchmark's child, and
// otherwise runs the tests, stopping the shared PostgreSQL server (pgtest)
// after them.
func TestMain(m *testing.M) {
	if delayproxy.ServeChild() {
		return
	}
	if os.Getenv(childEnv) != "" {
		serveSandbox()
		return
	}
	pgtest.Main(m)
}

// serveSandbox serves a sandbox whose clock is frozen at monday() on a
// loopback port, prints its URL, and exits when its standard input closes
// (when the parent ends, whatever the way).
func serveSandbox() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixed := monday()
	go http.Serve(ln, sandbox.New(sandbox.Options{Now: func() time.Time { return fixed }}))
	fmt.Printf("http://%s\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// startSandboxProcess runs the sandbox in a child process and returns its
// URL and process id.
func startSandboxProcess(tb testing.TB) (string, int) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		tb.Fatalf("sandbox process: %v", err)
	}
	return strings.TrimSpace(line), cmd.Process.Pid
}
