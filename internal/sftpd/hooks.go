package sftpd

import (
	"encoding/binary"
	"errors"
	"io"
	"path"
	"sync"

	"golang.org/x/crypto/ssh"
)

// Hooks make the server refuse requests the way a partner's server does
// (its permissions, quotas or policies: no deletes, no renames, no
// dotfiles), so that tests can run batchd against those servers. Each hook
// sees absolute paths and returns nil to let the request through, or an
// error to refuse it: the client gets SSH_FX_PERMISSION_DENIED with the
// error's text, and the request never reaches the file system. A hook
// that returns ErrDropConnection closes the client's connection instead,
// as a server crash or a network failure would.
//
// Hooks may be changed at any time (SetHooks); each request sees the hooks
// in force when it arrives.
type Hooks struct {
	// Create is asked before an open that may create or truncate a file.
	Create func(path string) error
	// Write is asked before each write of n bytes at offset into the file
	// at path (as it was opened).
	Write func(path string, offset int64, n int) error
	// Remove is asked before a file (or folder) is removed.
	Remove func(path string) error
	// Rename is asked before a rename, plain or posix-rename@openssh.com.
	Rename func(from, to string) error
	// Mkdir is asked before a folder is created.
	Mkdir func(path string) error
}

// ErrDropConnection, returned by a hook, closes the client's connection
// instead of answering the request.
var ErrDropConnection = errors.New("sftpd: drop the connection")

// SetHooks replaces the server's hooks; the zero Hooks refuses nothing.
func (s *Server) SetHooks(h Hooks) {
	s.mu.Lock()
	s.hooks = h
	s.mu.Unlock()
}

func (s *Server) currentHooks() Hooks {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hooks
}

// SFTP packet types and flags the filter reads (draft-ietf-secsh-filexfer-02).
const (
	fxpOpen     = 3
	fxpClose    = 4
	fxpWrite    = 6
	fxpRemove   = 13
	fxpMkdir    = 14
	fxpRmdir    = 15
	fxpRename   = 18
	fxpStatus   = 101
	fxpHandle   = 102
	fxpExtended = 200

	fxfCreat = 0x08
	fxfTrunc = 0x10

	fxPermissionDenied = 3

	maxPacket = 1 << 20 // far above what clients send (pkg/sftp: 32 KiB of data)
)

// filter sits between the client's channel and pkg/sftp's server, passing
// packets through unchanged unless a hook refuses a request.
type filter struct {
	s    *Server
	ch   ssh.Channel
	drop func()

	reqR *io.PipeReader // what the sftp server reads
	reqW *io.PipeWriter
	resR *io.PipeReader // what the sftp server writes
	resW *io.PipeWriter

	wmu sync.Mutex // writes to ch: the server's answers and the filter's refusals

	mu      sync.Mutex
	opening map[uint32]string // request id of an open -> its path
	handles map[string]string // open handle -> its path
}

// newFilter starts the filter's two pumps. The returned ReadWriteCloser is
// the sftp server's end.
func (s *Server) newFilter(ch ssh.Channel, drop func()) io.ReadWriteCloser {
	f := &filter{s: s, ch: ch, drop: drop, opening: map[uint32]string{}, handles: map[string]string{}}
	f.reqR, f.reqW = io.Pipe()
	f.resR, f.resW = io.Pipe()
	s.wg.Add(2)
	go f.requests()
	go f.responses()
	return serverEnd{f}
}

// serverEnd is the filter as the sftp server sees it.
type serverEnd struct{ f *filter }

func (e serverEnd) Read(p []byte) (int, error)  { return e.f.reqR.Read(p) }
func (e serverEnd) Write(p []byte) (int, error) { return e.f.resW.Write(p) }
func (e serverEnd) Close() error {
	e.f.reqR.Close()
	e.f.resW.Close()
	return nil
}

// requests reads the client's packets and passes them to the server, or
// answers them itself when a hook refuses.
func (f *filter) requests() {
	defer f.s.wg.Done()
	defer f.reqW.Close()
	for {
		pkt, err := readPacket(f.ch)
		if err != nil {
			return
		}
		if refusal := f.check(pkt); refusal != nil {
			if errors.Is(refusal, ErrDropConnection) {
				f.drop()
				return
			}
			if err := f.refuse(pkt, refusal); err != nil {
				return
			}
			continue
		}
		if _, err := f.reqW.Write(pkt); err != nil {
			return
		}
	}
}

