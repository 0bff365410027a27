package report

import (
	"bytes"
	"compress/flate"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"testing"
)

// TestCRC32Combine: the CRC of two parts combined is the CRC of the whole,
// for lengths from none to past what a uint32 holds.
func TestCRC32Combine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 8, 100, 4096, 100003} {
		a, b := make([]byte, rng.IntN(5000)), make([]byte, n)
		for i := range a {
			a[i] = byte(rng.Uint32())
		}
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		want := crc32.ChecksumIEEE(append(append([]byte{}, a...), b...))
		if got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), int64(len(b))); got != want {
			t.Errorf("len %d+%d: combined %08x, want %08x", len(a), n, got, want)
		}
	}
	// Past 4 GiB: combining a, b (4 GiB) and c (5 bytes) in either order
	// gives the same.
	c1, c2, c3 := uint32(0xdeadbeef), uint32(0x12345678), crc32.ChecksumIEEE([]byte("12345"))
	if crc32Combine(crc32Combine(c1, c2, 1<<32), c3, 5) != crc32Combine(c1, crc32Combine(c2, c3, 5), 1<<32+5) {
		t.Error("combining over more than 4 GiB does not associate")
	}
}

// TestDeflateStreamsConcatenate: streams ended by a sync flush, then one
// ended normally, read back as one stream of the parts in order.
func TestDeflateStreamsConcatenate(t *testing.T) {
	parts := [][]byte{[]byte("<head><sheetData>"), bytes.Repeat([]byte("<row r=\"1\"><c><v>1</v></c></row>"), 5000), {}, []byte("</sheetData></worksheet>")}
	var all, want bytes.Buffer
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	for i, p := range parts {
		z, err := deflated(fw, p, i == len(parts)-1)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(z)
		want.Write(p)
	}
	got, err := io.ReadAll(flate.NewReader(&all))
	if err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("read back %d bytes (%v), want %d", len(got), err, want.Len())
	}
}
