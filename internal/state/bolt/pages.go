package bolt

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// The page walk. bbolt trusts its file: a page pointer that loops back
// up the tree sends its cursor down forever (growing without bound until
// the process runs out of memory), and one past the end of the file makes
// it fault. So before bbolt reads a tree, walkPages reads it from the
// file itself, with every offset checked: each page reachable from the
// root (through branch pages and buckets, inline ones included) must lie
// inside the file, say it is the page it was reached as, be a branch or
// a leaf, hold its elements inside itself, and be reached once only. The
// freelist page is checked by checkFreelist, from preflight, because
// bbolt reads it while it opens the file.

const (
	pageHeader  = 16
	elementSize = 16
	maxDepth    = 64 // bbolt's trees are a handful of levels deep
	flagBranch  = 0x01
	flagLeaf    = 0x02
	flagFree    = 0x10
	leafBucket  = 0x01
)

type pageWalker struct {
	r    io.ReaderAt
	ps   int64
	hwm  uint64
	seen map[uint64]bool
	bufs [][]byte // a buffer per depth: a node's page is in use while its subtree is walked
}

// read reads n pages from page id into the buffer of depth.
func (w *pageWalker) read(id, n uint64, depth int) ([]byte, error) {
	for len(w.bufs) <= depth {
		w.bufs = append(w.bufs, nil)
	}
	size := int64(n) * w.ps
	if int64(cap(w.bufs[depth])) < size {
		w.bufs[depth] = make([]byte, size)
	}
	buf := w.bufs[depth][:size]
	if _, err := w.r.ReadAt(buf, int64(id)*w.ps); err != nil {
		return nil, fmt.Errorf("page %d cannot be read: %w", id, err)
	}
	return buf, nil
}

// walkPages walks the tree of the file at path, as its header m
// describes it, and returns the first fault found.
func walkPages(path string, m metaInfo) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := &pageWalker{r: f, ps: int64(m.pageSize), hwm: m.pgid, seen: map[uint64]bool{}}
	return w.node(m.root, 0, "the root bucket")
}

// node reads page id and walks its elements.
func (w *pageWalker) node(id uint64, depth int, from string) error {
	if depth > maxDepth {
		return fmt.Errorf("the tree is deeper than %d levels below %s: it loops", maxDepth, from)
	}
	if id < 2 || id >= w.hwm {
		return fmt.Errorf("%s points to page %d, outside the file's pages 2..%d", from, id, w.hwm-1)
	}
	// One read for a page without overflow, the common case: its header
	// is checked from the page read.
	buf, err := w.read(id, 1, depth)
	if err != nil {
		return err
	}
	ne := binary.NativeEndian
	if got := ne.Uint64(buf); got != id {
		return fmt.Errorf("page %d (reached from %s) says it is page %d", id, from, got)
	}
	flags := ne.Uint16(buf[8:])
	if flags != flagBranch && flags != flagLeaf {
		return fmt.Errorf("page %d (reached from %s) has the type %#x, neither branch nor leaf", id, from, flags)
	}
	overflow := uint64(ne.Uint32(buf[12:]))
	if id+overflow >= w.hwm {
		return fmt.Errorf("page %d runs %d pages past itself, beyond the file's end", id, overflow)
	}
	for p := id; p <= id+overflow; p++ {
		if w.seen[p] {
			return fmt.Errorf("page %d is reached twice (again from %s): the tree loops or shares a page", p, from)
		}
		w.seen[p] = true
	}
	if overflow > 0 {
		if buf, err = w.read(id, overflow+1, depth); err != nil {
			return err
		}
	}
	return w.elements(buf, fmt.Sprintf("page %d", id), depth)
}

