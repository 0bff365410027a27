package ingest

import (
	"context"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/retry"
)

// counting counts the SFTP requests a job makes, and its looks at the
// inbox apart.
type counting struct {
	Remote
	inbox string
	mu    sync.Mutex
	looks int // List of the inbox
	calls int // every request, looks included
}

func (c *counting) count(inboxList bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if inboxList {
		c.looks++
	}
}

func (c *counting) totals() (looks, calls int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.looks, c.calls
}

func (c *counting) List(ctx context.Context, dir string) ([]remote.FileInfo, error) {
	c.count(path.Clean(dir) == path.Clean(c.inbox))
	return c.Remote.List(ctx, dir)
}

func (c *counting) Download(ctx context.Context, p, dir string) (string, string, int64, error) {
	c.count(false)
	return c.Remote.Download(ctx, p, dir)
}

func (c *counting) Upload(ctx context.Context, dir, name string, r io.Reader) error {
	c.count(false)
	return c.Remote.Upload(ctx, dir, name, r)
}

func (c *counting) Rename(ctx context.Context, from, to string) error {
	c.count(false)
	return c.Remote.Rename(ctx, from, to)
}

func (c *counting) Touch(ctx context.Context, p string, t time.Time) error {
	c.count(false)
	return c.Remote.Touch(ctx, p, t)
}

func (c *counting) MkdirAll(ctx context.Context, dir string) error {
	c.count(false)
	return c.Remote.MkdirAll(ctx, dir)
}

func (c *counting) Sweep(ctx context.Context, dir string, before time.Time) ([]string, error) {
	c.count(false)
	return c.Remote.Sweep(ctx, dir, before)
}

// grow appends a line to the inbox file name every few milliseconds until
// the test ends: a file that is still arriving for longer than any run.
func (r *rig) grow(name string) {
	r.t.Helper()
	p := filepath.Join(r.opts.Inbox, name)
	r.drop(name, "amount,memo,name,email,bank_routing,bank_account\n")
	stop := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					continue // claimed or moved: keep the test going
				}
				f.WriteString("1.00,more,Ann,ann@example.com,999900001,1111000016\n")
				f.Close()
			}
		}
	}()
	r.t.Cleanup(func() { close(stop); <-stopped })
}

// sleepsOnClock makes j's sleeps real waits that also move the rig's
// clock by as much, and records them.
func (r *rig) sleepsOnClock(j *Job) *[]time.Duration {
	var mu sync.Mutex
	slept := &[]time.Duration{}
	j.sleep = func(ctx context.Context, d time.Duration) error {
		err := retry.Sleep(ctx, d)
		r.clk.add(d)
		mu.Lock()
		*slept = append(*slept, d)
		mu.Unlock()
		return err
	}
	return slept
}

// An inbox holding an empty file, a file that grows for longer than the
// run, and valid files: one run settles the valid files and the empty one
// (to failed/, with a note saying it was empty), reports the growing one
// as still arriving, and ends within max_wait + one look, with a bounded
// count of SFTP requests, whichever server.
func TestStallEmptyAndGrowingFilesEndTheRun(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		const stable, maxWait = time.Second, 2 * time.Second
		r := newRig(t, srv, func(o *Options) { o.StableFor, o.MaxWait = stable, maxWait })
		r.drop("a.csv", rows(1, 0))
		r.drop("b.csv", rows(2, 0))
		r.drop("empty.csv", "")
		r.grow("grow.csv")

		j := New(r.db, r.opts)
		slept := r.sleepsOnClock(j)
		cr := &counting{Remote: r.rem, inbox: r.opts.Inbox}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang fails, not stalls, the suite
		defer cancel()
		start := r.clk.now()
		out, err := j.Run(ctx, cr)
		if err != nil {
			t.Fatalf("run: %v (%s)", err, summary(out))
		}

		got := map[string]string{}
		for _, o := range out {
			got[o.File] = string(o.Outcome)
		}
		want := map[string]string{"a.csv": "accepted", "b.csv": "accepted", "empty.csv": "empty", "grow.csv": "waiting"}
		for f, w := range want {
			if got[f] != w {
				t.Errorf("%s: %q, want %q (%s)", f, got[f], w, summary(out))
			}
		}
		gap, _ := j.pace()
		var total time.Duration
		for _, d := range *slept {
			total += d
			if d < gap {
				t.Errorf("slept %v between looks, under the floor %v", d, gap)
			}
		}
		if total > maxWait || r.clk.now().Sub(start) > maxWait+gap {
			t.Errorf("run slept %v (%v on its clock), want at most max_wait %v + one look", total, r.clk.now().Sub(start), maxWait)
		}
		looks, calls := cr.totals()
		maxLooks := int(maxWait/gap) + 2
		// Before the inbox, a constant few (mkdir, sweeps, claim folder
		// lists); then the looks; then per settled file a claim, a touch, a
		// download, renames, a mkdir, name-choosing lists and an upload.
		maxCalls := 10 + maxLooks + 3*12
		if looks > maxLooks || calls > maxCalls {
			t.Errorf("%d looks at the inbox (max %d), %d requests (max %d)", looks, maxLooks, calls, maxCalls)
		}
		t.Logf("%d looks at the inbox, %d SFTP requests, slept %v", looks, calls, *slept)

		if f := r.files("failed"); !slices.Equal(f, []string{"empty.csv", "empty.csv.error.txt"}) {
			t.Fatalf("failed %v", f)
		}
		mustContain(t, r.read("failed/empty.csv.error.txt"), "empty", "for 1s", "export it again")
		if a := r.files("archive"); !slices.Equal(a, []string{"2026-11-20/a.csv", "2026-11-20/b.csv"}) {
			t.Fatalf("archive %v", a)
		}
		if _, err := os.Stat(filepath.Join(r.opts.Inbox, "grow.csv")); err != nil {
			t.Fatalf("the growing file left the inbox: %v", err)
		}
		for _, o := range out {
			if o.File == "grow.csv" {
				mustContain(t, o.Detail, "still arriving")
			}
		}
	})
}

