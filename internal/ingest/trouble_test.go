package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/remote"
	"github.com/batchd/batchd/internal/sftpd"
)

// cycle runs a fresh Job twice, like run (first sight, then after the
// files have settled), but goes on after the first run's error; it
// returns both runs' outcomes but "waiting", and their errors joined.
func (r *rig) cycle(rem Remote) ([]Outcome, error) {
	j := New(r.db, r.opts)
	first, err1 := j.Run(context.Background(), rem)
	r.clk.add(2 * time.Second)
	second, err2 := j.Run(context.Background(), rem)
	var out []Outcome
	for _, o := range append(first, second...) {
		if o.Outcome != "waiting" {
			out = append(out, o)
		}
	}
	return out, errors.Join(err1, err2)
}

// summary is "file:outcome" per outcome.
func summary(out []Outcome) string {
	var s []string
	for _, o := range out {
		s = append(s, o.File+":"+string(o.Outcome))
	}
	return strings.Join(s, ",")
}

// rows makes a payment file whose content differs by n, with bad invalid
// rows.
func rows(n, bad int) string {
	var b strings.Builder
	b.WriteString("amount,memo,name,email,bank_routing,bank_account\n")
	fmt.Fprintf(&b, "%d.%02d,rent,Ann,ann@example.com,999900001,1111000016\n", 10+n, n%100)
	for range bad {
		b.WriteString("-5,fee,Bob,bob@example.com,999900001,1111000008\n")
	}
	return b.String()
}

func (r *rig) outboxNames() []string {
	var out []string
	for _, b := range r.batches() {
		if b.Status != payment.BatchReady {
			continue
		}
		n, err := payment.OutboxName(r.db, &b)
		if err != nil {
			r.t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// Two files of the same name, the same day or later, each get a name of
// their own, which their reports bear: none replaces another's.
func TestSameNameGetsReportsOfItsOwn(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, func(o *Options) { o.OnInvalid = SkipRows })
		// Day 1: payroll.csv with a bad row, then another the same day.
		for i := range 2 {
			r.drop("payroll.csv", rows(i, 1))
			out, err := r.run(r.rem)
			if err != nil || summary(out) != "payroll.csv:accepted-with-rejects" {
				t.Fatalf("file %d: %+v %v", i, out, err)
			}
		}
		// Day 2: another payroll.csv, clean. Both earlier names have a
		// report in the outbox.
		r.clk.add(24 * time.Hour)
		r.drop("payroll.csv", rows(2, 0))
		out, err := r.run(r.rem)
		if err != nil || summary(out) != "payroll.csv:accepted" {
			t.Fatalf("day 2: %+v %v", out, err)
		}
		if got, want := r.files("archive"), []string{"2026-11-20/payroll-1.csv", "2026-11-20/payroll.csv", "2026-11-21/payroll-2.csv"}; !slices.Equal(got, want) {
			t.Fatalf("archive %v, want %v", got, want)
		}
		if got, want := r.files("outbox"), []string{"payroll-1.csv.rejects.csv", "payroll.csv.rejects.csv"}; !slices.Equal(got, want) {
			t.Fatalf("outbox %v, want %v", got, want)
		}
		mustContain(t, r.read("archive/2026-11-20/payroll-1.csv"), "11.01")
		// The results reports will be named the same way.
		if got, want := r.outboxNames(), []string{"payroll.csv", "payroll-1.csv", "payroll-2.csv"}; !slices.Equal(got, want) {
			t.Fatalf("outbox names %v, want %v", got, want)
		}
		if !strings.Contains(out[0].Detail, "/archive/2026-11-21/payroll-2.csv") {
			t.Fatalf("detail %q", out[0].Detail)
		}
	})
}

// A name is reserved by a batch whose results are still to come, and only
// until they are delivered (then the outbox holds them), or the partner
// has cleared the outbox.
func TestPendingResultsReserveTheirName(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, nil)
		r.drop("pay.csv", rows(0, 0))
		if _, err := r.run(r.rem); err != nil {
			t.Fatal(err)
		}
		r.clk.add(24 * time.Hour)
		r.drop("pay.csv", rows(1, 0))
		if _, err := r.run(r.rem); err != nil {
			t.Fatal(err)
		}
		// Batch 1's results were delivered, and the partner took them.
		if err := r.db.ResultsReported(1); err != nil {
			t.Fatal(err)
		}
		r.clk.add(24 * time.Hour)
		r.drop("pay.csv", rows(2, 0))
		if _, err := r.run(r.rem); err != nil {
			t.Fatal(err)
		}
		if got, want := r.files("archive"), []string{"2026-11-20/pay.csv", "2026-11-21/pay-1.csv", "2026-11-22/pay.csv"}; !slices.Equal(got, want) {
			t.Fatalf("archive %v, want %v", got, want)
		}
	})
}

