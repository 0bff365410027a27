package ingest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/remote"
)

// claimDir is the rig's own claim folder on the server's disk.
func (r *rig) claimDir() string {
	return filepath.Join(r.opts.Inbox, ".batchd", r.db.Instance())
}

// logs captures a rig's job log.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.buf.Write(p) }
func (l *logs) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.buf.String() }

func withLogs(l *logs) func(*Options) {
	return func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(l, nil)) }
}

// renames records the renames a job makes.
type renames struct {
	Remote
	mu   sync.Mutex
	seen []string
}

func (r *renames) Rename(ctx context.Context, from, to string) error {
	err := r.Remote.Rename(ctx, from, to)
	if err == nil {
		r.mu.Lock()
		r.seen = append(r.seen, from+" -> "+to)
		r.mu.Unlock()
	}
	return err
}

func TestClaimBeforeDownload(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		forEachServer(t, func(t *testing.T, srv server) {
			var l logs
			r := newRigOn(t, backend, srv, func(o *Options) { o.DoneMarker = true; withLogs(&l)(o) })
			r.drop("pay.csv", twoRows)
			r.drop("pay.csv.done", "")
			rec := &renames{Remote: r.rem}
			out, err := New(r.db, r.opts).Run(context.Background(), rec)
			if err != nil {
				t.Fatal(err)
			}
			claim := r.claimDir()
			inbox := r.opts.Inbox
			want := []string{
				inbox + "/pay.csv -> " + claim + "/pay.csv",
				inbox + "/pay.csv.done -> " + claim + "/pay.csv.done",
				claim + "/pay.csv -> " + claim + "/.commit/pay.csv",
				claim + "/pay.csv.done -> " + claim + "/.commit/pay.csv.done",
				claim + "/.commit/pay.csv -> " + r.opts.Archive + "/2026-11-20/pay.csv",
				claim + "/.commit/pay.csv.done -> " + r.opts.Archive + "/2026-11-20/pay.csv.done",
			}
			if strings.Join(rec.seen, "\n") != strings.Join(want, "\n") {
				t.Fatalf("renames:\n%s\nwant:\n%s", strings.Join(rec.seen, "\n"), strings.Join(want, "\n"))
			}
			if len(out) != 1 || out[0].Outcome != "accepted" || out[0].Claim != claim+"/pay.csv" {
				t.Fatalf("outcomes %+v", out)
			}
			archived := r.opts.Archive + "/2026-11-20/pay.csv"
			if wantDetail := strings.Join([]string{inbox + "/pay.csv", claim + "/pay.csv", claim + "/.commit/pay.csv", archived}, " -> "); out[0].Detail != wantDetail {
				t.Fatalf("detail %q\nwant   %q", out[0].Detail, wantDetail)
			}
			if got := r.files("archive"); strings.Join(got, ",") != "2026-11-20/pay.csv,2026-11-20/pay.csv.done" {
				t.Fatalf("archive %v", got)
			}
			// The claim folders stay, empty, and are never taken for inbox files.
			if fi, err := os.Stat(filepath.Join(claim, ".commit")); err != nil || !fi.IsDir() {
				t.Fatalf("claim folder: %v", err)
			}
			if got := r.files("inbox"); len(got) != 0 {
				t.Fatalf("inbox %v", got)
			}
			if out, err := New(r.db, r.opts).Run(context.Background(), r.rem); err != nil || len(out) != 0 {
				t.Fatalf("second run: %+v %v", out, err)
			}
			mustContain(t, l.String(), "msg=claimed", "to="+claim+"/pay.csv", "instance="+r.db.Instance(),
				"msg=committing", "msg=\"file accepted\"", "moved_to="+archived)
		})
	})
}

// The claim folder is created where sftp.claim says, one folder per
// instance, and a configured folder outside the inbox works the same.
func TestClaimFolderFromOptions(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		forEachServer(t, func(t *testing.T, srv server) {
			root := filepath.Join(srv.root, "claims")
			r := newRigOn(t, backend, srv, func(o *Options) { o.Claim = root; o.Instance = "host-a" })
			r.drop("pay.csv", twoRows)
			out, err := r.run(r.rem)
			if err != nil || len(out) != 1 || out[0].Outcome != "accepted" || out[0].Claim != root+"/host-a/pay.csv" {
				t.Fatalf("outcomes %+v, %v", out, err)
			}
			if fi, err := os.Stat(filepath.Join(root, "host-a", ".commit")); err != nil || !fi.IsDir() {
				t.Fatalf("claim folder not created: %v", err)
			}
			if _, err := os.Stat(filepath.Join(srv.root, "inbox", ".batchd")); err == nil {
				t.Fatal("the default claim folder was created too")
			}
			r.opts.Claim = r.opts.Inbox
			if _, err := New(r.db, r.opts).Run(context.Background(), r.rem); err == nil || !strings.Contains(err.Error(), "must not be the inbox") {
				t.Fatalf("claim folder = inbox: %v", err)
			}
		})
	})
}