// responses passes the server's packets to the client, noting the handle
// each open got.
func (f *filter) responses() {
	defer f.s.wg.Done()
	defer f.resR.Close()
	for {
		pkt, err := readPacket(f.resR)
		if err != nil {
			return
		}
		if len(pkt) > 9 && pkt[4] == fxpHandle {
			id := binary.BigEndian.Uint32(pkt[5:9])
			if h, ok := readString(pkt[9:]); ok {
				f.mu.Lock()
				if p, ok := f.opening[id]; ok {
					delete(f.opening, id)
					f.handles[string(h)] = p
				}
				f.mu.Unlock()
			}
		}
		if err := f.send(pkt); err != nil {
			return
		}
	}
}

func (f *filter) send(pkt []byte) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	_, err := f.ch.Write(pkt)
	return err
}

// check asks the hooks about one request; nil lets it through.
func (f *filter) check(pkt []byte) error {
	if len(pkt) < 9 {
		return nil
	}
	typ, id, body := pkt[4], binary.BigEndian.Uint32(pkt[5:9]), pkt[9:]
	h := f.s.currentHooks()
	switch typ {
	case fxpOpen:
		p, rest, ok := cutString(body)
		if !ok || len(rest) < 4 {
			return nil
		}
		name := f.abs(p)
		if flags := binary.BigEndian.Uint32(rest); flags&(fxfCreat|fxfTrunc) != 0 && h.Create != nil {
			if err := h.Create(name); err != nil {
				return err
			}
		}
		f.mu.Lock()
		f.opening[id] = name
		f.mu.Unlock()
	case fxpWrite:
		handle, rest, ok := cutString(body)
		if !ok || len(rest) < 12 || h.Write == nil {
			return nil
		}
		off := int64(binary.BigEndian.Uint64(rest))
		n := int(binary.BigEndian.Uint32(rest[8:]))
		f.mu.Lock()
		name := f.handles[handle]
		f.mu.Unlock()
		return h.Write(name, off, n)
	case fxpClose:
		if handle, _, ok := cutString(body); ok {
			f.mu.Lock()
			delete(f.handles, handle)
			f.mu.Unlock()
		}
	case fxpRemove, fxpRmdir: // pkg/sftp's client retries a refused remove as rmdir, which its server serves with os.Remove
		if p, _, ok := cutString(body); ok && h.Remove != nil {
			return h.Remove(f.abs(p))
		}
	case fxpMkdir:
		if p, _, ok := cutString(body); ok && h.Mkdir != nil {
			return h.Mkdir(f.abs(p))
		}
	case fxpRename:
		return f.rename(h, body)
	case fxpExtended:
		if ext, rest, ok := cutString(body); ok && ext == "posix-rename@openssh.com" {
			return f.rename(h, rest)
		}
	}
	return nil
}

func (f *filter) rename(h Hooks, body []byte) error {
	from, rest, ok := cutString(body)
	if !ok || h.Rename == nil {
		return nil
	}
	to, _, ok := cutString(rest)
	if !ok {
		return nil
	}
	return h.Rename(f.abs(from), f.abs(to))
}

// refuse answers a request with SSH_FX_PERMISSION_DENIED.
func (f *filter) refuse(req []byte, why error) error {
	msg := why.Error()
	b := make([]byte, 0, 4+1+4+4+4+len(msg)+4)
	b = binary.BigEndian.AppendUint32(b, 0) // length, set below
	b = append(b, fxpStatus)
	b = append(b, req[5:9]...) // the request's id
	b = binary.BigEndian.AppendUint32(b, fxPermissionDenied)
	b = binary.BigEndian.AppendUint32(b, uint32(len(msg)))
	b = append(b, msg...)
	b = binary.BigEndian.AppendUint32(b, 0) // language tag
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return f.send(b)
}

// abs resolves a client's path as the server does: against Root.
func (f *filter) abs(p string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	return path.Join(f.s.Root, p)
}

// readPacket reads one length-prefixed packet, prefix included.
func readPacket(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxPacket {
		return nil, errors.New("sftpd: packet too long")
	}
	pkt := make([]byte, 4+n)
	copy(pkt, hdr[:])
	if _, err := io.ReadFull(r, pkt[4:]); err != nil {
		return nil, err
	}
	return pkt, nil
}

func readString(b []byte) ([]byte, bool) {
	if len(b) < 4 {
		return nil, false
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, false
	}
	return b[4 : 4+n], true
}

// cutString splits an SSH string off the front of b.
func cutString(b []byte) (string, []byte, bool) {
	s, ok := readString(b)
	if !ok {
		return "", nil, false
	}
	return string(s), b[4+len(s):], true
}