// Refused files of the same name get their own rejects reports too, named
// after their names in the failed folder.
func TestRefusedFilesOfOneNameKeepTheirReports(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, nil)
		for i := range 2 {
			r.drop("pay.csv", rows(i, 1+i))
			if out, err := r.run(r.rem); err != nil || summary(out) != "pay.csv:rejected" {
				t.Fatalf("file %d: %+v %v", i, out, err)
			}
		}
		if got, want := r.files("failed"), []string{"pay-1.csv", "pay-1.csv.error.txt", "pay.csv", "pay.csv.error.txt"}; !slices.Equal(got, want) {
			t.Fatalf("failed %v, want %v", got, want)
		}
		mustContain(t, r.read("failed/pay-1.csv.error.txt"), "pay-1.csv.rejects.csv")
		if n := strings.Count(r.read("outbox/pay-1.csv.rejects.csv"), `"amount","-5"`); n != 2 {
			t.Fatalf("pay-1.csv.rejects.csv lists %d bad rows, want the second file's 2", n)
		}
		// Fixed, the file is accepted under a name no report bears.
		r.drop("pay.csv", rows(3, 0))
		if out, err := r.run(r.rem); err != nil || summary(out) != "pay.csv:accepted" {
			t.Fatalf("fixed: %+v %v", out, err)
		}
		if got := r.files("archive"); !slices.Equal(got, []string{"2026-11-20/pay-2.csv"}) {
			t.Fatalf("archive %v", got)
		}
	})
}

// One file that cannot be claimed, archived or reported does not hold up
// the others: they are settled in the same run; the run ends in an error
// naming the failed files, which stay where they are and are finished by
// a later run.
func TestOneFilesTroubleStaysWithIt(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		if srv.sftpd == nil {
			t.Skip("refusing one name needs the in-process server's hooks; TestUnmovableFile covers OpenSSH")
		}
		r := newRig(t, srv, func(o *Options) { o.OnInvalid = SkipRows })
		day := filepath.Join(r.opts.Archive, "2026-11-20")
		denied := errors.New("permission denied by policy")
		srv.sftpd.SetHooks(sftpd.Hooks{
			Rename: func(from, to string) error {
				if from == path.Join(r.opts.Inbox, "b.csv") || to == path.Join(day, "c.csv") {
					return denied
				}
				return nil
			},
			Create: func(p string) error {
				if strings.Contains(path.Base(p), "d.csv.rejects.csv") {
					return denied
				}
				return nil
			},
		})
		for i, name := range []string{"a.csv", "b.csv", "c.csv", "d.csv", "e.csv"} {
			bad := 0
			if name == "d.csv" {
				bad = 1
			}
			r.drop(name, rows(i, bad))
		}
		out, err := r.cycle(r.rem)
		if got := summary(out); got != "a.csv:accepted,b.csv:error,c.csv:error,d.csv:error,e.csv:accepted" {
			t.Fatalf("outcomes %s (%v)", got, err)
		}
		var ff *FilesFailed
		if !errors.As(err, &ff) || !slices.Equal(ff.Names(), []string{"b.csv", "c.csv", "d.csv"}) || ff.Handled != 2 {
			t.Fatalf("err = %v", err)
		}
		mustContain(t, err.Error(), "3 of 5 files failed", "b.csv: claim", "c.csv: archive", "d.csv: ")
		if !errors.Is(err, payment.ErrRemote) || errors.Is(err, payment.ErrLedger) {
			t.Fatalf("err is not filed under sftp: %v", err)
		}
		mustContain(t, out[1].Detail, "(left there)")
		mustContain(t, out[2].Detail, "/.commit/c.csv (left there; the next run resumes it)")
		if got := r.files("archive"); !slices.Equal(got, []string{"2026-11-20/a.csv", "2026-11-20/e.csv"}) {
			t.Fatalf("archive %v", got)
		}
		if got := r.files("inbox"); !slices.Equal(got, []string{".batchd/" + r.db.Instance() + "/.commit/c.csv", ".batchd/" + r.db.Instance() + "/.commit/d.csv", "b.csv"}) {
			t.Fatalf("inbox %v", got)
		}
		// c.csv's batch is committed, d.csv's discarded.
		if bs := r.batches(); len(bs) != 3 {
			t.Fatalf("batches %+v", bs)
		}

		srv.sftpd.SetHooks(sftpd.Hooks{})
		out, err = r.cycle(r.rem)
		if err != nil || summary(out) != "c.csv:recovered,d.csv:accepted-with-rejects,b.csv:accepted" {
			t.Fatalf("next run: %s %v", summary(out), err)
		}
		if got := r.files("archive"); len(got) != 5 {
			t.Fatalf("archive %v", got)
		}
		if got := r.files("outbox"); !slices.Equal(got, []string{"d.csv.rejects.csv"}) {
			t.Fatalf("outbox %v", got)
		}
		if got := r.files("inbox"); len(got) != 0 {
			t.Fatalf("inbox %v", got)
		}
	})
}

