package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

const twoRows = "amount,memo,name,email,bank_routing,bank_account\r\n" +
	"12.34,rent,Ann,ann@example.com,999900001,1111000016\r\n" +
	"0.01,fee,Bob,bob@example.com,999900001,1111000008\r\n"

const oneBad = "amount,memo,name,email,bank_routing,bank_account\n" +
	"12.34,rent,Ann,ann@example.com,999900001,1111000016\n" +
	"-5,fee,Bob,bob@example.com,999900001,1111000008\n"

func forEachServer(t *testing.T, fn func(t *testing.T, srv server)) {
	for name, start := range servers() {
		t.Run(name, func(t *testing.T) { fn(t, start(t)) })
	}
}

func TestPickupArchivesAcceptedFile(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, nil)
		r.drop("pay.csv", twoRows)
		out, err := r.run(r.rem)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 1 || out[0].Outcome != "accepted" || out[0].Rows != 2 || out[0].Valid != 2 {
			t.Fatalf("outcomes %+v", out)
		}
		if got := r.files("archive"); len(got) != 1 || got[0] != "2026-11-20/pay.csv" {
			t.Fatalf("archive %v", got)
		}
		if len(r.files("inbox")) != 0 || r.read("archive/2026-11-20/pay.csv") != twoRows {
			t.Fatal("file not moved intact")
		}
		if bs := r.batches(); len(bs) != 1 || bs[0].Status != payment.BatchReady || r.pendingRows() != 2 {
			t.Fatalf("ledger %+v, %d pending", bs, r.pendingRows())
		}
	})
}

func TestRejectFilePolicy(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, nil)
		r.drop("pay.csv", oneBad)
		out, err := r.run(r.rem)
		if err != nil {
			t.Fatal(err)
		}
		if out[0].Outcome != "rejected" || out[0].Rejected != 1 || out[0].Valid != 1 {
			t.Fatalf("outcome %+v", out[0])
		}
		if r.pendingRows() != 0 {
			t.Fatal("rows of a rejected file are pending")
		}
		if got := r.files("failed"); strings.Join(got, ",") != "pay.csv,pay.csv.error.txt" {
			t.Fatalf("failed %v", got)
		}
		mustContain(t, r.read("failed/pay.csv.error.txt"), "1 of 2 rows are invalid", "pay.csv.rejects.csv")
		rep := r.read("outbox/pay.csv.rejects.csv")
		mustContain(t, rep, `"line","column","value","message"`, `"3","amount","-5"`)
		if local, _ := filepath.Glob(filepath.Join(r.opts.ReportsDir, "rejects", "*pay.csv.rejects.csv")); len(local) != 1 {
			t.Fatal("no local copy of the rejects report")
		}
	})
}

func TestSkipRowsPolicy(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, func(o *Options) { o.OnInvalid = SkipRows })
		r.drop("pay.csv", oneBad)
		out, err := r.run(r.rem)
		if err != nil {
			t.Fatal(err)
		}
		if out[0].Outcome != "accepted-with-rejects" || out[0].Valid != 1 || out[0].Rejected != 1 {
			t.Fatalf("outcome %+v", out[0])
		}
		if r.pendingRows() != 1 || len(r.files("archive")) != 1 {
			t.Fatal("valid row not committed or file not archived")
		}
		mustContain(t, r.read("outbox/pay.csv.rejects.csv"), `"3","amount"`)
	})
}

func TestUnreadableFileGoesToFailed(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, nil)
		r.dropFile("photo.csv", "../../testdata/csv/binary.bin")
		r.dropFile("typo.csv", "../../testdata/csv/unknown_column.csv")
		out, err := r.run(r.rem)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 2 || out[0].Outcome != "unreadable" || out[1].Outcome != "unreadable" {
			t.Fatalf("outcomes %+v", out)
		}
		mustContain(t, r.read("failed/photo.csv.error.txt"), "not a CSV text file")
		mustContain(t, r.read("failed/typo.csv.error.txt"), "unknown column")
		if len(r.batches()) != 2 || r.pendingRows() != 0 {
			t.Fatal("unreadable files must be recorded as rejected batches with no rows")
		}
	})
}

func TestSameFileTwiceIsNotIngestedAgain(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, nil)
		r.drop("monday.csv", twoRows)
		if _, err := r.run(r.rem); err != nil {
			t.Fatal(err)
		}
		r.drop("monday.csv", twoRows)  // the same name again
		r.drop("tuesday.csv", twoRows) // the same content under another name
		out, err := r.run(r.rem)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 2 || out[0].Outcome != "duplicate" || out[1].Outcome != "duplicate" {
			t.Fatalf("outcomes %+v", out)
		}
		if r.pendingRows() != 2 || len(r.batches()) != 1 {
			t.Fatalf("duplicate ingested: %d pending rows, %d batches", r.pendingRows(), len(r.batches()))
		}
		// It names the earlier file and its date, and the way forward for
		// a file sent again on purpose.
		mustContain(t, r.read("failed/tuesday.csv.error.txt"), `already ingested as "monday.csv" on 20`, "batch 1",
			"nothing in it was sent", "give every row a new check number")
		// The second monday.csv did not overwrite anything: it sits in failed.
		if got := r.files("failed"); !contains(got, "monday.csv") || len(r.files("archive")) != 1 {
			t.Fatalf("failed %v", got)
		}
	})
}