// A file that never looks stable (the clock runs backward, so no file is
// ever unchanged for stable_for on it) cannot keep a run going: the run
// ends once it has slept max_wait, with the file waiting and a bounded
// number of looks, and its sleeps are real (the default sleep).
func TestNeverStableClockStillEndsTheRun(t *testing.T) {
	srv := servers()["inprocess"](t)
	const stable, maxWait = time.Second, time.Second
	var mu sync.Mutex
	back := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	r := newRig(t, srv, func(o *Options) {
		o.StableFor, o.MaxWait = stable, maxWait
		o.Now = func() time.Time { // an hour earlier at every reading
			mu.Lock()
			defer mu.Unlock()
			back = back.Add(-time.Hour)
			return back
		}
	})
	r.drop("empty.csv", "")
	r.grow("grow.csv")
	cr := &counting{Remote: r.rem, inbox: r.opts.Inbox}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	j := New(r.db, r.opts)
	out, err := j.Run(ctx, cr)
	if err != nil {
		t.Fatal(err)
	}
	if s := summary(out); s != "empty.csv:waiting,grow.csv:waiting" {
		t.Fatalf("outcomes %s", s)
	}
	gap, maxLooks := j.pace()
	if looks, _ := cr.totals(); looks > int(maxWait/gap)+1 || looks > maxLooks {
		t.Fatalf("%d looks at the inbox with a sleep budget of %v and a floor of %v", looks, maxWait, gap)
	}
	mustContain(t, out[0].Detail, "empty so far")
}

// The floor between looks is stable_for/4, never under 250 ms.
func TestStallLookGapHasAFloor(t *testing.T) {
	for _, tc := range []struct{ stable, want time.Duration }{
		{30 * time.Second, 7500 * time.Millisecond}, {2 * time.Second, 500 * time.Millisecond},
		{time.Second, 250 * time.Millisecond}, {10 * time.Millisecond, 250 * time.Millisecond},
	} {
		j := New(nil, Options{StableFor: tc.stable})
		// The default wait is 2×stable_for, but never less than stable_for
		// and one look, or a file first seen in the run could not be read.
		wait := max(2*tc.stable, tc.stable+tc.want)
		if gap, looks := j.pace(); gap != tc.want || looks != int(wait/tc.want)+2 || j.opts.MaxWait != wait {
			t.Errorf("stable_for %v: gap %v, %d looks; want %v", tc.stable, gap, looks, tc.want)
		}
	}
}

// With ingest.done_marker, an empty file is waited for until its marker
// comes, as any other; once the marker is there, it is empty, and fails as
// such, its marker with it.
func TestEmptyFileWithDoneMarker(t *testing.T) {
	r := newRig(t, servers()["inprocess"](t), func(o *Options) { o.DoneMarker = true })
	r.drop("empty.csv", "")
	out, err := r.run(r.rem)
	if err != nil || summary(out) != "empty.csv:waiting" {
		t.Fatalf("without its marker: %s %v", summary(out), err)
	}
	mustContain(t, out[0].Detail, "waiting for empty.csv.done")
	r.drop("empty.csv.done", "")
	out, err = New(r.db, r.opts).Run(context.Background(), r.rem) // a marked file needs no second look
	if err != nil || summary(out) != "empty.csv:empty" {
		t.Fatalf("with its marker: %s %v", summary(out), err)
	}
	if f := r.files("failed"); !slices.Equal(f, []string{"empty.csv", "empty.csv.done", "empty.csv.error.txt"}) {
		t.Fatalf("failed %v", f)
	}
	mustContain(t, r.read("failed/empty.csv.error.txt"), "the file is empty", "when its .done marker was there", "export it again")
	if len(r.batches()) != 0 || len(r.files("inbox")) != 0 {
		t.Fatalf("%d batches, inbox %v", len(r.batches()), r.files("inbox"))
	}
}