// A file that cannot be moved, on both servers: the first free name for
// it in today's archive folder is longer than the file system allows, so
// the server refuses the rename (for root as for anyone). The other file
// is archived; the stuck one is retried at every run without being
// ingested again.
func TestUnmovableFile(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, nil)
		long := strings.Repeat("p", 251) + ".csv" // 255 bytes: the most a name may have
		if err := os.MkdirAll(filepath.Join(r.opts.Archive, "2026-11-20"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(r.opts.Archive, "2026-11-20", long), []byte("an earlier file"), 0o644); err != nil {
			t.Fatal(err)
		}
		r.drop(long, rows(0, 0))
		r.drop("ok.csv", rows(1, 0))
		for run := range 2 {
			var out []Outcome
			var err error
			want := "ok.csv:accepted," + long + ":error"
			if run == 0 {
				out, err = r.cycle(r.rem)
			} else { // resumed from the claim folder, at once
				want = long + ":error"
				out, err = New(r.db, r.opts).Run(context.Background(), r.rem)
			}
			if summary(out) != want {
				t.Fatalf("run %d: %s (%v)", run, summary(out), err)
			}
			var ff *FilesFailed
			if !errors.As(err, &ff) || !slices.Equal(ff.Names(), []string{long}) {
				t.Fatalf("run %d: err %v", run, err)
			}
			mustContain(t, out[len(out)-1].Detail, "(left there; the next run resumes it)")
		}
		if got := r.files("archive"); !slices.Equal(got, []string{"2026-11-20/ok.csv", "2026-11-20/" + long}) {
			t.Fatalf("archive %v", got)
		}
		if bs := r.batches(); len(bs) != 2 || r.pendingRows() != 2 {
			t.Fatalf("the stuck file was ingested again: %d batches, %d pending rows", len(bs), r.pendingRows())
		}
	})
}

// A refused file whose move to the failed folder keeps failing is
// retried without being recorded, or reported, again at every run.
func TestStuckRefusedFileIsNotRecordedAgain(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		if srv.sftpd == nil {
			t.Skip("needs the in-process server's hooks")
		}
		r := newRig(t, srv, nil)
		srv.sftpd.SetHooks(sftpd.Hooks{Rename: func(_, to string) error {
			if path.Dir(to) == path.Clean(r.opts.Failed) {
				return errors.New("permission denied by policy")
			}
			return nil
		}})
		r.drop("bad.csv", rows(0, 2))
		if out, err := r.cycle(r.rem); summary(out) != "bad.csv:error" || err == nil {
			t.Fatalf("first run: %s %v", summary(out), err)
		}
		for run := range 2 { // resumed from the claim folder, at once
			if out, err := New(r.db, r.opts).Run(context.Background(), r.rem); summary(out) != "bad.csv:error" || err == nil {
				t.Fatalf("run %d: %s %v", run, summary(out), err)
			}
		}
		if bs := r.batches(); len(bs) != 1 || bs[0].Status != payment.BatchRejected {
			t.Fatalf("batches %+v", bs)
		}
		if got := r.files("outbox"); !slices.Equal(got, []string{"bad.csv.rejects.csv"}) {
			t.Fatalf("outbox %v", got)
		}
		srv.sftpd.SetHooks(sftpd.Hooks{})
		out, err := New(r.db, r.opts).Run(context.Background(), r.rem)
		if err != nil || summary(out) != "bad.csv:rejected" || out[0].Rejected != 2 || out[0].Rows != 3 {
			t.Fatalf("after: %+v %v", out, err)
		}
		mustContain(t, r.read("failed/bad.csv.error.txt"), "2 of 3 rows are invalid", "bad.csv.rejects.csv")
		if bs := r.batches(); len(bs) != 1 {
			t.Fatalf("batches %+v", bs)
		}
	})
}

