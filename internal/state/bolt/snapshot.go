package bolt

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Snapshots. A snapshot is a consistent copy of the ledger as of one
// read transaction (bbolt's Tx.WriteTo), taken while batchd goes on
// writing. The ledger file is locked (flock) by the one process that has
// it open, and bbolt's read-only open needs a shared lock that the
// writer's exclusive lock forbids, so another process cannot read it.
// Instead, every process that holds the ledger (batchd run, submit,
// ingest, reconcile, status) serves snapshots on a unix socket beside it,
// SocketName in the state directory (mode 0600 in a 0700 directory, and
// only to its own user or root): `batchd backup` asks there first, and
// opens the file read-only itself only when no process serves it.
//
// The protocol is one request line, "SNAPSHOT 1\n", answered by
// "OK <size> <time RFC 3339> <txid> <pid>\n" and exactly size bytes of
// the database file, or by "ERR <message>\n".
//
//
// What makes a snapshot a backup (its stamp, its check of the ledger's
// invariants, its place) is the ledger's (internal/state's snapshot.go).

// SocketName is the snapshot socket in the state directory.
const SocketName = "batchd.sock"

const (
	snapRequest = "SNAPSHOT 1"
	// snapTimeout bounds one snapshot's transfer. The read transaction
	// it holds keeps writers from growing the file meanwhile.
	snapTimeout = 30 * time.Minute
)

// SnapshotInfo describes one snapshot.
type SnapshotInfo struct {
	At   time.Time // when its read transaction began: the ledger as of then
	TxID int       // the last transaction it contains
	Size int64     // bytes
	// Via says where it came from: "this process", "batchd process N"
	// (through the socket) or "the ledger file" (no process held it).
	Via string
}

// errNoServer means no process serves snapshots on the socket.
var errNoServer = errors.New("no batchd process serves snapshots")

// Server serves snapshots of one Store on a unix socket.
type Server struct {
	ln    *net.UnixListener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// Serve starts serving s on sock, with now the clock that dates each snapshot. It returns nil when the socket
// cannot be made (a path too long for a unix socket, a file system
// without sockets): `batchd backup` then says that the ledger is locked
// and not served.
func (st *Store) Serve(sock string, now func() time.Time) *Server {
	if len(sock) >= 108 { // sun_path
		return nil
	}
	// Whoever made a socket file there is gone: this process holds the
	// ledger's lock.
	_ = os.Remove(sock)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return nil
	}
	if err := os.Chmod(sock, 0o600); err != nil {
		ln.Close()
		return nil
	}
	s := &Server{ln: ln, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.AcceptUnix()
			if err != nil {
				return // closed by Stop
			}
			s.mu.Lock()
			if s.conns == nil { // stopping
				s.mu.Unlock()
				c.Close()
				return
			}
			s.conns[c] = struct{}{}
			s.wg.Add(1)
			s.mu.Unlock()
			go func() {
				defer s.wg.Done()
				defer func() {
					s.mu.Lock()
					delete(s.conns, c)
					s.mu.Unlock()
					c.Close()
				}()
				st.serveSnapshot(c, now)
			}()
		}
	}()
	return s
}

// Stop closes the socket, cuts off snapshots in progress and waits for
// their goroutines, so that the ledger can be closed.
func (s *Server) Stop() {
	if s == nil {
		return
	}
	s.ln.Close() // removes the socket file
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.conns = nil
	s.mu.Unlock()
	s.wg.Wait()
}

func (st *Store) serveSnapshot(c *net.UnixConn, now func() time.Time) {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if uid, err := peerUID(c); err != nil || (uid != uint32(os.Geteuid()) && uid != 0) {
		fmt.Fprintf(c, "ERR only the user batchd runs as, or root, may take a snapshot\n")
		return
	}
	line, err := bufio.NewReader(io.LimitReader(c, 64)).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != snapRequest {
		fmt.Fprintf(c, "ERR unknown request\n")
		return
	}
	c.SetDeadline(time.Now().Add(snapTimeout))
	started := false
	err = st.Snapshot(now, func(info SnapshotInfo) (io.Writer, error) {
		started = true
		_, err := fmt.Fprintf(c, "OK %d %s %d %d\n", info.Size, info.At.Format(time.RFC3339Nano), info.TxID, os.Getpid())
		return c, err
	})
	if err != nil && !started {
		fmt.Fprintf(c, "ERR %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
	}
}

func peerUID(c *net.UnixConn) (uint32, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var (
		cred *syscall.Ucred
		cerr error
	)
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, cerr
	}
	return cred.Uid, nil
}

