package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/batchd/batchd/internal/calendar"
	"github.com/batchd/batchd/internal/ingest"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/paymentlink"
)

// steps runs the job the way a night of the daemon would, narrating.
func steps(ctx context.Context, out io.Writer, je *jobs.Env, sbURL, inbox string, samples bool) error {
	fmt.Fprintln(out, "1. Ingest: pick up the files in the inbox, validate every row")
	outcomes, err := je.Ingest(ctx)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, o := range outcomes {
		fmt.Fprintf(tw, "   %s\t%d rows\t%d valid\t%d rejected\t%s\n", o.File, o.Rows, o.Valid, o.Rejected, o.Outcome)
	}
	tw.Flush()
	for _, o := range outcomes {
		if o.Rejected > 0 || !o.Outcome.Accepted() {
			// Why, and where the rows' findings are (the rejects report
			// beside the results in the outbox).
			fmt.Fprintf(out, "   %s: %s\n", o.File, o.Detail)
		}
	}

	fmt.Fprintln(out, "2. Submit: send each valid row as an eCheck, exactly once")
	sum, delivered, err := je.Submit(ctx)
	if err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	fmt.Fprintf(out, "   %d checks created, %d refused by the API, %d voided for their risk result (submit.void_on_risk: [Fail])\n",
		sum.Created, sum.Rejected, sum.Voided)
	if o := sum.Sources; o.Created+o.Rejected > 0 {
		fmt.Fprintf(out, "   then the funding-source file through the ACH API: %d customers created, %d bank accounts linked, %d refused\n",
			o.Customers, o.Created, o.Rejected)
	}
	for _, d := range delivered {
		fmt.Fprintf(out, "   results report: %s\n", d)
	}

	ids, err := depositable(je.DB)
	if err != nil {
		return err
	}
	now := je.Now().UTC()
	days := daysUntilDue(now)
	fmt.Fprintf(out, "3. At the service: deposit %d checks (the dashboard's deposit action), then let 3 business days pass\n", len(ids))
	fmt.Fprintf(out, "   %d calendar days, %s to %s: checks move on once more than %d business days old (weekends and Federal Reserve holidays do not count)\n",
		days, now.Format(dayLayout), now.AddDate(0, 0, days).Format(dayLayout), processingDays)
	if len(ids) > 0 { // a rehearsed file may have made no check
		if err := sandboxPost(ctx, sbURL, "/_sandbox/deposit", map[string]any{"check_ids": ids}); err != nil {
			return fmt.Errorf("deposit: %w", err)
		}
	}
	if samples {
		if err := cancelStep(ctx, out, je, inbox, ids); err != nil {
			return err
		}
		if err := editStep(ctx, out, je, inbox, ids); err != nil {
			return err
		}
		if err := payOneLink(ctx, out, je, sbURL); err != nil {
			return err
		}
	}
	if err := sandboxPost(ctx, sbURL, "/_sandbox/clock", map[string]any{"advance_days": days}); err != nil {
		return fmt.Errorf("advance clock: %w", err)
	}

	fmt.Fprintln(out, "4. Reconcile: list the checks, record each status, write the reports")
	rs, err := je.Reconcile(ctx, nil)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	fmt.Fprintf(out, "   %d checks listed, %d status changes recorded, %d exceptions\n",
		rs.ChecksSeen, rs.StatusChanges, rs.Unknown+rs.Missing+rs.Mismatched+rs.Stuck+rs.InDoubt+rs.Returned+rs.Voided)
	for _, in := range rs.Steps {
		fmt.Fprintf(out, "   %s (money coming in, in the %s report)\n", in.Words, in.Name)
	}
	for _, r := range rs.Reports {
		fmt.Fprintf(out, "   report: %s\n", r)
	}
	if err := stillInProcess(out, je.DB); err != nil {
		return err
	}
	return summary(out, je.DB)
}

// processingDays is how many whole business days the service keeps a
// check in process (the emulator's lifecycle, internal/sandbox).
const processingDays = 2

// dayLayout is how the demo names a day.
const dayLayout = "Mon 2 Jan 2006"