// A lost connection, or a failing ledger, stops the run at the first
// file: every other file would fail the same way.
func TestUnreachableServerOrLedgerStopsTheRun(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, nil)
		r.drop("a.csv", rows(0, 0))
		r.drop("b.csv", rows(1, 0))
		lost := fmt.Errorf("sftp download: %w: the server closed the connection", remote.ErrConnectionLost)
		out, err := r.cycle(failDownload{r.rem, lost})
		if !errors.Is(err, remote.ErrConnectionLost) || summary(out) != "a.csv:error" {
			t.Fatalf("lost connection: %s %v", summary(out), err)
		}
		ledger := &payment.LedgerError{Op: "write", Path: "x.db", Err: errors.New("no space left on device")}
		out, err = New(r.db, r.opts).Run(context.Background(), failDownload{r.rem, ledger}) // a.csv is resumed first
		if !errors.Is(err, payment.ErrLedger) || summary(out) != "a.csv:error" {
			t.Fatalf("ledger: %s %v", summary(out), err)
		}
		if got := r.files("inbox"); !slices.Contains(got, "b.csv") {
			t.Fatalf("b.csv was touched: inbox %v", got)
		}
	})
}

type failDownload struct {
	Remote
	err error
}

func (f failDownload) Download(context.Context, string, string) (string, string, int64, error) {
	return "", "", 0, f.err
}

// Each run starts by removing what failed uploads left in the folders
// batchd uploads to: only its own temporary names, untouched for an hour.
func TestRunSweepsFailedUploads(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		backups := filepath.Join(srv.root, "backups")
		r := newRig(t, srv, func(o *Options) { o.SweepDirs = []string{backups} })
		old, recent := r.clk.now().Add(-2*time.Hour), r.clk.now().Add(-time.Minute)
		files := map[string]time.Time{
			"outbox/.r.csv.0123456789abcdef.tmp":           old,
			"outbox/s.csv.fedcba9876543210.partial":        old,
			"outbox/t.csv.00112233445566ff.partial":        recent,
			"outbox/pay.csv.results.csv":                   old,
			"failed/.x.csv.error.txt.0a0b0c0d0e0f0102.tmp": old,
			"failed/x.csv": old,
			"backups/batchd.db.0123456789abcdef.partial": old,
			"archive/.y.csv.0123456789abcdef.tmp":        old, // batchd never uploads there
		}
		for f, at := range files {
			p := filepath.Join(srv.root, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, at, at); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := New(r.db, r.opts).Run(context.Background(), r.rem); err != nil {
			t.Fatal(err)
		}
		var left []string
		for f := range files {
			if _, err := os.Stat(filepath.Join(srv.root, f)); err == nil {
				left = append(left, f)
			}
		}
		slices.Sort(left)
		want := []string{"archive/.y.csv.0123456789abcdef.tmp", "failed/x.csv", "outbox/pay.csv.results.csv", "outbox/t.csv.00112233445566ff.partial"}
		if !slices.Equal(left, want) {
			t.Fatalf("left %v, want %v", left, want)
		}
	})
}

// A rejects report whose upload fails midway, on a server that also
// refuses deletes, leaves a temporary file in the outbox; the file stays
// claimed. Once the server accepts the upload, a later run delivers the
// report under the same name, settles the file, and sweeps the leftover.
func TestFailedReportUploadIsSweptByALaterRun(t *testing.T) {
	for _, mode := range []string{remote.TempDot, remote.TempSuffix} {
		t.Run(mode, func(t *testing.T) {
			srv := servers()["inprocess"](t)
			srv.opts.TempUpload = mode
			r := newRig(t, srv, nil)
			srv.sftpd.SetHooks(sftpd.Hooks{
				Write: func(p string, off int64, n int) error {
					if strings.Contains(p, ".rejects.") && off+int64(n) > 100 {
						return errors.New("quota exceeded")
					}
					return nil
				},
				Remove: func(string) error { return errors.New("deletes are not allowed") },
			})
			r.drop("bad.csv", rows(0, 20))
			if out, err := r.cycle(r.rem); summary(out) != "bad.csv:error" || err == nil {
				t.Fatalf("first run: %s %v", summary(out), err)
			}
			left := r.files("outbox")
			if len(left) != 1 || !remote.IsTempName(left[0]) {
				t.Fatalf("outbox %v, want one temporary file", left)
			}
			srv.sftpd.SetHooks(sftpd.Hooks{})
			r.clk.t = time.Now().Add(2 * time.Hour) // the leftover is now an hour old
			out, err := New(r.db, r.opts).Run(context.Background(), r.rem)
			if err != nil || summary(out) != "bad.csv:rejected" {
				t.Fatalf("next run: %s %v", summary(out), err)
			}
			if got := r.files("outbox"); !slices.Equal(got, []string{"bad.csv.rejects.csv"}) {
				t.Fatalf("outbox %v", got)
			}
		})
	}
}
