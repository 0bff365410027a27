package state

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
// A snapshot is written under a temporary name, stamped with its time
// (keySnapshotAt, in its own meta bucket), checked (Check: bbolt's
// consistency check and batchd's invariants), fsynced, renamed into
// place, and its directory fsynced. It is never opened as the live
// ledger: Restore installs it.

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

// Backup is a snapshot written and checked.
type Backup struct {
	Path   string
	Ledger string // the ledger it is a snapshot of
	SnapshotInfo
	Report *Report // the check of the written file
}

// adviceDamaged is what to do about a damaged ledger.
const adviceDamaged = "run `batchd check` for a diagnosis and `batchd restore --from SNAPSHOT` to install the last good snapshot"

// errNoServer means no process serves snapshots on the socket.
var errNoServer = errors.New("no batchd process serves snapshots")

// snapServer serves snapshots of one DB on a unix socket.
type snapServer struct {
	ln    *net.UnixListener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// serveSnapshots starts serving d on sock. It returns nil when the socket
// cannot be made (a path too long for a unix socket, a file system
// without sockets): `batchd backup` then says that the ledger is locked
// and not served.
func (d *DB) serveSnapshots(sock string) *snapServer {
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
	s := &snapServer{ln: ln, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.AcceptUnix()
			if err != nil {
				return // closed by stop
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
				d.serveSnapshot(c)
			}()
		}
	}()
	return s
}

// stop closes the socket, cuts off snapshots in progress and waits for
// their goroutines, so that the ledger can be closed.
func (s *snapServer) stop() {
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

func (d *DB) serveSnapshot(c *net.UnixConn) {
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
	err = d.snapshot(func(info SnapshotInfo) (io.Writer, error) {
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

// snapshot copies the ledger as of one read transaction to the writer
// that start returns once it knows the snapshot's size and time.
func (d *DB) snapshot(start func(SnapshotInfo) (io.Writer, error)) error {
	return guarded(func() error {
		return d.bolt.View(func(tx *bolt.Tx) error {
			info := SnapshotInfo{At: d.now().UTC(), TxID: tx.ID(), Size: tx.Size(), Via: "this process"}
			w, err := start(info)
			if err != nil {
				return err
			}
			_, err = tx.WriteTo(w)
			return err
		})
	})
}

// Backup writes a checked snapshot of the open ledger to path.
// A ledger not in a file answers ErrNoFileSnapshot.
func (d *DB) Backup(path string) (*Backup, error) {
	if d.bolt == nil {
		return nil, ErrNoFileSnapshot
	}
	return writeBackup(path, d.path, func(f *os.File) (SnapshotInfo, error) {
		var info SnapshotInfo
		err := d.snapshot(func(i SnapshotInfo) (io.Writer, error) { info = i; return f, nil })
		if err != nil {
			return info, fmt.Errorf("snapshot of %s: %w", d.path, err)
		}
		return info, nil
	})
}

// BackupLedger writes a checked snapshot of the ledger in the state
// directory dir to path, through the process that holds the ledger (its
// socket), or from the file itself when no process holds it.
func BackupLedger(dir, path string) (*Backup, error) {
	ledger := filepath.Join(dir, FileName)
	return writeBackup(path, ledger, func(f *os.File) (SnapshotInfo, error) {
		return snapshotOf(dir, f)
	})
}

// snapshotOf copies the ledger in dir into f: through the socket when a
// process serves it, else from the file under a shared lock. A process
// that takes the ledger between the two tries is asked again.
func snapshotOf(dir string, f *os.File) (SnapshotInfo, error) {
	ledger := filepath.Join(dir, FileName)
	sock := filepath.Join(dir, SocketName)
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
			return info, refusal(ledger, err.Error())
		}
		if mk, ok, _ := readMarker(filepath.Dir(ledger)); ok {
			return info, refusal(ledger, fmt.Sprintf("is missing, but the marker %s says ledger instance %s was made here",
				filepath.Join(filepath.Dir(ledger), MarkerName), mk.Instance))
		}
		return info, fmt.Errorf("%s: %w: there is no ledger to back up", ledger, ErrNoLedger)
	}
	b, err := boltOpen(ledger, bolt.Options{ReadOnly: true, Timeout: 200 * time.Millisecond})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return info, ErrLocked
	}
	if err != nil {
		return info, refusal(ledger, "cannot be opened: "+err.Error())
	}
	defer b.Close()
	err = guarded(func() error {
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

// writeBackup writes the snapshot that copy produces under a temporary
// name beside path, stamps it with its time, checks it, fsyncs it,
// renames it to path and fsyncs the directory. A snapshot that fails its
// check is removed and is an error listing the faults.
func writeBackup(path, ledger string, copy func(*os.File) (SnapshotInfo, error)) (*Backup, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if same(path, ledger) {
		return nil, fmt.Errorf("%s is the ledger itself; write the snapshot elsewhere", path)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*") // 0600
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	info, err := copy(f)
	if err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := verify(tmp); err != nil {
		return nil, fmt.Errorf("the snapshot of %s fails its check, so it was not kept: it %v; the ledger itself is damaged: %s", ledger, err, adviceDamaged)
	}
	if err := stampSnapshot(tmp, info, ledger); err != nil {
		return nil, fmt.Errorf("stamp %s: %w", tmp, err)
	}
	rep, err := CheckFile(tmp)
	if err != nil {
		return nil, fmt.Errorf("check the snapshot: %w", err)
	}
	rep.Path = path
	if !rep.OK() {
		return nil, fmt.Errorf("the snapshot of %s fails its check, so it was not kept; the ledger itself is damaged: %s: %s", ledger, adviceDamaged, rep.Summary())
	}
	if err := syncFile(tmp); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	done = true
	if err := syncDir(dir); err != nil {
		return nil, fmt.Errorf("sync %s: %w", dir, err)
	}
	return &Backup{Path: path, Ledger: ledger, SnapshotInfo: info, Report: rep}, nil
}

// stampSnapshot records in the snapshot's own meta bucket when it was
// taken and of which ledger.
func stampSnapshot(path string, info SnapshotInfo, ledger string) error {
	b, err := boltOpen(path, bolt.Options{Timeout: time.Second})
	if err != nil {
		return err
	}
	at, _ := info.At.UTC().MarshalText()
	err = guarded(func() error {
		return b.Update(func(tx *bolt.Tx) error {
			meta := tx.Bucket(bucketMeta)
			if meta == nil {
				return errors.New("not a batchd ledger: it has no meta bucket")
			}
			if err := meta.Put(keySnapshotAt, at); err != nil {
				return err
			}
			return meta.Put(keySnapshotOf, []byte(ledger))
		})
	})
	return errors.Join(err, b.Close())
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}

// same reports whether a and b name the same file (or the same path).
func same(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// BackupName is the file name of a snapshot taken at t:
// batchd-20260102T053000Z.db. Names sort in time order.
func BackupName(t time.Time) string {
	return "batchd-" + t.UTC().Format("20060102T150405Z") + ".db"
}

// IsBackupName reports whether name is one BackupName makes.
func IsBackupName(name string) bool {
	s, ok := strings.CutPrefix(name, "batchd-")
	if !ok {
		return false
	}
	s, ok = strings.CutSuffix(s, ".db")
	if !ok {
		return false
	}
	_, err := time.Parse("20060102T150405Z", s)
	return err == nil
}