// A run stopped after claiming leaves files in its claim folder, before
// and past the fence; the next run finishes them before the inbox.
func TestResumeOwnClaimsAfterCrash(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		forEachServer(t, func(t *testing.T, srv server) {
			var l logs
			r := newRigOn(t, backend, srv, withLogs(&l))
			r.drop("a.csv", twoRows)
			if _, err := r.run(crashAt{r.rem, "download", r.opts.Archive}); err == nil {
				t.Fatal("crash not reached")
			}
			claim := r.claimDir()
			if _, err := os.Stat(filepath.Join(claim, "a.csv")); err != nil {
				t.Fatalf("a.csv not in the claim folder after the crash: %v (inbox %v)", err, r.files("inbox"))
			}
			// And one that was past the fence when the process died.
			if err := os.WriteFile(filepath.Join(claim, ".commit", "b.csv"), []byte(strings.Replace(twoRows, "12.34", "45.67", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			r.drop("c.csv", strings.Replace(twoRows, "12.34", "89.01", 1))
			r.restart()
			out, err := r.runAll(r.rem)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range out {
				got = append(got, o.File+":"+string(o.Outcome))
			}
			// Past the fence first, then claimed, then the inbox.
			if strings.Join(got, ",") != "b.csv:accepted,a.csv:accepted,c.csv:accepted" {
				t.Fatalf("outcomes %v", got)
			}
			mustContain(t, out[1].Detail, claim+"/a.csv (claimed by an earlier run) -> "+claim+"/.commit/a.csv -> ")
			mustContain(t, out[0].Detail, claim+"/.commit/b.csv (left by an earlier run while committing) -> "+r.opts.Archive)
			if got := r.files("archive"); strings.Join(got, ",") != "2026-11-20/a.csv,2026-11-20/b.csv,2026-11-20/c.csv" {
				t.Fatalf("archive %v", got)
			}
			if len(r.batches()) != 3 || r.pendingRows() != 6 {
				t.Fatalf("%d batches, %d pending rows", len(r.batches()), r.pendingRows())
			}
			mustContain(t, l.String(), "resuming a claim left by an earlier run")
		})
	})
}

// twoRigs is two installations (separate ledgers, so separate instance
// ids) on one inbox.
func twoRigs(t *testing.T, backend string, srv server, tweak func(*Options)) (*rig, *rig) {
	a, b := newRigOn(t, backend, srv, tweak), newRigOn(t, backend, srv, tweak)
	if a.db.Instance() == b.db.Instance() {
		t.Skip("two fresh ledgers drew the same instance id")
	}
	return a, b
}

// leaveClaimed has a claim a file and stop, as a killed process would.
func leaveClaimed(t *testing.T, a *rig, name, content string) string {
	t.Helper()
	a.drop(name, content)
	if _, err := a.run(crashAt{a.rem, "download", a.opts.Archive}); err == nil {
		t.Fatal("crash not reached")
	}
	p := filepath.Join(a.claimDir(), name)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatalf("not claimed: %v", err)
	}
	if !fi.ModTime().Equal(a.clk.now()) {
		t.Fatalf("claim time %v, want the claimer's clock %v", fi.ModTime(), a.clk.now())
	}
	return p
}