// elements walks the elements of one page (or inline page) in buf.
func (w *pageWalker) elements(buf []byte, where string, depth int) error {
	ne := binary.NativeEndian
	flags, count := ne.Uint16(buf[8:]), int64(ne.Uint16(buf[10:]))
	size := int64(len(buf))
	if pageHeader+count*elementSize > size {
		return fmt.Errorf("%s claims %d elements, more than it can hold", where, count)
	}
	for i := int64(0); i < count; i++ {
		e := pageHeader + i*elementSize
		if flags == flagBranch {
			pos, ksize, child := int64(ne.Uint32(buf[e:])), int64(ne.Uint32(buf[e+4:])), ne.Uint64(buf[e+8:])
			if ksize == 0 || e+pos+ksize > size {
				return fmt.Errorf("%s: element %d's key lies outside the page", where, i)
			}
			if err := w.node(child, depth+1, where); err != nil {
				return err
			}
			continue
		}
		lflags, pos, ksize, vsize := ne.Uint32(buf[e:]), int64(ne.Uint32(buf[e+4:])), int64(ne.Uint32(buf[e+8:])), int64(ne.Uint32(buf[e+12:]))
		k := e + pos
		if ksize == 0 || k+ksize+vsize > size {
			return fmt.Errorf("%s: element %d's key or value lies outside the page", where, i)
		}
		if lflags&leafBucket == 0 {
			continue
		}
		v := buf[k+ksize : k+ksize+vsize]
		if err := w.bucket(v, fmt.Sprintf("%s element %d", where, i), depth); err != nil {
			return err
		}
	}
	return nil
}

// bucket walks the bucket whose header (root page, sequence) is v: its
// root page, or the inline page that follows the header.
func (w *pageWalker) bucket(v []byte, where string, depth int) error {
	if len(v) < 16 {
		return fmt.Errorf("%s is a bucket of %d bytes, too short for its header", where, len(v))
	}
	if root := binary.NativeEndian.Uint64(v); root != 0 {
		return w.node(root, depth+1, where)
	}
	inline := v[16:]
	if len(inline) < pageHeader || binary.NativeEndian.Uint16(inline[8:]) != flagLeaf {
		return fmt.Errorf("%s is an inline bucket whose page is not a leaf", where)
	}
	return w.elements(inline, where+" (inline)", depth+1)
}

// checkFreelist checks the freelist page m names, which bbolt reads (and
// copies, as many ids as it claims) as soon as it opens the file.
func checkFreelist(f io.ReaderAt, m metaInfo, size int64) error {
	if m.freelist == noFreelist {
		return nil
	}
	ps := int64(m.pageSize)
	head := make([]byte, pageHeader+8)
	if _, err := f.ReadAt(head, int64(m.freelist)*ps); err != nil {
		return fmt.Errorf("its freelist page %d cannot be read: %w", m.freelist, err)
	}
	ne := binary.NativeEndian
	if ne.Uint64(head) != m.freelist || ne.Uint16(head[8:]) != flagFree {
		return fmt.Errorf("its freelist page %d is not a freelist page: it is damaged", m.freelist)
	}
	overflow := uint64(ne.Uint32(head[12:]))
	if m.freelist+overflow >= m.pgid {
		return fmt.Errorf("its freelist page %d runs past the file's end: it is damaged", m.freelist)
	}
	idx, count := int64(0), int64(ne.Uint16(head[10:]))
	if count == 0xFFFF {
		idx, count = 1, int64(ne.Uint64(head[pageHeader:]))
	}
	span := int64(overflow+1) * ps
	if count < 0 || pageHeader+(idx+count)*8 > span {
		return fmt.Errorf("its freelist page %d claims %d free pages, more than it can hold: it is damaged", m.freelist, count)
	}
	buf := make([]byte, span)
	if _, err := f.ReadAt(buf, int64(m.freelist)*ps); err != nil {
		return fmt.Errorf("its freelist page %d cannot be read: %w", m.freelist, err)
	}
	for i := idx; i < idx+count; i++ {
		if id := ne.Uint64(buf[pageHeader+i*8:]); id < 2 || id >= m.pgid {
			return fmt.Errorf("its freelist names page %d, outside the file's pages: it is damaged", id)
		}
	}
	return nil
}