// daysUntilDue is how many calendar days must pass from now for a check
// created at now (or before) to have left in process: the days to the
// start of the third business day after today, on the calendar the
// service and batchd share. It is 3 from a Monday, 5 from a Friday, 6
// from the day before Thanksgiving.
func daysUntilDue(now time.Time) int {
	due := calendar.FederalReserve().AddBusinessDays(now, processingDays+1)
	days := 0
	for now.AddDate(0, 0, days).Before(due) {
		days++
	}
	return days
}

// stillInProcess names the checks reconcile still saw in process, with
// why: none should be, as the demo lets enough business days pass; if
// one is, the person sees which and what it waits for rather than a
// silent count.
func stillInProcess(out io.Writer, db payment.Ledger) error {
	var keys []string
	err := db.TrackedRows(func(r *payment.Row) (bool, error) {
		if r.CheckStatus == "in_process" {
			keys = append(keys, r.CheckID)
		}
		return true, nil
	})
	if err != nil || len(keys) == 0 {
		return err
	}
	fmt.Fprintf(out, "   %d checks still in process (%s): the service moves a check on only after %d whole business days; "+
		"weekends and Federal Reserve holidays do not count\n", len(keys), strings.Join(keys, ", "), processingDays)
	return nil
}

// depositable picks every other check still in process, oldest first.
func depositable(db payment.Ledger) ([]string, error) {
	var ids []string
	i := 0
	err := db.TrackedRows(func(r *payment.Row) (bool, error) {
		if r.CheckStatus == "in_process" {
			if i%2 == 0 {
				ids = append(ids, r.CheckID)
			}
			i++
		}
		return true, nil
	})
	return ids, err
}