func TestTakeBackStaleClaim(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		forEachServer(t, func(t *testing.T, srv server) {
			var l logs
			a, b := twoRigs(t, backend, srv, func(o *Options) { o.DoneMarker = true; o.ClaimTimeout = time.Hour; withLogs(&l)(o) })
			a.drop("pay.csv.done", "")
			held := leaveClaimed(t, a, "pay.csv", twoRows)
			if _, err := os.Stat(held + ".done"); err != nil {
				t.Fatalf("the marker did not move with the file: %v", err)
			}
			claimedAt := a.clk.now().Format("2006-01-02 15:04:05 MST")
			b.clk.t = a.clk.now().Add(61 * time.Minute) // a has been silent for an hour
			out, err := New(b.db, b.opts).Run(context.Background(), b.rem)
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != 1 || out[0].Outcome != "accepted" || out[0].Claim != filepath.Join(b.claimDir(), "pay.csv") {
				t.Fatalf("outcomes %+v", out)
			}
			mustContain(t, out[0].Detail, held+" (claim of instance "+a.db.Instance()+", untouched since "+claimedAt+") -> "+b.claimDir()+"/pay.csv")
			if got := b.files("archive"); strings.Join(got, ",") != "2026-11-20/pay.csv,2026-11-20/pay.csv.done" {
				t.Fatalf("archive %v", got)
			}
			if len(b.batches()) != 1 || len(a.batches()) != 0 {
				t.Fatalf("batches: a %d, b %d", len(a.batches()), len(b.batches()))
			}
			mustContain(t, l.String(), "took back a stale claim", "instance="+a.db.Instance())

			// a comes back: its claim is gone, and it says so; nothing is ingested twice.
			a.restart()
			out, err = New(a.db, a.opts).Run(context.Background(), a.rem)
			if err != nil || len(out) != 0 || len(a.batches()) != 0 {
				t.Fatalf("a after its claim was taken: %+v %v, %d batches", out, err, len(a.batches()))
			}
		})
	})
}

func TestFreshClaimOfAnotherInstanceIsNotTaken(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		forEachServer(t, func(t *testing.T, srv server) {
			var l logs
			a, b := twoRigs(t, backend, srv, func(o *Options) { o.ClaimTimeout = time.Hour; withLogs(&l)(o) })
			held := leaveClaimed(t, a, "pay.csv", twoRows)
			// Past a's fence, and very old: maybe committed in a's ledger.
			committing := filepath.Join(a.claimDir(), ".commit", "old.csv")
			if err := os.WriteFile(committing, []byte(strings.Replace(twoRows, "12.34", "45.67", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			long := a.clk.now().Add(-48 * time.Hour)
			if err := os.Chtimes(committing, long, long); err != nil {
				t.Fatal(err)
			}

			b.clk.t = a.clk.now().Add(59 * time.Minute)
			out, err := New(b.db, b.opts).Run(context.Background(), b.rem)
			if err != nil || len(out) != 0 {
				t.Fatalf("b took something: %+v %v", out, err)
			}
			for _, p := range []string{held, committing} {
				if _, err := os.Stat(p); err != nil {
					t.Fatalf("%s: %v", p, err)
				}
			}
			if len(b.batches()) != 0 {
				t.Fatal("b ingested another instance's claim")
			}
			mustContain(t, l.String(), "release it by hand", "at="+committing, "instance="+a.db.Instance())

			// a resumes its own claim, however old.
			a.restart()
			a.clk.add(5 * time.Hour)
			out, err = New(a.db, a.opts).Run(context.Background(), a.rem)
			if err != nil || len(out) != 2 || out[0].File != "old.csv" || out[1].File != "pay.csv" ||
				out[0].Outcome != "accepted" || out[1].Outcome != "accepted" {
				t.Fatalf("a resuming: %+v %v", out, err)
			}
		})
	})
}

// A live instance that was slow (past the claim timeout) loses its file at
// the fence, and commits nothing: the instance that took it back does.
func TestSlowOwnerLosesAtTheFence(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		forEachServer(t, func(t *testing.T, srv server) {
			var l logs
			a, b := twoRigs(t, backend, srv, withLogs(&l))
			a.drop("pay.csv", twoRows)
			ja := New(a.db, a.opts)
			if _, err := ja.Run(context.Background(), a.rem); err != nil { // first sight
				t.Fatal(err)
			}
			a.clk.add(2 * time.Second)
			// a downloads; before it commits, b takes the file back.
			slow := &onDownload{Remote: a.rem, then: func() {
				b.clk.t = a.clk.now().Add(2 * time.Hour)
				out, err := New(b.db, b.opts).Run(context.Background(), b.rem)
				if err != nil || len(out) != 1 || out[0].Outcome != "accepted" {
					t.Errorf("b: %+v %v", out, err)
				}
			}}
			out, err := ja.Run(context.Background(), slow)
			if err != nil || len(out) != 0 {
				t.Fatalf("a: %+v %v", out, err)
			}
			if len(a.batches()) != 0 || len(b.batches()) != 1 || a.pendingRows() != 0 {
				t.Fatalf("batches: a %d (%d rows), b %d", len(a.batches()), a.pendingRows(), len(b.batches()))
			}
			if got := a.files("archive"); len(got) != 1 {
				t.Fatalf("archive %v", got)
			}
			mustContain(t, l.String(), "claim lost")
		})
	})
}

