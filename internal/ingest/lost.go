package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

// A file whose batch the ledger lost. When the ledger's database goes
// back in time, a batch ingested and sent just before may be gone from
// it while its file is in the archive and its checks exist at the
// service; reconcile records those checks (payment.LostCheck). The
// ledger no longer knows the file's content, so the duplicate rule
// (process.go) would let the same file, dropped again, be paid twice.
// While checks of lost batches are on record, a payment file whose
// content the ledger does not know is therefore refused when
//
//   - the same content (SHA-256) is in the archive, in a day folder from
//     a week before the oldest recorded lost check to the day after the
//     newest: the file was accepted by the ledger as it was before the
//     rewind, and would have been refused as a duplicate then; or
//   - a row carries the check number and amount of a recorded lost check
//     (and its label, when the row has one), compared by the identity
//     rule's own terms (payment.SameNumber, payment.SameLabel, exact
//     cents): that payment was made.
//
// A row without a number of its own matches a lost check by amount
// alone, which is too weak to refuse an honest new file on: such matches
// only name, in a refusal for the reasons above, the checks that already
// exist. So an honest new file (new content, new numbers) is never
// refused, and a refusal says how to pay again on purpose: new check
// numbers, or new content.

// lostArchiveSlack is how long before the oldest lost check its file may
// have been archived: held rows and a stopped daemon can delay a send by
// days after the ingest.
const lostArchiveSlack = 7 * 24 * time.Hour

// lostPrefix starts the reason of every such refusal, which the batch
// keeps as its note: a refusal whose move a run did not finish is told
// from others by it (finishRejection).
const lostPrefix = "payments already made: "

// maxNamed bounds the checks a refusal names.
const maxNamed = 10

// lostPair is a row of the file and a lost check it may be.
type lostPair struct {
	line     int
	byNumber bool // the row's own number matched; false: amount alone
	check    payment.LostCheck
}

// lostWatch passes a payment file's rows on to the loader and pairs each
// with a recorded lost check it carries the identity of, each check with
// one row at most.
type lostWatch struct {
	payment.Loader
	byAmount map[money.Cents][]int // indexes into checks
	checks   []payment.LostCheck
	used     []bool
	pairs    []lostPair
}

// watchLost wraps loader when checks of lost batches are on record.
func (j *Job) watchLost(loader payment.Loader, meta payment.FileMeta) (payment.Loader, *lostWatch, error) {
	if !meta.Kind.Payments() {
		return loader, nil, nil
	}
	cs, err := j.db.LostChecks()
	if err != nil || len(cs) == 0 {
		return loader, nil, err
	}
	w := &lostWatch{Loader: loader, byAmount: map[money.Cents][]int{}, checks: cs, used: make([]bool, len(cs))}
	for i, c := range cs {
		w.byAmount[c.Amount] = append(w.byAmount[c.Amount], i)
	}
	return w, w, nil
}

func (w *lostWatch) Add(line int, p payment.Payment) error {
	w.see(line, &p)
	return w.Loader.Add(line, p)
}

func (w *lostWatch) AddMarked(line int, p payment.Payment, m payment.PayeeMark) error {
	w.see(line, &p)
	return w.Loader.AddMarked(line, p, m)
}

// see pairs the row with the first unused lost check of its amount whose
// number and label agree with the row's own, where it has them.
func (w *lostWatch) see(line int, p *payment.Payment) {
	for _, i := range w.byAmount[p.Amount] {
		c := w.checks[i]
		if w.used[i] || p.Number != "" && !payment.SameNumber(p.Number, c.Number) || p.Label != "" && !payment.SameLabel(p.Label, c.Label) {
			continue
		}
		w.used[i] = true
		w.pairs = append(w.pairs, lostPair{line: line, byNumber: p.Number != "", check: c})
		return
	}
}

