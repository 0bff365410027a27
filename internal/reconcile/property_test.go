package reconcile

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
)

// sums is what a finance clerk would compute from the status report by
// hand: counts and amounts per group.
type sums map[string]*tally

func (s sums) add(t testing.TB, key string, a money.Cents) {
	t.Helper()
	if s[key] == nil {
		s[key] = &tally{}
	}
	if err := s[key].add(a); err != nil {
		t.Fatal(err)
	}
}

// settlementAgrees proves that every line of the settlement equals the sum
// of the status report's lines it stands for, and that no group of the
// status report is left out.
func settlementAgrees(t testing.TB, statusPath, settlementPath string) {
	t.Helper()
	want := sums{}
	zero := func(key string) {
		if want[key] == nil {
			want[key] = &tally{}
		}
	}
	// Every outcome is said, at 0 when none, but cancelled: said only
	// where some checks were.
	said := slices.DeleteFunc(slices.Clone(payment.Outcomes), func(o payment.Outcome) bool { return o == payment.OutcomeCancelled })
	for _, o := range said {
		zero(SectionOutcomeTotal + "||||" + string(o) + "|")
	}
	for _, l := range table(t, statusPath) {
		a := mustCents(t, l["amount"])
		o := l["outcome"]
		if st := string(payment.Status(l["status"]).Outcome()); o != st && !(l["status"] == "void" && o == string(payment.OutcomeCancelled)) {
			t.Fatalf("status line %v: outcome %s, its status says %s", l, o, st)
		}
		want.add(t, SectionBatchStatus+"|"+l["batch"]+"|"+l["file"]+"|"+l["status"]+"|"+o+"|", a)
		for _, each := range said {
			zero(SectionBatchOutcome + "|" + l["batch"] + "|" + l["file"] + "||" + string(each) + "|")
		}
		want.add(t, SectionBatchOutcome+"|"+l["batch"]+"|"+l["file"]+"||"+o+"|", a)
		want.add(t, SectionStatusTotal+"|||"+l["status"]+"|"+o+"|", a)
		if l["status"] == "deposited" {
			want.add(t, SectionDeposited+"|||deposited|paid|"+l["deposited_on"], a)
		}
		want.add(t, SectionOutcomeTotal+"||||"+o+"|", a)
	}
	got := sums{}
	rows := readCSV(t, settlementPath)
	for _, r := range rows[1:] {
		key := strings.Join(r[:6], "|")
		if got[key] != nil {
			t.Fatalf("settlement line %q appears twice", key)
		}
		n, err := strconv.Atoi(r[6])
		if err != nil {
			t.Fatal(err)
		}
		got[key] = &tally{count: n, amount: mustCents(t, r[7])}
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] == nil || *got[k] != *want[k] {
			t.Errorf("settlement %q = %+v, status report sums to %+v", k, got[k], *want[k])
		}
	}
	for k := range got {
		if want[k] == nil {
			t.Errorf("settlement line %q has no status line behind it", k)
		}
	}
}