// onDownload runs then once, after the first download.
type onDownload struct {
	Remote
	once sync.Once
	then func()
}

func (d *onDownload) Download(ctx context.Context, p, dir string) (string, string, int64, error) {
	l, s, n, err := d.Remote.Download(ctx, p, dir)
	d.once.Do(d.then)
	return l, s, n, err
}

// gate holds every rename of one source until two jobs have reached it,
// so that both really race for the same file.
type gate struct {
	Remote
	g *meeting
}

type meeting struct {
	t   *testing.T
	dir string // only renames of files in this folder meet
	mu  sync.Mutex
	at  map[string]chan struct{}
	n   map[string]int
}

func (g gate) Rename(ctx context.Context, from, to string) error {
	if path.Dir(from) == g.g.dir && !strings.HasSuffix(from, ".done") {
		g.g.meet(from)
	}
	return g.Remote.Rename(ctx, from, to)
}

func (m *meeting) meet(key string) {
	m.mu.Lock()
	ch, ok := m.at[key]
	if !ok {
		ch = make(chan struct{})
		m.at[key] = ch
	}
	m.n[key]++
	if m.n[key] == 2 {
		close(ch)
	}
	m.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(time.Minute): // a safety net, not a timing assertion
		m.t.Errorf("only one job reached the rename of %s", key)
	}
}

// ledgerFiles returns the names of the files a ledger holds batches of.
func ledgerFiles(r *rig) []string {
	var out []string
	for _, b := range r.batches() {
		out = append(out, b.File)
	}
	sort.Strings(out)
	return out
}

// Two installations run at the same time on one inbox, and each claim is
// raced for: every file is ingested once, by one of them.
func TestClaimRace(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		forEachServer(t, func(t *testing.T, srv server) {
			a, b := twoRigs(t, backend, srv, nil)
			const files = 8
			for i := range files {
				a.drop(fmt.Sprintf("f%02d.csv", i), strings.Replace(twoRows, "12.34", fmt.Sprintf("%d.%02d", 10+i, i), 1))
			}
			ja, jb := New(a.db, a.opts), New(b.db, b.opts)
			for _, j := range []*Job{ja, jb} { // first sight
				if out, err := j.Run(context.Background(), a.rem); err != nil || len(out) != files {
					t.Fatalf("first sight: %+v %v", out, err)
				}
			}
			a.clk.add(2 * time.Second)
			b.clk.add(2 * time.Second)
			m := &meeting{t: t, dir: a.opts.Inbox, at: map[string]chan struct{}{}, n: map[string]int{}}
			outs := make([][]Outcome, 2)
			errs := make([]error, 2)
			var wg sync.WaitGroup
			for k, p := range []struct {
				j   *Job
				rem Remote
			}{{ja, gate{a.rem, m}}, {jb, gate{b.rem, m}}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					outs[k], errs[k] = p.j.Run(context.Background(), p.rem)
				}()
			}
			wg.Wait()
			if errs[0] != nil || errs[1] != nil {
				t.Fatalf("errors %v", errs)
			}
			fa, fb := ledgerFiles(a), ledgerFiles(b)
			t.Logf("a took %v, b took %v", fa, fb)
			all := append(append([]string(nil), fa...), fb...)
			sort.Strings(all)
			var want []string
			for i := range files {
				want = append(want, fmt.Sprintf("f%02d.csv", i))
			}
			if strings.Join(all, ",") != strings.Join(want, ",") {
				t.Fatalf("ledgers hold %v, want each of %v once", all, want)
			}
			if len(outs[0])+len(outs[1]) != files {
				t.Fatalf("outcomes %+v / %+v", outs[0], outs[1])
			}
			var archived []string
			for _, f := range a.files("archive") {
				archived = append(archived, filepath.Base(f))
			}
			if strings.Join(archived, ",") != strings.Join(want, ",") {
				t.Fatalf("archive %v", archived)
			}
			if a.pendingRows()+b.pendingRows() != 2*files {
				t.Fatalf("pending rows %d + %d", a.pendingRows(), b.pendingRows())
			}
		})
	})
}