func TestGrowingFileIsNotReadUntilStable(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, nil)
		j := New(r.db, r.opts)
		ctx := context.Background()
		r.drop("big.csv", twoRows[:40])
		out, _ := j.Run(ctx, r.rem)
		if len(out) != 1 || out[0].Outcome != "waiting" {
			t.Fatalf("first sight: %+v", out)
		}
		r.clk.add(900 * 1e6) // 0.9s: not yet stable
		r.drop("big.csv", twoRows[:90])
		r.clk.add(900 * 1e6) // unchanged for 0.9s only since it grew
		if out, _ = j.Run(ctx, r.rem); out[0].Outcome != "waiting" {
			t.Fatalf("a growing file was read: %+v", out)
		}
		r.drop("big.csv", twoRows)
		if out, _ = j.Run(ctx, r.rem); out[0].Outcome != "waiting" {
			t.Fatalf("a growing file was read: %+v", out)
		}
		r.clk.add(1500 * 1e6)
		out, err := j.Run(ctx, r.rem)
		if err != nil || out[0].Outcome != "accepted" || out[0].Rows != 2 {
			t.Fatalf("stable file: %+v %v", out, err)
		}
	})
}

func TestDoneMarker(t *testing.T) {
	forEachServer(t, func(t *testing.T, srv server) {
		r := newRig(t, srv, func(o *Options) { o.DoneMarker = true })
		j := New(r.db, r.opts)
		r.drop("pay.csv", twoRows)
		r.clk.add(10e9)
		if out, _ := j.Run(context.Background(), r.rem); out[0].Outcome != "waiting" {
			t.Fatalf("read without its marker: %+v", out)
		}
		r.drop("pay.csv.done", "")
		out, err := j.Run(context.Background(), r.rem)
		if err != nil || len(out) != 1 || out[0].Outcome != "accepted" {
			t.Fatalf("with marker: %+v %v", out, err)
		}
		if got := r.files("archive"); strings.Join(got, ",") != "2026-11-20/pay.csv,2026-11-20/pay.csv.done" {
			t.Fatalf("archive %v", got)
		}
	})
}

// crashAt wraps a Remote and fails (as a killed process would stop) at one
// point of the protocol.
type crashAt struct {
	Remote
	point   string // "download", "move-before", "move-after"
	archive string // the archive folder, whose moves "move-*" stop
}

var errKilled = errors.New("killed")

func (c crashAt) Download(ctx context.Context, p, dir string) (string, string, int64, error) {
	l, s, n, err := c.Remote.Download(ctx, p, dir)
	if c.point == "download" && err == nil {
		return l, s, n, errKilled // the file is in the spool; nothing else happened
	}
	return l, s, n, err
}

func (c crashAt) Rename(ctx context.Context, from, to string) error {
	if !strings.HasPrefix(to, c.archive+"/") {
		return c.Remote.Rename(ctx, from, to)
	}
	switch c.point {
	case "move-before": // the batch is committed; the move never happens
		return errKilled
	case "move-after": // the move happened; nothing after it did
		if err := c.Remote.Rename(ctx, from, to); err != nil {
			return err
		}
		return errKilled
	}
	return c.Remote.Rename(ctx, from, to)
}

func TestCrashPoints(t *testing.T) {
	for _, point := range []string{"download", "move-before", "move-after"} {
		t.Run(point, func(t *testing.T) {
			forEachServer(t, func(t *testing.T, srv server) {
				r := newRig(t, srv, nil)
				r.drop("pay.csv", twoRows)
				if _, err := r.run(crashAt{r.rem, point, r.opts.Archive}); !errors.Is(err, errKilled) {
					t.Fatalf("crash not reached: %v", err)
				}
				if point == "download" {
					// A killed process never runs its deferred cleanup.
					os.WriteFile(filepath.Join(r.opts.SpoolDir, "left-by-a-kill.csv"), []byte("x"), 0o600)
				}
				r.restart()
				if _, err := r.run(r.rem); err != nil {
					t.Fatal(err)
				}
				if bs := r.batches(); len(bs) != 1 || bs[0].Status != payment.BatchReady || r.pendingRows() != 2 {
					t.Fatalf("after restart: batches %+v, %d pending rows", bs, r.pendingRows())
				}
				if got := r.files("archive"); len(got) != 1 || got[0] != "2026-11-20/pay.csv" {
					t.Fatalf("archive %v, failed %v, inbox %v", got, r.files("failed"), r.files("inbox"))
				}
				if len(r.files("inbox")) != 0 || len(r.files("failed")) != 0 {
					t.Fatalf("inbox %v failed %v", r.files("inbox"), r.files("failed"))
				}
				if left, _ := os.ReadDir(r.opts.SpoolDir); len(left) != 0 {
					t.Fatalf("spool keeps %d files after the restart", len(left))
				}
			})
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