// lostRefusal is the reason to refuse the file because its payments were
// made for a batch the ledger lost, or "" when it may be loaded. sha and
// size are the file's.
func (j *Job) lostRefusal(ctx context.Context, rem Remote, w *lostWatch, sha string, size int64) (string, error) {
	if w == nil {
		return "", nil
	}
	copyAt, err := j.archivedCopy(ctx, rem, w.checks, sha, size)
	if err != nil {
		return "", fmt.Errorf("look for the same content in %s: %w", j.opts.Archive, err)
	}
	byNumber := 0
	for _, p := range w.pairs {
		if p.byNumber {
			byNumber++
		}
	}
	if copyAt == "" && byNumber == 0 {
		return "", nil
	}
	var b strings.Builder
	b.WriteString(lostPrefix)
	if copyAt != "" {
		fmt.Fprintf(&b, "the same content was accepted before, as %s (archived on %s), by the ledger as it was before its database went back in time (a failover or a restore), which lost that batch. ",
			copyAt, path.Base(path.Dir(copyAt)))
	} else {
		b.WriteString("rows of this file carry the check number and amount of checks batchd made for a batch its ledger lost when its database went back in time (a failover or a restore). ")
	}
	if len(w.pairs) > 0 {
		b.WriteString("Checks of that lost batch already exist at the service: ")
		for i, p := range w.pairs {
			if i == maxNamed {
				fmt.Fprintf(&b, "; and %d more", len(w.pairs)-maxNamed)
				break
			}
			if i > 0 {
				b.WriteString("; ")
			}
			c := p.check
			fmt.Fprintf(&b, "line %d: check %s, number %s, amount %s, label %s", p.line, c.ID, c.Number, c.Amount, c.Label)
			if !c.Created.IsZero() {
				fmt.Fprintf(&b, ", created %s", c.Created.UTC().Format(time.DateOnly))
			}
		}
		b.WriteString(". ")
	} else {
		b.WriteString("No recorded check of a lost batch carries its rows' identity, which proves nothing: they may carry the file's own labels. ")
	}
	b.WriteString("Nothing of this file was ingested, so that nobody is paid twice. Run batchd reconcile and read its exceptions report (kind lost_batch: every check of the lost batch) and compare it with this file; " +
		"upload a file of only the rows no such check pays. If a payment really must be made a second time, give its row a check number no existing check carries.")
	return b.String(), nil
}

// archivedCopy looks in the archive's day folders around the lost checks'
// dates for a file of content sha, and returns its path, or "". Only
// files of the same size are downloaded and hashed.
func (j *Job) archivedCopy(ctx context.Context, rem Remote, cs []payment.LostCheck, sha string, size int64) (string, error) {
	from, to := lostDays(cs)
	from, to = from.Add(-lostArchiveSlack).In(j.opts.Location), to.Add(24*time.Hour).In(j.opts.Location)
	first, last := from.Format(time.DateOnly), to.Format(time.DateOnly)
	days, err := rem.List(ctx, j.opts.Archive)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	for _, d := range days {
		if !d.IsDir || d.Name < first || d.Name > last {
			continue
		}
		if _, err := time.Parse(time.DateOnly, d.Name); err != nil {
			continue
		}
		dir := path.Join(j.opts.Archive, d.Name)
		files, err := rem.List(ctx, dir)
		if err != nil {
			return "", err
		}
		for _, f := range files {
			if !f.Regular() || f.Size != size {
				continue
			}
			p := path.Join(dir, f.Name)
			local, got, _, err := rem.Download(ctx, p, j.opts.SpoolDir)
			if err != nil {
				return "", fmt.Errorf("read %s: %w", p, err)
			}
			os.Remove(local)
			if got == sha {
				return p, nil
			}
		}
	}
	return "", nil
}

// lostDays is the span of the lost checks' creation times (their
// recording, when the service gave none).
func lostDays(cs []payment.LostCheck) (from, to time.Time) {
	for i, c := range cs {
		t := c.Created
		if t.IsZero() {
			t = c.Recorded
		}
		if i == 0 || t.Before(from) {
			from = t
		}
		if i == 0 || t.After(to) {
			to = t
		}
	}
	return from, to
}
