package reconcile

import (
	"context"
	"fmt"
	"hash/maphash"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
)

// walker pages through the check list of one window, hands every page to
// process, and re-reads until it has proved that it saw the whole list
// (see the package doc for the argument).
type walker struct {
	api       API
	params    payment.CheckQuery // every field but Page
	conc      int
	maxPasses int
	retry     retry.Policy
	log       *slog.Logger
	// process is called once per page read, from several goroutines.
	process func(ctx context.Context, checks []payment.Check) error

	seq atomic.Int64 // orders sends and arrivals of page reads

	// seed hashes check ids for seen.
	seed maphash.Seed

	mu sync.Mutex
	// seen holds the 64-bit hash of each check_id listed: 1,000,000
	// checks cost some 10-20 MB instead of their id strings. Two ids that
	// collide count as one, which can only make the walk look short of
	// the total (a re-read, at worst an "incomplete" exception), never
	// longer, and nothing binds a check to a row by this hash: matching
	// reads the id itself (CheckOwners).
	seen map[uint64]struct{}
	// since holds the hashes listed since the current base, once a total
	// shrank and the base moved on; until then (nil) seen is the base's.
	// Keeping the set of the rare case apart, rather than a pass number
	// beside every hash, halves what the common case holds.
	since     map[uint64]struct{}
	base      int        // first pass of the current base
	baseCount int        // distinct checks listed since base
	reads     []pageRead // page reads of the current base
	pagesRead int
	noTotal   bool // a page with entries came without a total
}

// pageRead is what one page said about the list.
type pageRead struct {
	page, count, total, last int
	sent, arrived            int64 // walker.seq before the request left, and after the answer came
}

// walkResult is the walk's part of the Summary.
type walkResult struct {
	distinct, total, pages, passes int
	consistent                     bool
}

// verdict is the judgement of the reads of the current base.
type verdict struct {
	consistent bool
	shrank     bool // some total fell below one reported strictly earlier
	total      int  // the largest total reported
	tail       int  // the first page that may hold checks not yet seen
	last       int  // the last page the largest total implies
}

func newWalker(api API, params payment.CheckQuery, o Options, log *slog.Logger,
	process func(context.Context, []payment.Check) error) *walker {
	return &walker{api: api, params: params, conc: o.Concurrency, maxPasses: o.MaxPasses,
		retry: o.Retry, log: log, process: process,
		seed: maphash.MakeSeed(), seen: make(map[uint64]struct{}), base: 1}
}

// walk reads the list until a pass is consistent or MaxPasses is reached.
// An error is returned only when a page cannot be read (after retries) or
// process fails; an inconsistent walk is reported in the result.
func (w *walker) walk(ctx context.Context) (walkResult, error) {
	first, last, full := 1, 1, true // pass 1 learns the last page from page 1
	progress := 0
	for pass := 1; ; pass++ {
		if err := w.pass(ctx, pass, first, last); err != nil {
			return w.result(pass, false), err
		}
		v := w.judge()
		w.mu.Lock()
		count, pages, noTotal := w.baseCount, w.pagesRead, w.noTotal
		w.mu.Unlock()
		attrs := []any{"pass", pass, "pages_read", pages, "total", v.total, "distinct", count}
		switch {
		case noTotal:
			w.log.Warn("check list answers carry no total; the walk cannot prove it saw every check", attrs...)
			return w.result(pass, false), nil
		case v.consistent:
			w.log.Info("check list read", append(attrs, "consistent", true)...)
			return w.result(pass, true), nil
		case pass >= w.maxPasses:
			w.log.Warn("check list kept changing while it was read; giving up re-reading", append(attrs, "max_passes", w.maxPasses)...)
			return w.result(pass, false), nil
		case v.shrank:
			w.log.Info("check list shrank while it was read; re-reading every page", attrs...)
			w.mu.Lock()
			w.base, w.baseCount, w.reads, w.since = pass+1, 0, nil, make(map[uint64]struct{})
			w.mu.Unlock()
			first, last, full = 1, max(v.last, 1), true
		case !full && count == progress:
			w.log.Info("re-reading the tail found nothing new; re-reading every page", attrs...)
			first, last, full = 1, max(v.last, 1), true
		default:
			w.log.Info("check list grew while it was read; re-reading from the first short page", append(attrs, "from_page", v.tail)...)
			first, last, full = v.tail, max(v.tail, v.last), false
		}
		progress = count
	}
}

func (w *walker) result(passes int, consistent bool) walkResult {
	w.mu.Lock()
	defer w.mu.Unlock()
	total := 0
	for _, r := range w.reads {
		total = max(total, r.total)
	}
	return walkResult{distinct: len(w.seen), total: total, pages: w.pagesRead, passes: passes, consistent: consistent}
}

// pass reads pages first..last, and goes on past last whenever an answer
// shows more pages. It is a bounded pipeline: up to conc requests are in
// flight, each sent as soon as the client's limiter allows, while up to
// conc pages already fetched are matched and recorded (process) by
// workers of their own, so that the work on one page overlaps the wait
// for the next instead of delaying it. At most 2 x conc pages are held,
// fetched or queued, plus those being processed; the order in which they
// arrive does not matter to the proof (judge).
func (w *walker) pass(ctx context.Context, pass, first, last int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs, pages, done := make(chan int), make(chan fetchedPage, w.conc), make(chan outcome)
	var fetchers, processors sync.WaitGroup
	for range w.conc {
		fetchers.Add(1)
		go func() {
			defer fetchers.Done()
			for p := range jobs {
				f, err := w.fetch(ctx, p)
				done <- outcome{read: f.read, err: err, fetched: err == nil}
				if err == nil {
					pages <- f
				}
			}
		}()
		processors.Add(1)
		go func() {
			defer processors.Done()
			for f := range pages {
				done <- outcome{read: f.read, err: w.record(ctx, f)}
			}
		}()
	}
	err := w.steer(first, last, jobs, done, cancel)
	close(jobs)
	fetchers.Wait()
	close(pages)
	processors.Wait()
	return err
}