// TestSettlementEqualsStatusSums checks the settlement against the status
// report over many random ledgers of thousands of rows, with amounts from
// one cent to ten million, in every status and over many deposit dates.
func TestSettlementEqualsStatusSums(t *testing.T) {
	statuses := []payment.Status{"in_process", "in_review", "printed", "deposited", "deposited", "failed", "void", "deleted", ""}
	loc, err := time.LoadLocation("America/Chicago")
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(5) {
		rng := rand.New(rand.NewPCG(seed, 42))
		n := 2000 + rng.IntN(3000)
		lines := make([]statusLine, 0, n)
		for i := range n {
			k := payment.RowKey{Batch: uint64(1 + rng.IntN(7)), Line: uint32(2 + i)}
			amount := money.Cents(1 + rng.Int64N(1_000_000_000))
			if rng.IntN(10) == 0 {
				amount = money.Cents(1 + rng.IntN(100)) // cents that a float would mangle
			}
			seen := monday().Add(time.Duration(rng.IntN(30*24)) * time.Hour)
			rec := &record{key: k, checkID: fmt.Sprintf("id-%d", i), amount: amount,
				status: statuses[rng.IntN(len(statuses))], created: monday(), statusSeen: seen, depositedSeen: seen}
			lines = append(lines, statusLineOf(rec, fmt.Sprintf("file-%d.csv", k.Batch), loc))
		}
		dir := t.TempDir()
		st, err := settle(lines)
		if err != nil {
			t.Fatal(err)
		}
		statusPath, settlementPath := filepath.Join(dir, "status.csv"), filepath.Join(dir, "settlement.csv")
		each := func(add func(statusLine) error) error {
			for _, l := range lines {
				if err := add(l); err != nil {
					return err
				}
			}
			return nil
		}
		if _, _, err := writeStatus(statusPath, nil, each); err != nil {
			t.Fatal(err)
		}
		if _, err := writeSettlementFile(settlementPath, nil, st); err != nil {
			t.Fatal(err)
		}
		settlementAgrees(t, statusPath, settlementPath)
	}
}

// settle sums lines up, as the pass does line by line.
func settle(lines []statusLine) (*settlement, error) {
	s := newSettlement()
	for _, l := range lines {
		if err := s.add(l); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// TestSettlementOverflowIsAnError: sums are checked, never wrapped.
func TestSettlementOverflowIsAnError(t *testing.T) {
	lines := []statusLine{{batch: 1, amount: money.Cents(1 << 62), status: "printed"}, {batch: 1, amount: money.Cents(1 << 62), status: "printed"}}
	if _, err := settle(lines); err == nil {
		t.Fatal("an overflowing sum was accepted")
	}
}

// TestReconciledSettlementEqualsStatusSums runs reconcile itself on four
// days in a row, over a thousand or more checks with random amounts that
// the sandbox deposits, voids and fails at random, and checks every day's
// settlement against its status report and the status report against what
// the test created.
func TestReconciledSettlementEqualsStatusSums(t *testing.T) {
	ledgertest.Each(t, func(t *testing.T, backend string) {
		e := newEnv(t, backend, monday(), nil)
		rng := rand.New(rand.NewPCG(7, 11))
		amounts := map[string]money.Cents{} // check id -> amount created
		for b := range 3 {
			n := 200 + rng.IntN(150)
			pays := manyPayments(n)
			for i := range pays {
				pays[i].Amount = money.Cents(1 + rng.Int64N(100_000_000))
				if rng.IntN(20) == 0 {
					pays[i].BankAccount = "1111000002" // fails at the service
				}
			}
			batch := e.load(fmt.Sprintf("random-%d.csv", b), pays...)
			for line, id := range e.submitBatch(batch, 64) {
				amounts[id] = pays[line-2].Amount
			}
		}
		ids := slices.Sorted(maps.Keys(amounts))
		final := map[string]bool{}
		for day := 1; day <= 4; day++ {
			var dep []string
			for _, id := range ids {
				switch r := rng.IntN(10); {
				case final[id]:
				case r < 2:
					dep = append(dep, id)
				case r == 2 && day == 1: // only in_process checks can be voided
					e.void(id)
					final[id] = true
				}
			}
			for _, id := range dep {
				final[id] = true
			}
			if len(dep) > 0 {
				e.deposit(dep...)
			}
			e.advance(1)
			sum := e.run(Options{})
			if sum.StatusRows != len(amounts) || sum.Missing+sum.Unknown+sum.Mismatched != 0 {
				t.Fatalf("day %d: %+v", day, sum)
			}
			settlementAgrees(t, sum.Reports[0], sum.Reports[1])
			for _, l := range table(t, sum.Reports[0]) {
				if mustCents(t, l["amount"]) != amounts[l["check_id"]] {
					t.Fatalf("day %d: check %s shows %s, created with %s", day, l["check_id"], l["amount"], amounts[l["check_id"]])
				}
			}
		}
	})
}
