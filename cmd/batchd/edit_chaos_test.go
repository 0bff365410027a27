package main

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/state"
	"github.com/batchd/batchd/internal/testsshd"
)

// An edit file applied by `batchd ingest` processes SIGKILLed while they
// edit, against a sandbox that loses a third of its answers (edits
// included) and fails a tenth of its requests, exact and --quirks, on
// both ledger backends: every check the file names that was in process
// ends showing exactly the line's new amount and memo and is reported
// "edited" (never "refused", which a re-run that did not recognise its own
// lost edit would say), its row follows it with one edit step only, every
// deposited one keeps its values and is "too_late", and the checks the
// file does not name are untouched. The sandbox keeps no count of edit
// requests, so "no edit applied twice in a way that changes the outcome"
// is checked by the final values: each check shows its line's values
// after, and the row records the edit once.
func TestEditChaos(t *testing.T) {
	t.Parallel() // mostly waiting (the sandbox's latency, leases): beside the other waiting tests
	onEveryLedger(t, editChaos)
}

func editChaos(t *testing.T, seed uint64, ledger chaosLedger, quirks bool) {
	const (
		key                      = "sk_test_edit_0123456789abcdef0"
		rows, deposited, untouch = 24, 5, 4
		edited                   = rows - untouch
	)
	rng := rand.New(rand.NewPCG(seed, 2))
	// Faults as in cancelChaos: the deposit control is exempt; 25ms a
	// request gives the kills lines to land between.
	url := faultySandbox(t, key, seed, quirks)
	var file strings.Builder
	file.WriteString("label,number,amount,memo,name,email,bank_routing,bank_account\n")
	for i := range rows {
		fmt.Fprintf(&file, "edt,%04d,%d.%02d,inv %d,Payee %d,p@example.com,999900001,1111000016\n", 100+i, 10+i, i, i, i)
	}
	ingestInto(t, ledger, map[string]string{"week.csv": file.String()})
	sshd := testsshd.Start(t)
	run := processRunner(t, ledger, url, key, sshd)
	submitUntilDone(t, run)
	all := ledgerRows(t, ledger)
	if len(all) != rows {
		t.Fatalf("%d rows", len(all))
	}
	var depositIDs []string
	for _, r := range all[edited-deposited : edited] {
		depositIDs = append(depositIDs, r.CheckID)
	}
	sandboxPost(t, url, key, "/_sandbox/deposit", map[string]any{"check_ids": depositIDs})

	// Each named check: its amount plus 7.00 and a corrected memo.
	edits := "check_id,amount,memo,bank_routing,bank_account\n"
	newAmount := func(r *payment.Row) money.Cents { return r.Payment.Amount + 700 }
	newMemo := func(r *payment.Row) string { return r.Payment.Memo + " (corrected)" }
	for _, r := range all[:edited] {
		edits += fmt.Sprintf("%s,%s,%s,999900001,1111000016\n", r.CheckID, newAmount(r), newMemo(r))
	}
	dropFile(t, sshd, "edit.csv", edits)
	sha := fmt.Sprintf("%x", sha256.Sum256([]byte(edits)))
	kills, midFile := applyWithKills(t, rng, ledger, run, "edit.csv", edited, func(db *state.DB) (int, error) {
		lines, err := payment.EditLines.List(db, sha)
		return len(lines), err
	})

	matches, _ := filepath.Glob(filepath.Join(sshd.Root, "outbox", "edit*.results.csv"))
	if len(matches) != 1 {
		t.Fatalf("results reports %v", matches)
	}
	recs := readReport(t, matches[0])
	got := map[string]string{}
	for _, rec := range recs[1:] {
		got[rec[slices.Index(recs[0], "check_id")]] = rec[slices.Index(recs[0], "result")]
	}
	after := ledgerRows(t, ledger)
	c := client(t, url, key)
	for i, r := range all {
		want, status, amount, memo, steps := "edited", payment.StatusInProcess, newAmount(r), newMemo(r), 1
		switch {
		case i >= edited:
			want, amount, memo, steps = "", r.Payment.Amount, r.Payment.Memo, 0
		case i >= edited-deposited:
			want, status, amount, memo, steps = "too_late", payment.StatusDeposited, r.Payment.Amount, r.Payment.Memo, 0
		}
		if got[r.CheckID] != want {
			t.Errorf("row %d: result %q, want %q", i, got[r.CheckID], want)
		}
		ck, err := getCheck(c, r.CheckID)
		// The memo is compared where the service echoes it (quirks may not).
		if err != nil || ck.Status != string(status) || ck.Amount != amount || ck.Memo != "" && ck.Memo != memo {
			t.Errorf("row %d's check: %+v %v, want %s %s %q", i, ck, err, status, amount, memo)
		}
		row := after[i]
		if row.CheckID != r.CheckID || row.Payment.Amount != amount || row.Payment.Memo != memo || editSteps(row) != steps {
			t.Errorf("row %d in the ledger: %s %q with %d edit steps, want %s %q with %d",
				i, row.Payment.Amount, row.Payment.Memo, editSteps(row), amount, memo, steps)
		}
	}
	t.Logf("%d SIGKILLs, %d of them while the file's lines were being edited", kills, midFile)
	if midFile == 0 {
		t.Fatalf("no SIGKILL landed while the edit file's lines were being edited (%d kills): the test proves too little", kills)
	}
}

// ledgerRows are the rows of the ledger's first batch, in file order.
func ledgerRows(t *testing.T, ledger chaosLedger) []*payment.Row {
	t.Helper()
	db := ledger.open(t)
	defer db.Close()
	bs, err := db.Batches()
	if err != nil || len(bs) == 0 {
		t.Fatalf("batches: %v %v", bs, err)
	}
	var all []*payment.Row
	if err := db.Rows(bs[0].ID, func(r *payment.Row) (bool, error) { all = append(all, r); return true, nil }); err != nil {
		t.Fatal(err)
	}
	return all
}

// editSteps counts the steps of r's history that an edit file made.
func editSteps(r *payment.Row) int {
	n := 0
	for _, s := range r.History {
		if strings.HasPrefix(s.Note, payment.EditedNote) {
			n++
		}
	}
	return n
}
