package reconcile

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/payment"
)

// TestUnpaidChecksAreExceptionsForTheirDays: a returned check and one
// batchd voided for its risk result are exceptions with the service's
// reason and the way forward, in every daily report for
// Options.ExceptionDays from the day batchd recorded them so, also once
// the run's window has moved past them; then they leave the report.
func TestUnpaidChecksAreExceptionsForTheirDays(t *testing.T) {
	e := newEnv(t, "bbolt", monday(), nil)
	verified := func(p payment.Payment) payment.Payment { // the service then answers with its risk and fund results
		p.VerifyBeforeSave, p.FundConfirmation = true, true
		return p
	}
	b := e.load("payroll.csv", verified(pay(1234, 2, "Bad Account")), verified(pay(5000, 16, "Risky Payee")), verified(pay(7000, 16, "Paid Payee")))
	keys := e.keys(b)
	ids := map[int]string{}
	for i, k := range keys {
		row, err := e.db.Send(k)
		if err != nil {
			t.Fatal(err)
		}
		c, err := e.api.CreateCheck(context.Background(), echeck.RequestOf(row)) // every field, as submit sends
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.Created(k, payment.ResultOf(c.Domain(), "")); err != nil {
			t.Fatal(err)
		}
		ids[i] = c.CheckID
	}
	// The file's receipt is delivered, then, still on Monday, batchd
	// voids the second check for its risk result, as submit does with
	// submit.void_on_risk.
	if err := e.db.ResultsReported(b.ID); err != nil {
		t.Fatal(err)
	}
	e.void(ids[1])
	if err := e.db.Voided(keys[1], "risk result Risky is in submit.void_on_risk"); err != nil {
		t.Fatal(err)
	}
	e.deposit(ids[2])
	e.advance(3) // Thursday: the first check fails (fixture 2)

	thursday := Date{2026, 3, 5}
	sum := e.run(Options{})
	if sum.Returned != 1 || sum.Voided != 1 ||
		!reflect.DeepEqual(sum.Final, map[payment.Status]int{payment.StatusFailed: 1, payment.StatusDeposited: 1}) ||
		!reflect.DeepEqual(sum.FinalBatches, []uint64{b.ID}) {
		t.Fatalf("thursday summary %+v", sum)
	}
	excs := table(t, e.reportPath("exceptions", thursday))
	if len(excs) != 2 {
		t.Fatalf("exceptions %v", excs)
	}
	ret, void := excs[0], excs[1]
	if ret["kind"] != KindReturned || ret["check_id"] != ids[0] || ret["status"] != "failed" || ret["amount"] != "12.34" ||
		!strings.Contains(ret["detail"], "did not reach the payee; risk result Fail; fund confirmation NonParticipatingBank; failed since 2026-03-05 10:00:00") ||
		ret["action"] != actionUnpaid {
		t.Errorf("returned check: %v", ret)
	}
	if void["kind"] != KindVoided || void["check_id"] != ids[1] || void["status"] != "void" ||
		!strings.Contains(void["detail"], "voided by batchd: risk result Risky is in submit.void_on_risk; the payee is not paid") ||
		!strings.Contains(void["detail"], "void since 2026-03-02 10:00:00") || void["action"] != actionUnpaid {
		t.Errorf("voided check: %v", void)
	}

	// The receipt is written again (jobs does it, once the run is over):
	// no check has ended since, so no later run names the batch.
	e.clock.add(time.Second)
	if err := e.db.ResultsReported(b.ID); err != nil {
		t.Fatal(err)
	}

	// Friday: every check is final and the window has moved past
	// Monday's checks; with the default seven days both are still listed.
	e.advance(1)
	friday := Date{2026, 3, 6}
	sum = e.run(Options{})
	if sum.Window.From != (Date{2026, 3, 5}) || sum.Returned != 1 || sum.Voided != 1 || len(sum.Final) != 0 || len(sum.FinalBatches) != 0 {
		t.Fatalf("friday summary %+v", sum)
	}
	if excs := table(t, e.reportPath("exceptions", friday)); len(excs) != 2 || excs[0]["check_id"] != ids[0] || excs[1]["check_id"] != ids[1] {
		t.Fatalf("friday exceptions %v", excs)
	}
	// Kept for two days, the return (recorded Thursday) is in Friday's
	// report and the void (recorded Monday) no longer; for one day,
	// neither is.
	sum = e.run(Options{ExceptionDays: 2})
	if excs := table(t, e.reportPath("exceptions", friday)); sum.Returned != 1 || sum.Voided != 0 || len(excs) != 1 || excs[0]["check_id"] != ids[0] {
		t.Fatalf("two days: %+v %v", sum, excs)
	}
	sum = e.run(Options{ExceptionDays: 1})
	if excs := table(t, e.reportPath("exceptions", friday)); sum.Returned != 0 || sum.Voided != 0 || len(excs) != 0 {
		t.Fatalf("one day: %+v %v", sum, excs)
	}
}
