package report

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
)

// sheetZip is the zip writer excelize saves the workbook through
// (File.SetZipWriter). It writes straight into the report's file, where
// excelize's own would first compress the whole workbook into a
// bytes.Buffer; the buffer excelize passes in stays empty. It deflates at
// the fastest level.
//
// And it puts the rows in. excelize writes the worksheet without rows
// (its view, widths and filter, and an empty <sheetData>); sheetZip keeps
// that part back and stores, as the worksheet's entry, one deflate stream
// made of three: the worksheet's XML up to <sheetData> and from
// </sheetData> on, each compressed now, around the rows compressed while
// the report was filled (sheetRows). Deflate allows it: a stream is a
// sequence of blocks, only the last marked final, and a block refers back
// only to bytes before it, so streams ended by a sync flush (byte-aligned,
// not final) may be followed by any other. The entry's CRC-32 is combined
// from the three parts' (crc32Combine). An entry over 4 GiB is written
// with zip64 sizes by archive/zip.
type sheetZip struct {
	*zip.Writer
	rows    *sheetRows
	csize   int64         // the compressed rows' size
	part    *bytes.Buffer // the worksheet as excelize writes it, until the next part
	name    string
	spliced bool
}

func newSheetZip(out io.Writer, rows *sheetRows, csize int64) *sheetZip {
	zw := zip.NewWriter(out)
	// The parts are written one after another, each compressor closed
	// before the next part: one compressor (about 1 MB), the rows', serves
	// them all.
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		rows.zw.Reset(w)
		return rows.zw, nil
	})
	return &sheetZip{Writer: zw, rows: rows, csize: csize}
}

// Create opens a part of the workbook; the worksheet's is held back for
// the rows.
func (z *sheetZip) Create(name string) (io.Writer, error) {
	if err := z.splice(); err != nil {
		return nil, err
	}
	if strings.HasPrefix(name, "xl/worksheets/") && strings.HasSuffix(name, ".xml") {
		if z.spliced {
			return nil, fmt.Errorf("xlsx: a second worksheet %s", name)
		}
		z.part, z.name = new(bytes.Buffer), name
		return z.part, nil
	}
	return z.Writer.Create(name)
}

// Close writes the worksheet if it is still held back, and the zip's
// directory.
func (z *sheetZip) Close() error {
	if err := z.splice(); err != nil {
		return err
	}
	return z.Writer.Close()
}

// emptySheetData are the forms an empty <sheetData> takes in XML.
var emptySheetData = [][]byte{[]byte("<sheetData></sheetData>"), []byte("<sheetData/>")}

// splice writes the worksheet held back, with the rows in its
// <sheetData>.
func (z *sheetZip) splice() error {
	if z.part == nil {
		return nil
	}
	x := z.part.Bytes()
	z.part = nil
	at, n := -1, 0
	for _, e := range emptySheetData {
		if at = bytes.Index(x, e); at >= 0 {
			n = len(e)
			break
		}
	}
	if at < 0 {
		return fmt.Errorf("xlsx: no empty <sheetData> in the worksheet %s to put the rows in", z.name)
	}
	head := append(x[:at:at], "<sheetData>"...)
	tail := append([]byte("</sheetData>"), x[at+n:]...)
	hz, err := deflated(z.rows.zw, head, false)
	if err != nil {
		return err
	}
	tz, err := deflated(z.rows.zw, tail, true)
	if err != nil {
		return err
	}
	crc := crc32Combine(crc32.ChecksumIEEE(head), z.rows.crc, z.rows.size)
	crc = crc32Combine(crc, crc32.ChecksumIEEE(tail), int64(len(tail)))
	w, err := z.CreateRaw(&zip.FileHeader{Name: z.name, Method: zip.Deflate, CRC32: crc,
		CompressedSize64:   uint64(int64(len(hz)) + z.csize + int64(len(tz))),
		UncompressedSize64: uint64(int64(len(head)) + z.rows.size + int64(len(tail)))})
	if err != nil {
		return err
	}
	if _, err := w.Write(hz); err != nil {
		return err
	}
	if n, err := io.Copy(w, z.rows.tmp); err != nil || n != z.csize {
		return fmt.Errorf("xlsx: copy the compressed rows: %d of %d bytes (%v)", n, z.csize, err)
	}
	if _, err := w.Write(tz); err != nil {
		return err
	}
	z.spliced = true
	return nil
}

// deflated is p compressed by fw: ending the stream when last, else with a
// sync flush, so that more deflate data may follow.
func deflated(fw *flate.Writer, p []byte, last bool) ([]byte, error) {
	var b bytes.Buffer
	fw.Reset(&b)
	if _, err := fw.Write(p); err != nil {
		return nil, err
	}
	end := fw.Flush
	if last {
		end = fw.Close
	}
	if err := end(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// crc32Combine is the CRC-32 (IEEE) of a+b from crc1 of a, crc2 of b and
// the length of b: crc1 advanced over len2 zero bytes, xor crc2. The
// advance multiplies by x^(8·len2) modulo the CRC polynomial, by squaring
// (zlib's crc32_combine), so it costs no pass over the bytes.
func crc32Combine(crc1, crc2 uint32, len2 int64) uint32 {
	return multModP(xPow8n(len2), crc1) ^ crc2
}

// multModP is a(x)·b(x) modulo the polynomial, bit-reflected as
// hash/crc32's IEEE table is.
func multModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		if b&1 != 0 {
			b = b>>1 ^ crc32.IEEE
		} else {
			b >>= 1
		}
	}
	return p
}

// xPow8n is x^(8n) modulo the polynomial.
func xPow8n(n int64) uint32 {
	p := uint32(1) << 31  // x^0
	sq := uint32(1) << 23 // x^8
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			p = multModP(sq, p)
		}
		sq = multModP(sq, sq)
	}
	return p
}
