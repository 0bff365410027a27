// Package delayproxy is a TCP proxy that adds a fixed delay each way, to
// measure batchd against a database a network away (a zone off, a managed
// PostgreSQL) on one machine. Each chunk read from one side is written to
// the other once the delay has passed since it was read (about: see
// below), so that the link keeps its bandwidth and only its latency grows,
// as a real one does. A benchmark runs it in a process of its own
// (StartProcess, process.go).
//
// Go's timers wake through the network poller, to about a millisecond
// (measured here: a 200 µs time.Sleep lasts 1.2 ms on average), too
// coarse for a 0.5 ms delay, so a chunk is held by the kernel's
// nanosleep. A sleeper wakes late, by how busy the machine is (on two
// busy cores the goroutine then waits for a processor: 0.3 ms and more),
// and an earlier version spun the last 150 µs of each wait, which took
// a core's CPU from what was measured and still ran late. The proxy now
// learns how late its sleeps wake (a moving average) and sleeps that much
// less, so that chunks are held the delay on average, using no CPU while
// they wait; one may go early by at most a quarter of the delay. Held
// tells how long chunks were held in fact, for a benchmark to report the
// delay it measured at. The proxy counts the chunks sent each way, and
// the round trips: the requests a client sent after an answer.
package delayproxy

import (
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Proxy forwards connections to a target with a delay each way.
type Proxy struct {
	ln     net.Listener
	target string
	delay  time.Duration
	up     atomic.Int64 // chunks sent towards the target
	down   atomic.Int64 // chunks sent back
	trips  atomic.Int64 // requests a client waited on (Trips)
	held   atomic.Int64 // nanoseconds chunks were held, both ways
	over   atomic.Int64 // nanoseconds sleeps wake late, of late (wait)
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

// Trips returns the round trips so far: the requests a client waited on,
// each the first chunk it sent after an answer (or on a new
// connection). A request the client writes in several pieces, which the
// proxy may read as several chunks, is one round trip; so is a pipeline
// of requests sent before any answer.
func (p *Proxy) Trips() int64 { return p.trips.Load() }

// Held returns how long the chunks sent so far were held in all, from
// when each was read to when it was written: over Chunks' sum, the delay
// each way in fact (the configured one, and how late the machine let the
// proxy send).
func (p *Proxy) Held() time.Duration { return time.Duration(p.held.Load()) }

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
		// A request is a round trip when the client waits for its
		// answer: it is the first chunk up since the last one down.
		answered := &atomic.Bool{}
		answered.Store(true)
		go p.pipe(t, c, &p.up, func() {
			if answered.Swap(false) {
				p.trips.Add(1)
			}
		})
		go p.pipe(c, t, &p.down, func() { answered.Store(true) })
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
	b    []byte
	read time.Time
}

// pipe copies from src to dst, each chunk delayed, counting chunks in n;
// it closes both when either side ends.
func (p *Proxy) pipe(dst, src net.Conn, n *atomic.Int64, sent func()) {
	defer p.wg.Done()
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			k, err := src.Read(buf)
			if k > 0 {
				q <- chunk{buf[:k], time.Now()}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		p.wait(c.read.Add(p.delay))
		p.held.Add(int64(time.Since(c.read)))
		n.Add(1)
		sent()
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
	for range q { // let the reader end
	}
}

// wait returns at about due: it sleeps until due less over, how late the
// proxy's sleeps have woken of late (a moving average over every pipe,
// which all share the machine), at most a quarter of the delay.
func (p *Proxy) wait(due time.Time) {
	until := due.Add(-time.Duration(p.over.Load()))
	d := time.Until(until)
	if d <= 0 {
		return
	}
	// A signal (a child process ending, the runtime's own) interrupts
	// the sleep; it goes on for what is left, so that no chunk leaves
	// before until.
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
	late := min(max(time.Since(until), 0), p.delay/4)
	// Pipes update it without a lock: a lost update only slows learning.
	over := time.Duration(p.over.Load())
	p.over.Store(int64(over + (late-over)/8))
}
