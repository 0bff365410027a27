package delayproxy

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// echo serves one line-echo server on loopback.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// Bytes pass both ways whole and in order; each round trip takes at least
// twice the delay (a lower bound only: how much later is the machine's);
// every exchange is counted one chunk each way; Close ends the
// connections.
func TestProxyDelaysEachWayAndCounts(t *testing.T) {
	const delay = 2 * time.Millisecond
	p, err := Start(echo(t), delay)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	big := strings.Repeat("x", 100<<10)
	for i, msg := range []string{"ping", "pong", big} {
		start := time.Now()
		if _, err := io.WriteString(c, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadString('\n')
		if err != nil || got != msg+"\n" {
			t.Fatalf("exchange %d: %d bytes back, %v", i, len(got), err)
		}
		if rt := time.Since(start); rt < 2*delay {
			t.Errorf("exchange %d took %s, less than twice the delay", i, rt)
		}
	}
	if up, down := p.Chunks(); up < 3 || down < 3 {
		t.Errorf("chunks %d up, %d down, want at least one a way per exchange", up, down)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadByte(); err == nil {
		t.Error("the connection stayed open after Close")
	}
}
