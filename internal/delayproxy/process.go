package delayproxy

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// A proxy in the measured process shares its Go scheduler: each chunk's
// goroutine, woken from its sleep, waits for one of the process's
// processors, behind the work being measured, up to a 10 ms time slice.
// On two cores that made a reconcile page's two round trips at +1 ms take
// 22 ms instead of 6 (docs/benchmarks.md). A real network steals nothing
// from batchd, so a benchmark runs the proxy in a process of its own,
// which the kernel schedules apart: StartProcess runs the test binary
// again as the proxy, whose TestMain hands it to ServeChild.

// childEnv holds "target delay" in the proxy's own process.
const childEnv = "BATCHD_DELAYPROXY"

// ServeChild runs the proxy when this process was started as one by
// StartProcess, and reports whether it was; TestMain calls it first and
// returns when it reports true. The proxy prints its address, answers
// each line on its standard input with its counts ("up down trips
// held"), and
// ends when its standard input closes (when the parent ends, whatever
// the way).
func ServeChild() bool {
	spec, ok := os.LookupEnv(childEnv)
	if !ok {
		return false
	}
	if err := serveChild(spec, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "delay proxy: %v\n", err)
		os.Exit(1)
	}
	return true
}

func serveChild(spec string, in io.Reader, out io.Writer) error {
	target, delayText, ok := strings.Cut(spec, " ")
	delay, err := time.ParseDuration(delayText)
	if !ok || err != nil {
		return fmt.Errorf("%s=%q: want \"host:port delay\"", childEnv, spec)
	}
	p, err := Start(target, delay)
	if err != nil {
		return err
	}
	defer p.Close()
	if _, err := fmt.Fprintln(out, p.Addr()); err != nil {
		return err
	}
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		up, down := p.Chunks()
		if _, err := fmt.Fprintf(out, "%d %d %d %d\n", up, down, p.Trips(), int64(p.Held())); err != nil {
			return err
		}
	}
	return lines.Err()
}

// Remote is a proxy in a process of its own (StartProcess).
type Remote struct {
	addr string
	cmd  *exec.Cmd
	mu   sync.Mutex // one question at a time
	in   io.WriteCloser
	out  *bufio.Reader
}

// StartProcess starts the test binary again as a proxy to target adding
// delay each way; the binary's TestMain must call ServeChild first.
func StartProcess(target string, delay time.Duration) (*Remote, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s", childEnv, target, delay))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the delay proxy: %w", err)
	}
	r := &Remote{cmd: cmd, in: in, out: bufio.NewReader(stdout)}
	line, err := r.out.ReadString('\n')
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("start the delay proxy: no address (does TestMain call delayproxy.ServeChild?): %w", err)
	}
	r.addr = strings.TrimSpace(line)
	return r, nil
}

// Addr is the address to connect to instead of the target.
func (r *Remote) Addr() string { return r.addr }

// Pid is the proxy process's id, for a benchmark to count its CPU time.
func (r *Remote) Pid() int { return r.cmd.Process.Pid }

// Chunks returns the chunks sent towards the target and back so far, as
// Proxy.Chunks; zeros once the process has failed.
func (r *Remote) Chunks() (up, down int64) {
	c := r.counts()
	return c.up, c.down
}

// Trips is Proxy.Trips of the proxy's process.
func (r *Remote) Trips() int64 { return r.counts().trips }

// Held is Proxy.Held of the proxy's process.
func (r *Remote) Held() time.Duration { return time.Duration(r.counts().held) }

type counts struct{ up, down, trips, held int64 }

// counts asks the proxy's process for its counts: zeros once it has
// ended.
func (r *Remote) counts() counts {
	r.mu.Lock()
	defer r.mu.Unlock()
	var c counts
	if _, err := io.WriteString(r.in, "?\n"); err != nil {
		return c
	}
	line, err := r.out.ReadString('\n')
	if err != nil {
		return c
	}
	if _, err := fmt.Sscanf(line, "%d %d %d %d", &c.up, &c.down, &c.trips, &c.held); err != nil {
		return counts{}
	}
	return c
}

// Close ends the proxy's process and waits for it.
func (r *Remote) Close() error {
	r.in.Close()
	return r.cmd.Wait()
}
