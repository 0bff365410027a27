package sandbox

import (
	"net/http"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/calendar"
	"github.com/batchd/batchd/internal/clocktest"
)

func TestDueAt(t *testing.T) {
	cases := []struct{ created, due string }{
		{"2026-03-02 10:00", "2026-03-05"}, // Monday → Thursday
		{"2026-03-03 23:59", "2026-03-06"}, // Tuesday → Friday
		{"2026-03-04 00:00", "2026-03-09"}, // Wednesday → Monday
		{"2026-03-06 10:00", "2026-03-11"}, // Friday → Wednesday
		{"2026-03-07 10:00", "2026-03-11"}, // Saturday → Wednesday
		{"2026-03-08 10:00", "2026-03-11"}, // Sunday → Wednesday
		// Holidays do not count: Thanksgiving (Thu 26 Nov), Christmas
		// (Fri 25 Dec), New Year's Day (Fri 1 Jan), Independence Day 2027
		// observed on Monday 5 July.
		{"2026-11-24 10:00", "2026-11-30"}, // Tuesday before Thanksgiving → Monday
		{"2026-11-25 10:00", "2026-12-01"}, // Wednesday before Thanksgiving → Tuesday
		{"2026-12-24 10:00", "2026-12-30"}, // Christmas Eve → Wednesday
		{"2026-12-31 23:59", "2027-01-06"}, // New Year's Eve → Wednesday
		{"2027-07-01 10:00", "2027-07-07"}, // Thursday before the observed Monday → Wednesday
		// A Saturday holiday is not moved: Friday 3 July 2026 counts.
		{"2026-07-01 10:00", "2026-07-06"}, // Wednesday → Monday
	}
	for _, tc := range cases {
		c, _ := time.Parse("2006-01-02 15:04", tc.created)
		if got := dueAt(c).Format(dateLayout); got != tc.due {
			t.Errorf("dueAt(%s) = %s, want %s", tc.created, got, tc.due)
		}
	}
}

// settle relies on dueAt never decreasing as the creation time increases;
// and a check is never due before it is more than two business days old.
func TestDueAtIsMonotoneAndLateEnough(t *testing.T) {
	cal := calendar.FederalReserve()
	var last time.Time
	for c := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC); c.Year() < 2029; c = c.Add(5 * time.Hour) {
		due := dueAt(c)
		if due.Before(last) {
			t.Fatalf("dueAt(%v) = %v, before dueAt of an earlier time %v", c, due, last)
		}
		last = due
		if n := cal.BusinessDaysBetween(c, due); n != processingDays {
			t.Fatalf("dueAt(%v) = %v: %d whole business days in between, want %d", c, due, n, processingDays)
		}
		if h := due.Hour() + due.Minute(); h != 0 || !cal.IsBusinessDay(due) {
			t.Fatalf("dueAt(%v) = %v: not midnight of a business day", c, due)
		}
	}
}

// A check created the day before Thanksgiving stays in process over the
// holiday and the weekend, and is printed on the Tuesday.
func TestLifecycleOverHoliday(t *testing.T) {
	h := newHarness(t, Options{Date: clocktest.BeforeThanksgiving})
	id := h.create(keyA, nil)["check_id"].(string)
	h.advance(keyA, 5) // Monday 30 November: Friday and Monday have begun, not ended
	if got := h.status(keyA, id); got != statusInProcess {
		t.Fatalf("Monday after Thanksgiving: %s, want in_process", got)
	}
	h.advance(keyA, 1) // Tuesday 1 December
	if got := h.status(keyA, id); got != statusPrinted {
		t.Fatalf("Tuesday after Thanksgiving: %s, want printed", got)
	}
}