// Two live instances take back the same stale claims at the same instant:
// each file goes to one of them.
func TestTakeBackRace(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		forEachServer(t, func(t *testing.T, srv server) {
			b, c := twoRigs(t, backend, srv, nil)
			dead := filepath.Join(b.opts.Inbox, ".batchd", "dead01")
			if err := os.MkdirAll(dead, 0o755); err != nil {
				t.Fatal(err)
			}
			claimed := b.clk.now().Add(-2 * time.Hour)
			const files = 6
			for i := range files {
				p := filepath.Join(dead, fmt.Sprintf("f%d.csv", i))
				if err := os.WriteFile(p, []byte(strings.Replace(twoRows, "12.34", fmt.Sprintf("%d.00", 10+i), 1)), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(p, claimed, claimed); err != nil {
					t.Fatal(err)
				}
			}
			c.clk.t = b.clk.now()
			m := &meeting{t: t, dir: dead, at: map[string]chan struct{}{}, n: map[string]int{}}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for k, r := range []*rig{b, c} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[k] = New(r.db, r.opts).Run(context.Background(), gate{r.rem, m})
				}()
			}
			wg.Wait()
			if errs[0] != nil || errs[1] != nil {
				t.Fatalf("errors %v", errs)
			}
			fb, fc := ledgerFiles(b), ledgerFiles(c)
			t.Logf("b took %v, c took %v", fb, fc)
			all := append(append([]string(nil), fb...), fc...)
			sort.Strings(all)
			var want []string
			for i := range files {
				want = append(want, fmt.Sprintf("f%d.csv", i))
			}
			if strings.Join(all, ",") != strings.Join(want, ",") {
				t.Fatalf("ledgers hold %v, want each of %v once", all, want)
			}
			if got := b.files("archive"); len(got) != files {
				t.Fatalf("archive %v", got)
			}
			if left, _ := os.ReadDir(dead); len(left) != 0 {
				t.Fatalf("the dead instance's folder still holds %d entries", len(left))
			}
		})
	})
}

// runAll runs one cycle with a fresh Job after the files have settled, and
// returns what both runs did (not the first sight's "waiting").
func (r *rig) runAll(rem Remote) ([]Outcome, error) {
	j := New(r.db, r.opts)
	first, err := j.Run(context.Background(), rem)
	if err != nil {
		return first, err
	}
	var out []Outcome
	for _, o := range first {
		if o.Outcome != "waiting" {
			out = append(out, o)
		}
	}
	r.clk.add(2 * time.Second)
	second, err := j.Run(context.Background(), rem)
	return append(out, second...), err
}

// changedOnce fails the first download as a file still being written does.
type changedOnce struct {
	Remote
	once sync.Once
}

func (c *changedOnce) Download(ctx context.Context, p, dir string) (string, string, int64, error) {
	changed := false
	c.once.Do(func() { changed = true })
	if changed {
		return "", "", 0, fmt.Errorf("sftp download %s: %w", p, remote.ErrChanged)
	}
	return c.Remote.Download(ctx, p, dir)
}

// A claimed file that turns out to be still changing goes back to the
// inbox, where the stability wait applies again.
func TestChangingFileGoesBackToTheInbox(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		forEachServer(t, func(t *testing.T, srv server) {
			r := newRigOn(t, backend, srv, nil)
			r.drop("pay.csv", twoRows)
			out, err := r.runAll(&changedOnce{Remote: r.rem})
			if err != nil || len(out) != 1 || out[0].Outcome != "waiting" {
				t.Fatalf("outcomes %+v, %v", out, err)
			}
			in := filepath.Join(r.opts.Inbox, "pay.csv")
			mustContain(t, out[0].Detail, in+" -> "+filepath.Join(r.claimDir(), "pay.csv")+" -> "+in+": it changed while it was read")
			if got := r.files("inbox"); strings.Join(got, ",") != "pay.csv" || len(r.batches()) != 0 {
				t.Fatalf("inbox %v, %d batches", got, len(r.batches()))
			}
			out, err = r.runAll(r.rem)
			if err != nil || len(out) != 1 || out[0].Outcome != "accepted" {
				t.Fatalf("once stable: %+v, %v", out, err)
			}
		})
	})
}
