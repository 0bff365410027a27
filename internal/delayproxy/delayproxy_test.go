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

// proxy is what both kinds of proxy offer (Proxy, Remote).
type proxy interface {
	Addr() string
	Chunks() (up, down int64)
	Trips() int64
	Held() time.Duration
	Close() error
}

// exercise sends each of msgs through p to an echo server and checks
// that it comes back whole; that each round trip takes at least twice
// three quarters of the delay (a chunk may go early by a quarter, as the
// proxy learns how late its sleeps wake; a lower bound only: how much
// later is the machine's); that every exchange is counted, a chunk each
// way at least and one round trip; that the chunks were held three
// quarters of the delay each at least; and that Close ends the
// connections.
func exercise(t *testing.T, p proxy, delay time.Duration, msgs ...string) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	for i, msg := range msgs {
		start := time.Now()
		if _, err := io.WriteString(c, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		if got, err := r.ReadString('\n'); err != nil || got != msg+"\n" {
			t.Fatalf("exchange %d: %d bytes back, %v", i, len(got), err)
		}
		if rt := time.Since(start); rt < 2*delay*3/4 {
			t.Errorf("exchange %d took %s, less than twice three quarters of the delay", i, rt)
		}
	}
	n := int64(len(msgs))
	up, down := p.Chunks()
	if up < n || down < n {
		t.Errorf("chunks %d up, %d down, want at least one a way per exchange", up, down)
	}
	if trips := p.Trips(); trips < n || trips > up {
		t.Errorf("%d round trips counted for %d exchanges in %d chunks up", trips, n, up)
	}
	if held := p.Held(); held < time.Duration(up+down)*delay*3/4 {
		t.Errorf("%d chunks held %s in all, less than three quarters of the delay each", up+down, held)
	}
	if err := p.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadByte(); err == nil {
		t.Error("the connection stayed open after Close")
	}
}

func TestProxyDelaysEachWayAndCounts(t *testing.T) {
	const delay = 2 * time.Millisecond
	p, err := Start(echo(t), delay)
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, p, delay, "ping", "pong", strings.Repeat("x", 100<<10))
}

func TestMain(m *testing.M) {
	if ServeChild() {
		return
	}
	m.Run()
}

// The proxy in a process of its own forwards and delays as the one in
// this process does, and tells its counts; closing it ends its process,
// and it then counts nothing.
func TestProcessDelaysAndCounts(t *testing.T) {
	const delay = 2 * time.Millisecond
	p, err := StartProcess(echo(t), delay)
	if err != nil {
		t.Fatal(err)
	}
	exercise(t, p, delay, "ping", strings.Repeat("y", 100<<10))
	if up, down := p.Chunks(); up != 0 || down != 0 || p.Trips() != 0 {
		t.Errorf("a closed proxy counted %d up, %d down, %d round trips", up, down, p.Trips())
	}
}

// A proxy process started with a spec it cannot read says so.
func TestChildRefusesABadSpec(t *testing.T) {
	for _, spec := range []string{"", "127.0.0.1:1", "127.0.0.1:1 soon"} {
		if err := serveChild(spec, strings.NewReader(""), io.Discard); err == nil || !strings.Contains(err.Error(), childEnv) {
			t.Errorf("spec %q: %v, want an error naming %s", spec, err, childEnv)
		}
	}
}

// A request written in pieces, before any answer, is one round trip.
func TestRequestInPiecesIsOneTrip(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() { // answers each whole line, and nothing before it
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			io.WriteString(c, "ok "+line)
		}
	}()
	p, err := Start(ln.Addr().String(), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	for i := range 3 {
		for _, piece := range []string{"pa", "rt", "s\n"} {
			if _, err := io.WriteString(c, piece); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := r.ReadString('\n'); err != nil || got != "ok parts\n" {
			t.Fatalf("exchange %d: %q, %v", i, got, err)
		}
	}
	if trips := p.Trips(); trips != 3 {
		up, _ := p.Chunks()
		t.Errorf("%d round trips counted for 3 requests (%d chunks up), want 3", trips, up)
	}
}
