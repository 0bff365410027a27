package testsshd

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/batchd/batchd/internal/sftpd/sshkey"
)

// readyTimeout bounds how long sshd may take to accept an SFTP session.
const readyTimeout = 20 * time.Second

var errPortClash = errors.New("port already in use")

// process is one sshd listener started by the harness.
type process struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{} // closed once cmd.Wait returned; err is then set
	err    error
}

// startOn launches sshd listening on port and waits until it serves SFTP.
func (s *Server) startOn(t testing.TB, port int) error {
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cfg := filepath.Join(s.dir, "sshd_config")
	if s.extra == nil {
		extra := s.extraConfig(port)
		s.extra = &extra
	}
	if err := os.WriteFile(cfg, []byte(s.config(port, *s.extra)), 0o600); err != nil {
		return fmt.Errorf("write sshd_config: %w", err)
	}
	if err := sshkey.WriteKnownHosts(s.KnownHosts, addr, s.HostKey); err != nil {
		return err
	}
	p, err := launch(cfg)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.proc = p
	s.procs = append(s.procs, p)
	s.mu.Unlock()
	if err := s.waitReady(p, addr); err != nil {
		s.stop(t)
		return err
	}
	s.Addr = addr
	return nil
}

func launch(cfg string) (*process, error) {
	p := &process{out: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(SSHDPath, "-D", "-e", "-f", cfg)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", SSHDPath, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// extraConfig returns options only some sshd versions understand.
// PerSourcePenalties (OpenSSH 9.8+) would refuse 127.0.0.1 after the tests
// that deliberately abort handshakes; older versions reject the option, so
// it is kept only if "sshd -t" accepts it.
func (s *Server) extraConfig(port int) string {
	const penalties = "PerSourcePenalties no\n"
	probe := filepath.Join(s.dir, "sshd_config.probe")
	if err := os.WriteFile(probe, []byte(s.config(port, penalties)), 0o600); err != nil {
		return ""
	}
	defer os.Remove(probe)
	if exec.Command(SSHDPath, "-t", "-f", probe).Run() != nil {
		return ""
	}
	return penalties
}

// waitReady polls until an SSH login and SFTP session succeed, sshd exits,
// or readyTimeout passes.
func (s *Server) waitReady(p *process, addr string) error {
	deadline := time.Now().Add(readyTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := s.probe(addr)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sshd not ready on %s within %s: %w", addr, readyTimeout, err)
		}
		select {
		case <-p.exited:
			if strings.Contains(p.out.String(), "Address already in use") {
				return fmt.Errorf("sshd on %s: %w", addr, errPortClash)
			}
			return fmt.Errorf("sshd exited before it was ready: %v", p.err)
		case <-tick.C:
		}
	}
}

// probe logs in with the user key, verifying the host key, and opens SFTP.
func (s *Server) probe(addr string) error {
	c, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{
		User:              s.User,
		Auth:              []ssh.AuthMethod{ssh.PublicKeys(s.signer)},
		HostKeyCallback:   ssh.FixedHostKey(s.HostKey),
		HostKeyAlgorithms: []string{s.HostKey.Type()},
		Timeout:           2 * time.Second,
	})
	if err != nil {
		return err
	}
	defer c.Close()
	sc, err := sftp.NewClient(c)
	if err != nil {
		return err
	}
	return sc.Close()
}

func isPortClash(err error) bool { return errors.Is(err, errPortClash) }

// DropConnections kills every session sshd has forked, as a crashed or
// rebooted server would, and leaves the listener accepting new logins.
// Clients see their connection close; it returns once the sessions are gone.
func (s *Server) DropConnections(t testing.TB) {
	t.Helper()
	p := s.current(t)
	pid := p.cmd.Process.Pid
	tree, err := freeze(pid)
	if err == nil {
		err = killAndWait(tree[1:])
	}
	if cerr := syscall.Kill(pid, syscall.SIGCONT); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("testsshd: drop connections: %v", err)
	}
}

// Stop kills sshd and all its sessions, so that the address refuses
// connections until Restart.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if err := s.stop(t); err != nil {
		t.Fatalf("testsshd: stop: %v", err)
	}
}

// Restart stops sshd if it runs and starts it again on the same address with
// the same keys, as an administrator restarting the service would.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop(t)
	port := s.port()
	var err error
	for i := 0; i < 5; i++ {
		if err = s.startOn(t, port); err == nil || !isPortClash(err) {
			break
		}
	}
	if err != nil {
		t.Fatalf("testsshd: restart on %s: %v\nsshd output:\n%s", s.Addr, err, s.output())
	}
}

func (s *Server) port() int {
	_, port, _ := strings.Cut(s.Addr, ":")
	var n int
	fmt.Sscan(port, &n)
	return n
}

func (s *Server) current(t testing.TB) *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		t.Fatalf("testsshd: sshd is not running")
	}
	return s.proc
}

// stop kills the listener and every session, then reaps the listener.
func (s *Server) stop(testing.TB) error {
	s.mu.Lock()
	p := s.proc
	s.proc = nil
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	tree, err := freeze(p.cmd.Process.Pid)
	if kerr := killAndWait(tree); err == nil {
		err = kerr
	}
	select {
	case <-p.exited:
	case <-time.After(readyTimeout):
		return errors.Join(err, errors.New("sshd did not exit after SIGKILL"))
	}
	return err
}

// output is everything every sshd of this Server wrote, for failure logs.
func (s *Server) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for i, p := range s.procs {
		fmt.Fprintf(&b, "--- sshd #%d ---\n%s", i+1, p.out.String())
	}
	return b.String()
}

// syncBuffer collects sshd's output; os/exec copies into it from its own
// goroutine while tests read it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