// Snapshot copies the ledger as of one read transaction to the writer
// that start returns once it knows the snapshot's size and time (now).
func (st *Store) Snapshot(now func() time.Time, start func(SnapshotInfo) (io.Writer, error)) error {
	return Guarded(func() error {
		return st.db.View(func(tx *bolt.Tx) error {
			info := SnapshotInfo{At: now().UTC(), TxID: tx.ID(), Size: tx.Size(), Via: "this process"}
			w, err := start(info)
			if err != nil {
				return err
			}
			_, err = tx.WriteTo(w)
			return err
		})
	})
}

// SnapshotOf copies the ledger file into f: through the socket sock when
// a process serves it, else from the file under a shared lock. A process
// that takes the ledger between the two tries is asked again.
func SnapshotOf(ledger, sock string, f *os.File) (SnapshotInfo, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := fetchSnapshot(sock, f)
		if !errors.Is(err, errNoServer) {
			return info, err
		}
		info, err = fileSnapshot(ledger, f)
		if !errors.Is(err, ErrLocked) {
			return info, err
		}
		if time.Now().After(deadline) {
			return info, fmt.Errorf("%s: %w, and that process serves no snapshot on %s (it may be a batchd older than this one): stop it, or upgrade it",
				ledger, ErrLocked, sock)
		}
	}
}

// fetchSnapshot asks the process serving sock for a snapshot.
func fetchSnapshot(sock string, f *os.File) (SnapshotInfo, error) {
	var info SnapshotInfo
	c, err := net.DialTimeout("unix", sock, 2*time.Second)
	if err != nil {
		return info, fmt.Errorf("%w (%v)", errNoServer, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(snapTimeout))
	if _, err := io.WriteString(c, snapRequest+"\n"); err != nil {
		return info, fmt.Errorf("snapshot through %s: %w", sock, err)
	}
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		return info, fmt.Errorf("snapshot through %s: no answer: %w", sock, err)
	}
	line = strings.TrimSpace(line)
	if msg, ok := strings.CutPrefix(line, "ERR "); ok {
		return info, fmt.Errorf("snapshot through %s: the batchd process holding the ledger refused: %s", sock, msg)
	}
	fields := strings.Fields(line)
	if len(fields) != 5 || fields[0] != "OK" {
		return info, fmt.Errorf("snapshot through %s: unexpected answer %q", sock, line)
	}
	size, err1 := strconv.ParseInt(fields[1], 10, 64)
	at, err2 := time.Parse(time.RFC3339Nano, fields[2])
	txid, err3 := strconv.Atoi(fields[3])
	if err := errors.Join(err1, err2, err3); err != nil {
		return info, fmt.Errorf("snapshot through %s: unexpected answer %q: %w", sock, line, err)
	}
	info = SnapshotInfo{At: at.UTC(), TxID: txid, Size: size, Via: "batchd process " + fields[4]}
	n, err := io.CopyN(f, br, size)
	if err != nil {
		return info, fmt.Errorf("snapshot through %s: got %d of %d bytes: %w", sock, n, size, err)
	}
	return info, nil
}

// fileSnapshot copies the ledger file, opened read-only under a shared
// lock, into f. ErrLocked means a process holds it.
func fileSnapshot(ledger string, f *os.File) (SnapshotInfo, error) {
	var info SnapshotInfo
	if _, err := preflight(ledger); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return info, Refusal(ledger, err.Error())
		}
		if mk, ok, _ := ReadMarker(filepath.Dir(ledger)); ok {
			return info, Refusal(ledger, fmt.Sprintf("is missing, but the marker %s says ledger instance %s was made here",
				filepath.Join(filepath.Dir(ledger), MarkerName), mk.Instance))
		}
		return info, fmt.Errorf("%s: %w: there is no ledger to back up", ledger, ErrNoLedger)
	}
	b, err := boltOpen(ledger, bolt.Options{ReadOnly: true, Timeout: 200 * time.Millisecond})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return info, ErrLocked
	}
	if err != nil {
		return info, Refusal(ledger, "cannot be opened: "+err.Error())
	}
	defer b.Close()
	err = Guarded(func() error {
		return b.View(func(tx *bolt.Tx) error {
			info = SnapshotInfo{At: time.Now().UTC(), TxID: tx.ID(), Size: tx.Size(), Via: "the ledger file"}
			_, err := tx.WriteTo(f)
			return err
		})
	})
	if err != nil {
		return info, fmt.Errorf("snapshot of %s: %w", ledger, err)
	}
	return info, nil
}