// fetchedPage is one page read, waiting to be processed.
type fetchedPage struct {
	read   pageRead
	checks []payment.Check
}

// outcome is what a fetcher or processor reports of one page: fetched
// (an answer came: it may show more pages), or done with (processed, or
// failed either way).
type outcome struct {
	read    pageRead
	err     error
	fetched bool
}

// steer hands out pages first..last to the fetchers, extends the pass to
// the last page any answer shows, and returns when every page handed out
// is done with, with the first error (after which it hands out no more
// and cancels the rest).
func (w *walker) steer(first, last int, jobs chan<- int, done <-chan outcome, cancel func()) error {
	next, high, open := first, last, 0 // open: handed out, not yet done with
	var firstErr error
	for {
		var send chan<- int
		if firstErr == nil && next <= high {
			send = jobs
		}
		if send == nil && open == 0 {
			return firstErr
		}
		select {
		case send <- next:
			next++
			open++
		case o := <-done:
			switch {
			case o.fetched:
				high = max(high, w.lastOf(o.read))
				continue // its processing reports again
			case o.err != nil && firstErr == nil:
				firstErr = o.err
				cancel()
			}
			open--
		}
	}
}

// lastOf is the last page an answer implies: its last_page, or what its
// total implies, or, when it gives neither, the next page after a full one.
func (w *walker) lastOf(r pageRead) int {
	last := max(r.last, ceilDiv(r.total, w.params.Limit))
	if last == 0 && r.count >= w.params.Limit {
		last = r.page + 1
	}
	return last
}

// fetch reads one page (with retries) and notes when it was sent and
// when its answer arrived.
func (w *walker) fetch(ctx context.Context, page int) (fetchedPage, error) {
	p := w.params
	p.Page = page
	var (
		pg   *payment.CheckPage
		sent int64
	)
	err := attempt(ctx, w.retry, fmt.Sprintf("list checks %s..%s page %d", p.FromDate, p.ToDate, page), func() error {
		sent = w.seq.Add(1)
		var err error
		pg, err = w.api.ListChecks(ctx, p)
		return err
	})
	arrived := w.seq.Add(1)
	if err != nil {
		return fetchedPage{}, err
	}
	r := pageRead{page: page, count: len(pg.Checks), total: pg.Total, last: pg.LastPage, sent: sent, arrived: arrived}
	return fetchedPage{read: r, checks: pg.Checks}, nil
}

// note counts hash h among the checks seen, and among those of the
// current base. Called with w.mu held.
func (w *walker) note(h uint64) {
	_, old := w.seen[h]
	if !old {
		w.seen[h] = struct{}{}
	}
	if w.since == nil {
		if !old {
			w.baseCount++
		}
		return
	}
	if _, ok := w.since[h]; !ok {
		w.since[h] = struct{}{}
		w.baseCount++
	}
}

// record processes a fetched page and notes what it said. A page counts
// in the proof only once processed, so a pass that fails never counts a
// check it did not match. A page fetched before the walk was cancelled is
// still handed to process, which records its status changes before it
// looks at ctx: what was read is not thrown away.
func (w *walker) record(ctx context.Context, f fetchedPage) error {
	if err := w.process(ctx, f.checks); err != nil {
		return err
	}
	r := f.read
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range f.checks {
		w.note(maphash.String(w.seed, f.checks[i].ID))
	}
	if r.count > 0 && r.total == 0 {
		w.noTotal = true
	}
	w.reads = append(w.reads, r)
	w.pagesRead++
	return nil
}

// judge weighs the reads of the current base. The walk is consistent when
// no total shrank and the distinct checks seen reach the largest total:
// while checks are only added, every check seen existed at the last read,
// which counted that largest total, so seeing as many means seeing all.
func (w *walker) judge() verdict {
	w.mu.Lock()
	defer w.mu.Unlock()
	reads := slices.Clone(w.reads)
	var v verdict
	maxPage := 0
	v.tail = 0
	for _, r := range reads {
		v.total = max(v.total, r.total)
		maxPage = max(maxPage, r.page)
		if r.count < w.params.Limit && (v.tail == 0 || r.page < v.tail) {
			v.tail = r.page
		}
	}
	if v.tail == 0 {
		v.tail = maxPage + 1
	}
	v.last = ceilDiv(v.total, w.params.Limit)
	v.shrank = shrank(reads)
	v.consistent = !v.shrank && w.baseCount >= v.total
	return v
}

// shrank reports whether some read counted a smaller total than a read
// whose answer had arrived before it was sent. Reads that overlapped in
// time prove nothing about each other and are not compared.
func shrank(reads []pageRead) bool {
	slices.SortFunc(reads, func(a, b pageRead) int { return int(a.arrived - b.arrived) })
	prefix := make([]int, len(reads)) // prefix[i]: largest total among reads[:i+1]
	for i, r := range reads {
		prefix[i] = r.total
		if i > 0 {
			prefix[i] = max(prefix[i], prefix[i-1])
		}
	}
	for _, r := range reads {
		// the reads that arrived before r was sent
		n, _ := slices.BinarySearchFunc(reads, r.sent, func(a pageRead, s int64) int { return int(a.arrived - s) })
		if n > 0 && prefix[n-1] > r.total {
			return true
		}
	}
	return false
}

func ceilDiv(a, b int) int {
	if b <= 0 || a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