func TestLifecycleByClock(t *testing.T) {
	h := newHarness(t, Options{})
	pass := h.create(keyA, map[string]any{"bank_account": "1111000016"})["check_id"].(string)
	fail := h.create(keyA, map[string]any{"bank_account": "1111000005"})["check_id"].(string)
	risky := h.create(keyA, map[string]any{"bank_account": "1111000001"})["check_id"].(string)
	unknown := h.create(keyA, map[string]any{"bank_account": "987654321"})["check_id"].(string)

	h.advance(keyA, 2) // Wednesday: two business days old, not more
	for _, id := range []string{pass, fail, risky, unknown} {
		if got := h.status(keyA, id); got != statusInProcess {
			t.Fatalf("Wednesday: %s, want in_process", got)
		}
	}
	r := h.post("/_sandbox/clock", keyA, map[string]any{"advance_days": "1"}) // Thursday
	wantStatus(t, r, http.StatusOK)
	if r.body["now"] != "2026-03-05 10:00:00" || r.body["success"] != true {
		t.Errorf("clock answer %s", r.raw)
	}
	want := map[string]string{pass: statusPrinted, fail: statusFailed, risky: statusPrinted, unknown: statusFailed}
	for id, st := range want {
		if got := h.status(keyA, id); got != st {
			t.Errorf("Thursday: %s, want %s", got, st)
		}
	}
	list := h.get("/v1/check/list?direction=ASC", keyA)
	if got := dataField(list, "status"); got != "printed,failed,printed,failed" {
		t.Errorf("list statuses %s", got)
	}
	wantStatus(t, h.post("/v1/check/edit", keyA, with(map[string]any{"check_id": pass, "number": "1"})), http.StatusPaymentRequired)
	wantStatus(t, h.send(http.MethodDelete, "/v1/check/"+pass, keyA, typeJSON, ""), http.StatusPaymentRequired)
	if st := h.srv.KeyStats(keyA).ByStatus; st[statusPrinted] != 2 || st[statusFailed] != 2 {
		t.Errorf("KeyStats %v", st)
	}
}

func TestLifecycleOverWeekend(t *testing.T) {
	h := newHarness(t, Options{})
	h.advance(keyA, 4) // Friday
	id := h.create(keyA, nil)["check_id"].(string)
	h.advance(keyA, 4) // Tuesday
	if got := h.status(keyA, id); got != statusInProcess {
		t.Fatalf("Tuesday after a Friday: %s", got)
	}
	h.advance(keyA, 1) // Wednesday
	if got := h.status(keyA, id); got != statusPrinted {
		t.Fatalf("Wednesday after a Friday: %s", got)
	}
}

func TestLifecycleByRealClock(t *testing.T) {
	h := newHarness(t, Options{})
	id := h.create(keyA, nil)["check_id"].(string)
	h.clock.Add(72 * time.Hour) // the real clock passes Thursday too
	if got := h.status(keyA, id); got != statusPrinted {
		t.Fatalf("after three real days: %s", got)
	}
}

func TestClockValidation(t *testing.T) {
	h := newHarness(t, Options{})
	for _, body := range []map[string]any{{}, {"advance_days": -1}, {"advance_days": 1.5}, {"advance_days": "x"}, {"advance_days": 100000}} {
		wantField(t, h.post("/_sandbox/clock", keyA, body), "advance_days")
	}
	wantStatus(t, h.post("/_sandbox/clock", "", map[string]any{"advance_days": 1}), http.StatusUnauthorized)
	wantStatus(t, h.send(http.MethodPost, "/_sandbox/clock", keyA, typeForm, "advance_days=0"), http.StatusOK)
	if r := h.get("/_sandbox/clock", keyA); r.body["now"] != "2026-03-02 10:00:00" {
		t.Errorf("clock %s", r.raw)
	}
}

