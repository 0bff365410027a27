package testsshd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// sshd forks a privileged monitor per connection, which forks the session
// process, and each calls setsid: killing sshd or its process group leaves
// sessions serving. So the harness walks the process tree through /proc.

const signalTimeout = 10 * time.Second

// freeze stops root and all its descendants with SIGSTOP, rescanning until
// the tree stops growing (a process caught mid-fork has its child listed
// once it has stopped). It returns the pids, root first.
func freeze(root int) ([]int, error) {
	stopped := map[int]bool{}
	all := []int{}
	for {
		tree, err := tree(root)
		if err != nil {
			return all, err
		}
		var fresh []int
		for _, pid := range tree {
			if !stopped[pid] {
				fresh = append(fresh, pid)
			}
		}
		if len(fresh) == 0 {
			return all, nil
		}
		for _, pid := range fresh {
			stopped[pid] = true
			all = append(all, pid)
			_ = syscall.Kill(pid, syscall.SIGSTOP) // it may have exited; waitState copes
		}
		for _, pid := range fresh {
			if err := waitState(pid, "TtZX"); err != nil {
				return all, err
			}
		}
	}
}

// killAndWait sends SIGKILL to pids and waits until none is running; a
// zombie counts as gone because it no longer holds the connection.
func killAndWait(pids []int) error {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, pid := range pids {
		if err := waitState(pid, "ZX"); err != nil {
			return err
		}
	}
	return nil
}

// waitState polls until pid has exited or is in one of states (the letters
// of /proc/PID/stat's third field).
func waitState(pid int, states string) error {
	deadline := time.Now().Add(signalTimeout)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		st, _, ok := stat(pid)
		if !ok || bytes.IndexByte([]byte(states), st) >= 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d still in state %c after %s", pid, st, signalTimeout)
		}
		<-tick.C
	}
}

// tree lists root and its live descendants, parents before children.
func tree(root int) ([]int, error) {
	children, err := childMap()
	if err != nil {
		return nil, err
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out, nil
}

// childMap maps each parent pid to its children, from /proc/*/stat.
func childMap() (map[int][]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	m := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid, ok := stat(pid); ok {
			m[ppid] = append(m[ppid], pid)
		}
	}
	return m, nil
}

// stat reads a process's state letter and parent pid; ok is false once the
// process is gone. The command name may contain spaces and parentheses, so
// fields are counted from the last ')'.
func stat(pid int) (state byte, ppid int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(string(f[1]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], ppid, true
}
