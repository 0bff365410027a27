package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"syscall"
)

// The file's header. bbolt trusts its file: it turns a 0-byte file into a
// new empty database and maps a truncated one, faulting on the pages that
// are missing. So before bbolt opens a ledger file, preflight reads the
// header (the two meta pages) itself, and Verify walks the page tree
// (pages.go): a damaged file is refused with a plain description of what
// is wrong, never met with a fault.

// metaInfo is what the file's own header (the bbolt meta pages) says.
type metaInfo struct {
	pageSize int
	pgid     uint64 // high-water mark: pages [0, pgid) must be in the file
	txid     uint64
	root     uint64
	freelist uint64
}

// The layout of a bbolt meta page: a 16-byte page header, then magic,
// version, page size, flags (uint32 each), the root bucket (pgid,
// sequence), the freelist pgid, the high-water pgid, the txid and an
// FNV-64a checksum of everything from magic to txid. bbolt writes it in
// the machine's byte order.
const (
	metaOffset   = 16
	metaSumStart = metaOffset
	metaSumEnd   = metaOffset + 56
	metaLen      = metaOffset + 64
	boltMagic    = 0xED0CDAED
	boltVersion  = 2
	noFreelist   = ^uint64(0)
)

func parseMeta(b []byte) (metaInfo, error) {
	if len(b) < metaLen {
		return metaInfo{}, errors.New("short")
	}
	ne := binary.NativeEndian
	if ne.Uint16(b[8:]) != 0x04 { // page flags: meta
		return metaInfo{}, errors.New("not a meta page")
	}
	if ne.Uint32(b[metaOffset:]) != boltMagic {
		return metaInfo{}, errors.New("bad magic")
	}
	if v := ne.Uint32(b[metaOffset+4:]); v != boltVersion {
		return metaInfo{}, fmt.Errorf("format version %d", v)
	}
	h := fnv.New64a()
	h.Write(b[metaSumStart:metaSumEnd])
	if h.Sum64() != ne.Uint64(b[metaSumEnd:]) {
		return metaInfo{}, errors.New("checksum mismatch")
	}
	m := metaInfo{
		pageSize: int(ne.Uint32(b[metaOffset+8:])),
		root:     ne.Uint64(b[metaOffset+16:]),
		freelist: ne.Uint64(b[metaOffset+32:]),
		pgid:     ne.Uint64(b[metaOffset+40:]),
		txid:     ne.Uint64(b[metaOffset+48:]),
	}
	if m.pageSize < 512 || m.pageSize > 1<<20 || m.pageSize&(m.pageSize-1) != 0 {
		return metaInfo{}, fmt.Errorf("page size %d", m.pageSize)
	}
	return m, nil
}

// preflight reads the file's header before bbolt maps it: bbolt turns a
// 0-byte file into a new empty database, and maps a truncated one and
// faults on the pages that are missing. It returns a plain description
// of what is wrong, or nil.
func preflight(path string) (metaInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return metaInfo{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return metaInfo{}, err
	}
	size := fi.Size()
	if !fi.Mode().IsRegular() {
		return metaInfo{}, errors.New("is not a regular file")
	}
	if size == 0 {
		return metaInfo{}, errors.New("is empty (0 bytes)")
	}
	head := make([]byte, 4096)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return metaInfo{}, fmt.Errorf("cannot be read: %w", err)
	}
	head = head[:n]
	m0, err0 := parseMeta(head)
	ps := 4096
	if err0 == nil {
		ps = m0.pageSize
	}
	second := make([]byte, metaLen)
	var err1 error
	var m1 metaInfo
	if k, rerr := f.ReadAt(second, int64(ps)); rerr != nil && !(errors.Is(rerr, io.EOF) && k == len(second)) {
		err1 = errors.New("missing")
	} else {
		m1, err1 = parseMeta(second)
	}
	var m metaInfo
	switch {
	case err0 == nil && err1 == nil:
		m = m0
		if m1.txid > m0.txid {
			m = m1
		}
	case err0 == nil:
		m = m0
	case err1 == nil:
		m = m1
	default:
		if size < int64(2*ps) {
			return metaInfo{}, fmt.Errorf("is too short to be a ledger (%d bytes) and has no valid header: it was truncated or is not a batchd ledger", size)
		}
		return metaInfo{}, fmt.Errorf("has no valid header (first header: %v; second: %v): it is damaged or not a batchd ledger", err0, err1)
	}
	if m.root >= m.pgid || (m.freelist != noFreelist && m.freelist >= m.pgid) {
		return metaInfo{}, fmt.Errorf("has a header that points past its own end (root page %d, freelist page %d, %d pages): it is damaged", m.root, m.freelist, m.pgid)
	}
	if need := int64(m.pgid) * int64(m.pageSize); size < need {
		return metaInfo{}, fmt.Errorf("is truncated: it holds %d bytes, but its header says the ledger spans %d (%d pages of %d bytes)", size, need, m.pgid, m.pageSize)
	}
	if err := checkFreelist(f, m, size); err != nil {
		return metaInfo{}, fmt.Errorf("is damaged: %w", err)
	}
	return m, nil
}

// Verify checks the header and walks the tree of the file at path, which
// the caller has locked: nothing writes it meanwhile.
func Verify(path string) error {
	m, err := preflight(path)
	if err != nil {
		return err
	}
	if err := walkPages(path, m); err != nil {
		return fmt.Errorf("is damaged: %w", err)
	}
	return nil
}

// lockedByOther reports whether another process holds path's lock for
// writing: what preflight read may then have been mid-write, and the
// answer is "locked", not "damaged".
func lockedByOther(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}