func TestDeposit(t *testing.T) {
	h := newHarness(t, Options{})
	inProcess := h.create(keyA, nil)["check_id"].(string)
	void := h.create(keyA, nil)["check_id"].(string)
	wantStatus(t, h.send(http.MethodDelete, "/v1/check/"+void, keyA, typeJSON, ""), http.StatusOK)
	old := h.create(keyA, nil)["check_id"].(string)
	bad := h.create(keyA, map[string]any{"bank_account": "1111000002"})["check_id"].(string)
	h.clock.Add(-time.Second) // a real clock stepping back must not reorder checks
	h.advance(keyA, 3)
	fresh := h.create(keyA, nil)["check_id"].(string)

	before := h.srv.KeyStats(keyA).ByStatus
	r := h.post("/_sandbox/deposit", keyA, map[string]any{"check_ids": []string{fresh, strSeq(36)}})
	wantStatus(t, r, http.StatusNotFound)
	if after := h.srv.KeyStats(keyA).ByStatus; after[statusDeposited] != 0 || after[statusInProcess] != before[statusInProcess] {
		t.Fatalf("a 404 deposit changed state: %v", after)
	}
	r = h.post("/_sandbox/deposit", keyA, map[string]any{"check_ids": []string{fresh, old, bad, void, fresh}})
	wantStatus(t, r, http.StatusOK)
	if got := len(r.body["deposited"].([]any)); got != 2 {
		t.Errorf("deposited %s", r.raw)
	}
	if got := len(r.body["skipped"].([]any)); got != 2 {
		t.Errorf("skipped %s", r.raw)
	}
	want := map[string]string{fresh: statusDeposited, old: statusDeposited, bad: statusFailed, void: statusVoid}
	for id, st := range want {
		if got := h.status(keyA, id); got != st {
			t.Errorf("%s, want %s", got, st)
		}
	}
	wantStatus(t, h.send(http.MethodDelete, "/v1/check/"+fresh, keyA, typeJSON, ""), http.StatusPaymentRequired)
	form := h.send(http.MethodPost, "/_sandbox/deposit", keyA, typeForm, "check_ids="+inProcess)
	wantStatus(t, form, http.StatusOK)
	if h.status(keyA, inProcess) != statusDeposited {
		t.Errorf("form deposit had no effect")
	}
	wantField(t, h.post("/_sandbox/deposit", keyA, map[string]any{"check_ids": []string{}}), "check_ids")
	wantField(t, h.post("/_sandbox/deposit", keyA, map[string]any{"check_ids": "x"}), "check_ids")
}

func strSeq(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a'
	}
	return string(b)
}

func TestEdit(t *testing.T) {
	h := newHarness(t, Options{})
	c := h.create(keyA, map[string]any{"label": "first", "phone": "555"})
	id := c["check_id"].(string)
	edit := func(changes map[string]any) resp {
		m := with(map[string]any{"check_id": id, "number": "42"})
		for k, v := range changes {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		return h.post("/v1/check/edit", keyA, m)
	}
	wantField(t, edit(map[string]any{"check_id": nil}), "check_id")
	wantField(t, edit(map[string]any{"check_id": "short"}), "check_id")
	wantField(t, edit(map[string]any{"number": nil}), "number")
	wantField(t, edit(map[string]any{"memo": strSeq(129)}), "memo")
	wantField(t, edit(map[string]any{"bank_account": nil}), "bank_account")
	wantField(t, edit(map[string]any{"authorization_date": "2026-03-03"}), "authorization_date")
	wantStatus(t, edit(map[string]any{"check_id": strSeq(36)}), http.StatusNotFound)
	wantStatus(t, edit(map[string]any{"fund_confirmation": true}), http.StatusOK)

	r := edit(map[string]any{"amount": "99.50", "label": "second", "bank_account": "1111000005", "verify_before_save": true})
	wantStatus(t, r, http.StatusOK)
	e := r.check()
	if e["check_id"] != id || e["number"] != "42" || e["amount"].(interface{ String() string }).String() != "99.50" ||
		e["label"] != "second" || e["phone"] != "" || e["date"] != c["date"] || e["authorization_date"] != "2026-03-02" {
		t.Errorf("edited check %s", r.raw)
	}
	if e["basic_verification"].(map[string]any)["risk_bv"] != "Fail" || e["funds_confirmation"] == nil {
		t.Errorf("verification not recomputed: %s", r.raw)
	}
	if got := h.get("/v1/check/list?label=first", keyA).list()["total"]; got != "0" {
		t.Errorf("old label still indexed: %v", got)
	}
	if got := dataIDs(h.get("/v1/check/list?label=second", keyA)); len(got) != 1 || got[0] != id {
		t.Errorf("new label not indexed: %v", got)
	}
	h.advance(keyA, 3)
	if got := h.status(keyA, id); got != statusFailed {
		t.Errorf("edited to a failing account, status %s", got)
	}
	basic := h.create(keyBasic, nil)["check_id"].(string)
	r = h.post("/v1/check/edit", keyBasic, with(map[string]any{"check_id": basic, "number": "1", "fund_confirmation": true}))
	wantStatus(t, r, http.StatusForbidden)
}
