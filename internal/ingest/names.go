package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/remote"
)

// Names. A file's reports in the outbox are named after the name it was
// archived (or failed) under: <name>.rejects.csv when ingest finds
// problems, <name>.results.csv when submit is done with it. So that no
// report ever replaces another file's, that name is chosen to be the
// file's own: free in the folder it goes to, and the name of no report in
// the outbox nor of a batch whose results are still to come. A second
// payroll.csv the same day, or any later day while payroll.csv's receipt
// is in the outbox, is archived as payroll-1.csv, and its reports are
// payroll-1.csv.results.csv and payroll-1.csv.rejects.csv.

// reportMarks are what a report's name has between the file's name and
// its extension: payroll.csv.results.csv, payroll.csv.rejects.xlsx.
var reportMarks = []string{".results.", ".rejects."}

// chooseName returns the name a file called name is to have in dir (an
// archive day folder, or the failed folder): the first of name, name-1,
// name-2, ... (remote.Numbered) that is free in dir and, if the file is to
// have reports, that no report in the outbox bears and no batch whose
// results are to come will. prefer, if set, is a name an earlier attempt
// for the same file chose (and its reports may already bear): it is kept
// if dir still has no file of that name. batch is the file's own batch,
// whose results do not count against its name.
func (j *Job) chooseName(ctx context.Context, rem Remote, dir, name, prefer string, batch uint64, reports bool) (string, error) {
	inDir, err := j.names(ctx, rem, dir)
	if err != nil {
		return "", err
	}
	if prefer != "" && !inDir[prefer] && !inDir[prefer+".done"] {
		return prefer, nil
	}
	reported, pending := map[string]bool{}, map[string]bool{}
	if reports {
		outbox, err := j.names(ctx, rem, j.opts.Outbox)
		if err != nil {
			return "", err
		}
		for n := range outbox {
			if base, ok := reportBase(n); ok {
				reported[base] = true
			}
		}
		if pending, err = j.pendingNames(batch); err != nil {
			return "", err
		}
	}
	for i := 0; i <= remote.MaxSuffix; i++ {
		n := remote.Numbered(name, i)
		if !inDir[n] && !inDir[n+".done"] && !inDir[n+".error.txt"] && !reported[n] && !pending[n] {
			return n, nil
		}
	}
	return "", fmt.Errorf("%s and %d numbered variants are all taken in %s or by reports in %s", name, remote.MaxSuffix, dir, j.opts.Outbox)
}

// reportBase returns the name of the file a report in the outbox is
// about: "payroll.csv" for payroll.csv.results.csv.
func reportBase(report string) (string, bool) {
	at := -1
	for _, m := range reportMarks {
		at = max(at, strings.LastIndex(report, m))
	}
	if at <= 0 {
		return "", false
	}
	return report[:at], true
}

// names lists dir's entries by name; a missing dir has none.
func (j *Job) names(ctx context.Context, rem Remote, dir string) (map[string]bool, error) {
	list, err := rem.List(ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(list))
	for _, f := range list {
		out[f.Name] = true
	}
	return out, nil
}

// pendingNames are the outbox names of the accepted batches, other than
// batch, whose results report has not been delivered yet: it will bear
// that name.
func (j *Job) pendingNames(batch uint64) (map[string]bool, error) {
	bs, err := j.db.Batches()
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for i := range bs {
		b := &bs[i]
		if b.ID == batch || b.Status != payment.BatchReady || !b.ResultsReported.IsZero() {
			continue
		}
		n, err := payment.OutboxName(j.db, b)
		if err != nil {
			return nil, err
		}
		out[n] = true
	}
	return out, nil
}