// summary prints checks and amounts by status, then the money paid, on
// its way and not paid (payment.Row.Outcome), in exact cents: never one
// total of every status, which would read as money paid.
func summary(out io.Writer, db payment.Ledger) error {
	type tally struct {
		n   int
		sum money.Cents
	}
	add := func(t *tally, a money.Cents) error {
		s, err := t.sum.Add(a)
		t.n, t.sum = t.n+1, s
		return err
	}
	by, outcome := map[string]*tally{}, map[payment.Outcome]*tally{}
	for _, o := range payment.Outcomes {
		outcome[o] = &tally{}
	}
	bs, err := db.Batches()
	if err != nil {
		return err
	}
	for _, b := range bs {
		if !b.Kind.Payments() {
			continue
		}
		err := db.Rows(b.ID, func(r *payment.Row) (bool, error) {
			status := r.ReportStatus()
			if by[status] == nil {
				by[status] = &tally{}
			}
			if err := add(by[status], r.Payment.Amount); err != nil {
				return false, err
			}
			return true, add(outcome[r.Outcome()], r.Payment.Amount)
		})
		if err != nil {
			return err
		}
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintln(out, "\nChecks by status:")
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	for _, k := range keys {
		fmt.Fprintf(tw, "   %s\t%d\t%s\t\n", k, by[k].n, by[k].sum)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nMoney by outcome:")
	for _, o := range payment.Outcomes {
		fmt.Fprintf(tw, "   %s\t%d\t%s\t%s\n", outcomeLabel[o], outcome[o].n, outcome[o].sum, outcomeNote[o])
	}
	return tw.Flush()
}

// outcomeLabel and outcomeNote word each outcome for the demo's summary.
var (
	outcomeLabel = map[payment.Outcome]string{payment.OutcomePaid: "paid", payment.OutcomeOnItsWay: "on its way",
		payment.OutcomeNotPaid: "not paid", payment.OutcomeCancelled: "cancelled"}
	outcomeNote = map[payment.Outcome]string{
		payment.OutcomePaid:      "   deposited",
		payment.OutcomeOnItsWay:  "   in process, in review, printed: not final yet",
		payment.OutcomeNotPaid:   "   failed, void, deleted, rejected: the payee is still owed",
		payment.OutcomeCancelled: "   voided on a cancel file's request: no one is owed",
	}
)

// cancelStep shows a cancel file: finance stops one check still in
// process, named by its payment file and line, and one already deposited,
// named by its id, which is too late to void.
func cancelStep(ctx context.Context, out io.Writer, je *jobs.Env, inbox string, deposited []string) error {
	var file strings.Builder
	file.WriteString("check_id,file,line,reason\n")
	err := je.DB.TrackedRows(func(r *payment.Row) (bool, error) {
		if r.CheckStatus != payment.StatusInProcess || slices.Contains(deposited, r.CheckID) {
			return true, nil
		}
		b, err := je.DB.Batch(r.Key.Batch)
		if err != nil {
			return false, err
		}
		fmt.Fprintf(&file, ",%s,%d,sent by mistake\n", b.File, r.Key.Line)
		return false, nil
	})
	if err != nil || len(deposited) == 0 {
		return err
	}
	fmt.Fprintf(&file, "%s,,,paid twice\n", deposited[0])
	outcomes, err := dropAndIngest(ctx, out, je, inbox, "cancel-checks.csv", file.String(),
		"a cancel file stops two checks: one not yet printed, one already deposited")
	if err != nil {
		return err
	}
	for _, o := range outcomes {
		fmt.Fprintf(out, "   %s: %d voided, %d not (too late to void: the money has left); each line in %s.results.csv\n",
			o.File, o.Valid, o.Rejected, o.File)
	}
	return nil
}

// editStep shows an edit file: finance corrects the amount of one check
// still in process (not deposited, not the one the cancel voided). The
// line carries the check's bank details in full, as the service's edit
// needs them: the demo's are the sandbox's passing accounts, found again
// by the last four digits batchd kept.
func editStep(ctx context.Context, out io.Writer, je *jobs.Env, inbox string, deposited []string) error {
	var line string
	var before, after money.Cents
	err := je.DB.TrackedRows(func(r *payment.Row) (bool, error) {
		p := &r.Payment
		account := passingAccount(p.AccountLast4)
		if r.CheckStatus != payment.StatusInProcess || slices.Contains(deposited, r.CheckID) || p.Token != "" || account == "" {
			return true, nil
		}
		var err error
		before = p.Amount
		if after, err = before.Add(2500); err != nil {
			return false, err
		}
		line = fmt.Sprintf("%s,%s,%s,%s\n", r.CheckID, after, p.BankRouting, account)
		return false, nil
	})
	if err != nil || line == "" {
		return err
	}
	outcomes, err := dropAndIngest(ctx, out, je, inbox, "edit-checks.csv", "check_id,amount,bank_routing,bank_account\n"+line,
		"an edit file corrects the amount of a check not yet printed")
	if err != nil {
		return err
	}
	for _, o := range outcomes {
		fmt.Fprintf(out, "   %s: %d edited (amount %s → %s); the line in %s.results.csv\n", o.File, o.Valid, before, after, o.File)
	}
	return nil
}

// dropAndIngest puts a file named name in the inbox, says what it does
// (what) and ingests it: the demo's files that act on checks already made
// (cancels, edits) arrive after submit, as finance's would.
func dropAndIngest(ctx context.Context, out io.Writer, je *jobs.Env, inbox, name, body, what string) ([]ingest.Outcome, error) {
	if err := os.WriteFile(filepath.Join(inbox, name), []byte(body), 0o600); err != nil {
		return nil, fmt.Errorf("drop %s: %w", name, err)
	}
	fmt.Fprintf(out, "   %s:\n", what)
	outcomes, err := je.Ingest(ctx)
	if err != nil {
		return nil, fmt.Errorf("ingest %s: %w", name, err)
	}
	return outcomes, nil
}

// passingAccount is the sandbox passing account whose last four digits
// are last4, or "" if none is.
func passingAccount(last4 string) string {
	for _, a := range passingAccounts {
		if last4 != "" && strings.HasSuffix(a, last4) {
			return a
		}
	}
	return ""
}

// payOneLink shows a payment link paid: a customer pays the first link of
// the sample invoices through the sandbox's pay-through-link control.
func payOneLink(ctx context.Context, out io.Writer, je *jobs.Env, sbURL string) error {
	links, err := paymentlink.Lines(je.DB, "")
	if err != nil || len(links) == 0 || links[0].Token == "" {
		return err
	}
	fmt.Fprintf(out, "   a customer pays invoice %s through its payment link\n", links[0].Invoice)
	return sandboxPost(ctx, sbURL, "/_sandbox/paymentlink/pay", map[string]any{"checkout_token": links[0].Token})
}
