package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/ingest"
)

// onDay makes the next runs see another day: the archive folder and run
// date follow schedule.timezone, and Kiritimati (UTC+14) and Pago Pago
// (UTC-11) never share a date.
func (c *cycle) onDay(tz string) {
	c.env.Cfg.Schedule.Timezone = tz
	if err := c.env.Cfg.Validate(); err != nil { // loads the zone
		c.t.Fatal(err)
	}
	c.env.ingest = ingest.New(c.env.DB, c.env.ingestOptions())
}

// Three files named payroll.csv with different content, on two days (two
// the same day), each ingested and submitted: three results reports in the
// outbox, each named after its file's archived name. The last round
// uploads with sftp.temp_upload: none, so its report comes with a marker.
func TestEveryFileGetsItsOwnResults(t *testing.T) {
	c := newCycle(t)
	ctx := context.Background()
	var archived []string
	for i, tz := range []string{"Pacific/Kiritimati", "Pacific/Pago_Pago", "Pacific/Pago_Pago"} {
		c.onDay(tz)
		if i == 2 {
			c.env.Cfg.SFTP.TempUpload = config.TempUploadNone
		}
		body := fmt.Sprintf("amount,memo,name,email,bank_routing,bank_account\n%d.00,pay %d,Ann,ann@example.com,999900001,1111000016\n", 100+i, i)
		c.drop("payroll.csv", body)
		out, err := c.env.Ingest(ctx)
		if err != nil || len(out) != 1 || out[0].Outcome != "accepted" {
			t.Fatalf("round %d: ingest %+v %v", i, out, err)
		}
		archived = append(archived, strings.TrimPrefix(out[0].MovedTo, c.path("archive")+"/"))
		if sum, delivered, err := c.env.Submit(ctx); err != nil || sum.Created != 1 || len(delivered) != 1 {
			t.Fatalf("round %d: submit %+v %v %v", i, sum, delivered, err)
		}
	}
	// Day folders, then names: payroll.csv on day 1; on day 2, whose
	// folder had no payroll.csv, payroll-1.csv, since day 1's receipt bears
	// payroll.csv; then payroll-2.csv.
	var days, names []string
	for _, a := range archived {
		d, n, _ := strings.Cut(a, "/")
		days, names = append(days, d), append(names, n)
	}
	if days[0] == days[1] || days[1] != days[2] || !slices.Equal(names, []string{"payroll.csv", "payroll-1.csv", "payroll-2.csv"}) {
		t.Fatalf("archived %v", archived)
	}
	for i, name := range []string{"payroll.csv", "payroll-1.csv", "payroll-2.csv"} {
		recs := c.outboxCSV(name + ".results")
		if len(recs) != 2 || recs[1][col(recs[0], "amount")] != fmt.Sprintf("%d.00", 100+i) {
			t.Fatalf("%s.results.csv: %q", name, recs)
		}
	}
	if _, err := os.Stat(filepath.Join(c.path("outbox"), "payroll-2.csv.results.csv.done")); err != nil {
		t.Fatalf("none mode: no marker: %v", err)
	}
	if _, err := os.Stat(filepath.Join(c.path("outbox"), "payroll-1.csv.results.csv.done")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dot mode wrote a marker: %v", err)
	}
}

// A file that cannot be archived fails alone: the scheduled run's summary
// and the error it records for /healthz name it, and the other file is
// accepted in the same run.
func TestScheduledIngestNamesTheFilesThatFailed(t *testing.T) {
	c := newRunningCycle(t) // the long name leaves no room for a .done marker
	// Its first free name in today's archive folder is longer than the
	// file system allows, so OpenSSH refuses the move.
	long := strings.Repeat("p", 251) + ".csv"
	day := filepath.Join(c.path("archive"), c.env.Now().In(c.env.Cfg.Location()).Format("2006-01-02"))
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(day, long), []byte("an earlier file"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{long, "ok.csv"} {
		body := fmt.Sprintf("amount,memo,name,email,bank_routing,bank_account\n%d.00,pay,Ann,ann@example.com,999900001,1111000016\n", 100+i)
		if err := os.WriteFile(filepath.Join(c.path("inbox"), name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec := fakeRecorder{}
	sum, err := Scheduled{Env: c.env, Errors: rec}.Ingest(context.Background())
	var ff *ingest.FilesFailed
	if !errors.As(err, &ff) || len(ff.Files) != 1 || ff.Files[0].File != long {
		t.Fatalf("err = %v; summary %q", err, sum)
	}
	if !strings.HasPrefix(sum, "1 files accepted (1 rows), 0 not accepted, 1 failed ("+long+")") {
		t.Fatalf("summary %q", sum)
	}
	if got := rec["sftp"]; !strings.Contains(got, "1 of 2 files failed") || !strings.Contains(got, long+": archive") {
		t.Fatalf("recorded %v", rec)
	}
	if _, err := os.Stat(filepath.Join(day, "ok.csv")); err != nil {
		t.Fatalf("ok.csv not archived: %v", err)
	}
}
