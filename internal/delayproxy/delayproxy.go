// Package delayproxy is a TCP proxy that adds a fixed delay each way, to
// measure batchd against a database a network away (a zone off, a managed
// PostgreSQL) on one machine. Each chunk read from one side is written to
// the other once the delay has passed since it was read, so that the link
// keeps its bandwidth and only its latency grows, as a real one does.
//
// Go's timers wake through the network poller, to about a millisecond
// (measured here: a 200 µs time.Sleep lasts 1.2 ms on average), too
// coarse for a 0.5 ms delay: a chunk is held by the kernel's nanosleep
// (about 0.1 ms late on this machine) until shortly before it is due, and
// by a short spin for the rest. The proxy counts the chunks sent each way,
// which at a database's request-answer pace is the number of round trips.
package delayproxy

import (
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// spin is how long before a chunk is due the proxy stops sleeping and
// spins: about nanosleep's usual lateness.
const spin = 150 * time.Microsecond

// Proxy forwards connections to a target with a delay each way.
type Proxy struct {
	ln     net.Listener
	target string
	delay  time.Duration
	up     atomic.Int64 // chunks sent towards the target
	down   atomic.Int64 // chunks sent back
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

// Start listens on a free loopback port and forwards to target, adding
// delay each way.
func Start(target string, delay time.Duration) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, delay: delay, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the address to connect to instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Chunks returns the chunks sent towards the target and back so far.
func (p *Proxy) Chunks() (up, down int64) { return p.up.Load(), p.down.Load() }

// Close stops listening, closes every connection and waits for them.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		t, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, t) {
			return
		}
		p.wg.Add(2)
		go p.pipe(t, c, &p.up)
		go p.pipe(c, t, &p.down)
	}
}

// track records a connection pair for Close, or closes it when the proxy
// is closed already.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		if p.closed {
			c.Close()
			continue
		}
		p.conns[c] = true
	}
	return !p.closed
}

type chunk struct {
	b   []byte
	due time.Time
}

// pipe copies from src to dst, each chunk delayed, counting chunks in n;
// it closes both when either side ends.
func (p *Proxy) pipe(dst, src net.Conn, n *atomic.Int64) {
	defer p.wg.Done()
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			k, err := src.Read(buf)
			if k > 0 {
				q <- chunk{buf[:k], time.Now().Add(p.delay)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		wait(c.due)
		n.Add(1)
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
	for range q { // let the reader end
	}
}

// wait returns at due, sleeping in the kernel while it is far and
// spinning near it.
func wait(due time.Time) {
	if d := time.Until(due) - spin; d > 0 {
		ts := syscall.NsecToTimespec(int64(d))
		_ = syscall.Nanosleep(&ts, nil) // interrupted: the spin finishes the wait
	}
	for time.Now().Before(due) {
	}
}
