package demo

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/ingest/sheet"
)

// A rehearsal of a person's own files (`batchd demo --file F`): each file
// is read as ingest reads it (CSV with any of its delimiters, or an XLSX
// workbook's sheet) and written into the demo's inbox as a CSV copy in
// which every bank routing number is the sandbox's test routing number and
// every account number one of the sandbox's accounts that pass its checks:
// real bank details would fail there, and must not be left in the demo's
// directory. The original file is only read. Everything else in the file
// (columns, amounts, names, check numbers, dates, blank and bad cells) is
// kept, so the rehearsal shows what ingest, submit and reconcile make of
// it. The bank details' own rules are not rehearsed: `batchd validate F`
// checks them, without sending anything.

// passingAccounts are the sandbox's accounts whose risk verification
// passes (its fixture table, internal/sandbox/fixtures.go: rows 8, 10,
// 16, 18, 20 and 22). Each distinct real account gets one, in turn.
var passingAccounts = []string{"1111000016", "1111000018", "1111000020", "1111000022", "1111000008", "1111000010"}

// The columns that hold bank details: a payment file's, and an onboarding
// file's.
var (
	routingColumns = []string{"bank_routing", "routing_number"}
	accountColumns = []string{"bank_account", "account_number"}
)

// Rehearsed is one of a person's files as the rehearsal drops it.
type Rehearsed struct {
	From     string // the person's file
	Name     string // its copy's name in the inbox
	Rows     int    // rows copied
	Accounts int    // distinct account numbers replaced
}

// dropFiles writes a substituted CSV copy of each file into inbox.
func dropFiles(files []string, inbox string) ([]Rehearsed, error) {
	if err := os.MkdirAll(inbox, 0o755); err != nil {
		return nil, err
	}
	var out []Rehearsed
	seen := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)) + ".csv"
		if seen[name] {
			return nil, fmt.Errorf("--file %s: another file is also copied as %s: give the files different names", f, name)
		}
		seen[name] = true
		r, err := substitute(f, filepath.Join(inbox, name))
		if err != nil {
			return nil, fmt.Errorf("--file %s: %w", f, err)
		}
		r.From, r.Name = f, name
		out = append(out, r)
	}
	return out, nil
}

// substitute reads the file at from and writes its copy at to.
func substitute(from, to string) (Rehearsed, error) {
	var r Rehearsed
	in, err := ingest.OpenInput(from, filepath.Base(from), sheet.Options{})
	if err != nil {
		return r, err
	}
	defer in.Close()
	src, err := in.Records(csvfile.Options{})
	if err != nil {
		return r, err
	}
	header, _, err := src.Header()
	if err != nil {
		return r, err
	}
	routing, account := columnsOf(header, routingColumns), columnsOf(header, accountColumns)
	f, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return r, err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	if err := w.Write(header); err != nil {
		return r, err
	}
	accounts := map[string]string{}
	for {
		rec, _, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return r, err
		}
		for _, i := range routing {
			if i < len(rec) && strings.TrimSpace(rec[i]) != "" {
				rec[i] = csvfile.SandboxRouting
			}
		}
		for _, i := range account {
			if i >= len(rec) || strings.TrimSpace(rec[i]) == "" {
				continue
			}
			test, ok := accounts[rec[i]]
			if !ok {
				test = passingAccounts[len(accounts)%len(passingAccounts)]
				accounts[rec[i]] = test
			}
			rec[i] = test
		}
		if err := w.Write(rec); err != nil {
			return r, err
		}
		r.Rows++
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return r, err
	}
	r.Accounts = len(accounts)
	return r, f.Close()
}

// columnsOf are the indexes of the header cells named one of names
// (matched as ingest matches them: case and surrounding spaces aside).
func columnsOf(header, names []string) []int {
	var idx []int
	for i, h := range header {
		for _, n := range names {
			if strings.EqualFold(strings.TrimSpace(h), n) {
				idx = append(idx, i)
			}
		}
	}
	return idx
}
