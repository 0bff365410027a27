package jobs

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/report"
	"github.com/batchd/batchd/internal/state"
)

func TestPruneSpec(t *testing.T) {
	for in, want := range map[string]string{
		"0 6 * * *":     "30 6 * * *",
		"45 23 * * 1-5": "15 0 * * 1-5",
		" 30 5 1 * * ":  "0 6 1 * *",
		"@daily":        "30 0 * * *",
		"@midnight":     "30 0 * * *",
		"@every 5m":     "30 6 * * *",
		"*/15 6 * * *":  "30 6 * * *",
		"0 6,18 * * *":  "30 6 * * *",
	} {
		if got := PruneSpec(in); got != want {
			t.Errorf("PruneSpec(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPruneHorizon: no time before the horizon has a UTC date inside
// reconcile's default window, whatever the time zone.
func TestPruneHorizon(t *testing.T) {
	for _, zone := range []string{"UTC", "America/New_York", "Asia/Tokyo", "Pacific/Kiritimati", "Pacific/Pago_Pago"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		for h := 0; h < 48; h += 5 {
			now := time.Date(2026, 11, 21, h, 17, 0, 0, time.UTC)
			horizon := PruneHorizon(now, loc, 60)
			y, m, d := now.In(loc).Date()
			floor := time.Date(y, m, d-60, 0, 0, 0, 0, time.UTC) // the window's first service date
			last := horizon.Add(-time.Nanosecond).UTC()
			if ly, lm, ld := last.Date(); !time.Date(ly, lm, ld, 0, 0, 0, 0, time.UTC).Before(floor) {
				t.Errorf("%s at %s: horizon %s lets a check of %s be pruned, inside the window from %s",
					zone, now, horizon, last, floor.Format(time.DateOnly))
			}
			if floor.Sub(horizon) > 3*24*time.Hour {
				t.Errorf("%s at %s: horizon %s is needlessly far before %s", zone, now, horizon, floor)
			}
		}
	}
}

// TestScheduledPrune: the daemon's prune, local reports only, with
// retention.keep_days shorter than reconcile.lookback_days: it keeps what
// the lookback still covers, and archives and removes the rest.
func TestScheduledPrune(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		now := time.Date(2026, 11, 22, 7, 0, 0, 0, time.UTC)
		c := config.Default()
		c.StateDir = filepath.Join(t.TempDir(), "state")
		c.Reconcile.LookbackDays = 60
		at := now
		db := ledgertest.Open(t, backend, state.Options{Now: func() time.Time { return at }})
		for _, age := range []int{90, 40} { // days before now
			at = now.AddDate(0, 0, -age)
			finishedBatch(t, db, age, at)
		}
		env := &Env{Cfg: c, DB: db, now: func() time.Time { return now }}
		rec := fakeRecorder{}
		sum, err := Scheduled{Env: env, Errors: rec}.Prune(30)(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := "pruned 1 batch (3 rows) last changed before 2026-09-22 (asked 2026-10-23; reconcile.lookback_days keeps later ones); kept 1 (1 recent)"
		if sum != want {
			t.Errorf("summary\n got %q\nwant %q", sum, want)
		}
		bs, err := db.Batches()
		if err != nil || len(bs) != 1 || bs[0].File != "40.csv" {
			t.Fatalf("batches left: %+v, %v", bs, err)
		}
		raw, err := os.ReadFile(filepath.Join(ArchiveDir(c), "batch-000001-90.csv.archive.csv"))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(raw, []byte(report.BOM)))).ReadAll()
		if err != nil || len(recs) != 4 {
			t.Fatalf("archive: %d records, %v", len(recs), err)
		}
		if bytes.Contains(raw, []byte("1111000016")) || !strings.Contains(string(raw), "****0016") {
			t.Errorf("archive shows the account wrongly:\n%s", raw)
		}
	})
}

// finishedBatch loads a batch of three rows, paid and deposited, with its
// results report delivered, named after its age.
func finishedBatch(t *testing.T, db *state.DB, age int, at time.Time) {
	t.Helper()
	name := strconv.Itoa(age) + ".csv"
	l, err := db.BeginBatch(payment.FileMeta{Name: name, SHA256: "sha-" + name})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := l.Add(i+2, payment.Payment{Amount: money.Cents(100 + i), Memo: "m", Name: "n", Email: "a@b.c",
			BankRouting: "999900001", BankAccount: "1111000016"}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := l.Commit(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	var obs []payment.Observation
	for i := range 3 {
		k := payment.RowKey{Batch: b.ID, Line: uint32(i + 2)}
		if _, err := db.Send(k); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Created(k, payment.CheckResult{CheckID: name + "-" + strconv.Itoa(i), Status: payment.StatusInProcess}); err != nil {
			t.Fatal(err)
		}
		obs = append(obs, payment.Observation{Key: k, Status: payment.StatusDeposited})
	}
	if _, err := db.ObserveStatuses(obs, at); err != nil {
		t.Fatal(err)
	}
	if err := db.ResultsReported(b.ID); err != nil {
		t.Fatal(err)
	}
}

// TestArchiveFormats: a batch beyond an XLSX worksheet's rows is archived
// in CSV alone, so that it can be pruned at all.
func TestArchiveFormats(t *testing.T) {
	both := []report.Format{report.CSV, report.XLSX}
	for _, c := range []struct {
		rows    int
		formats []report.Format
		want    []report.Format
	}{
		{1000, both, both},
		{xlsxRowLimit, both, both},
		{xlsxRowLimit + 1, both, []report.Format{report.CSV}},
		{1_800_000, []report.Format{report.XLSX}, []report.Format{report.CSV}},
	} {
		b := &payment.Batch{Counts: map[payment.RowState]int{payment.Submitted: c.rows - 1, payment.Rejected: 1}}
		if got := archiveFormats(c.formats, b); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%d rows, %v: %v, want %v", c.rows, c.formats, got, c.want)
		}
	}
}

// TestPruneFundingBatch: a finished funding-source batch is archived in
// its own layout (its results report's columns, the account masked, no
// token) and removed, like a payment batch.
func TestPruneFundingBatch(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		now := time.Date(2026, 11, 22, 7, 0, 0, 0, time.UTC)
		c := config.Default()
		c.StateDir = filepath.Join(t.TempDir(), "state")
		at := now.AddDate(0, 0, -90)
		db := ledgertest.Open(t, backend, state.Options{Now: func() time.Time { return at }})
		l, err := db.BeginBatch(payment.FileMeta{Kind: payment.KindSources, Name: "vendors.csv", SHA256: "f1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.(funding.Loader).AddSource(2, funding.Request{Method: funding.OnDemand, UserID: "u-1",
			Routing: "999900001", Account: "1111000016", AccountType: "checking"}); err != nil {
			t.Fatal(err)
		}
		b, err := l.Commit(1, 0)
		if err != nil {
			t.Fatal(err)
		}
		k := payment.RowKey{Batch: b.ID, Line: 2}
		if _, err := db.SendSource(k, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CustomerFound(k, "u-1", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SourceCreated(k, funding.Result{SourceID: "src-1", Status: funding.StatusVerified, BankName: "Sandbox Test Bank", LastFour: "0016"}); err != nil {
			t.Fatal(err)
		}
		if err := db.ResultsReported(b.ID); err != nil {
			t.Fatal(err)
		}
		at = now
		env := &Env{Cfg: c, DB: db, now: func() time.Time { return now }}
		if _, err := (Scheduled{Env: env, Errors: fakeRecorder{}}).Prune(30)(context.Background()); err != nil {
			t.Fatal(err)
		}
		if bs, err := db.Batches(); err != nil || len(bs) != 0 {
			t.Fatalf("batches left: %+v, %v", bs, err)
		}
		raw, err := os.ReadFile(filepath.Join(ArchiveDir(c), "batch-000001-vendors.csv.archive.csv"))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(raw, []byte(report.BOM)))).ReadAll()
		if err != nil || len(recs) != 2 {
			t.Fatalf("archive: %q %v", recs, err)
		}
		if got := strings.Join(recs[0], ","); got != strings.Join(SourcesArchiveTable.Names(), ",") {
			t.Fatalf("header %s", got)
		}
		row := strings.Join(recs[1], ",")
		if !strings.Contains(row, "src-1") || !strings.Contains(row, "verified") || strings.Contains(row, "1111000016") {
			t.Fatalf("archived row %q", row)
		}
	})
}
