package metrics

import (
	"strings"
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

// Every final status of internal/payment has its series at 0 from New,
// and ChecksFinal counts final statuses only.
func TestChecksFinalByStatus(t *testing.T) {
	t.Parallel()
	var finals, have []string
	for _, s := range stringConsts(t, parseDir(t, "payment"), func(_, typ string) bool { return typ == "Status" }) {
		if payment.Status(s).Final() {
			finals = append(finals, s)
		}
	}
	for _, s := range finalStatuses {
		have = append(have, string(s))
	}
	sameSet(t, "batchd_checks_final_total{status}", have, finals)

	m := New()
	body := scrape(t, m)
	for _, s := range finalStatuses {
		if want := `batchd_checks_final_total{status="` + string(s) + `"} 0`; !strings.Contains(body, want+"\n") {
			t.Errorf("a fresh scrape lacks %q", want)
		}
	}
	m.ChecksFinal(map[payment.Status]int{payment.StatusFailed: 3, payment.StatusPrinted: 2})
	m.ChecksFinal(map[payment.Status]int{payment.StatusFailed: 1, payment.StatusVoid: 1})
	body = scrape(t, m)
	for _, want := range []string{`batchd_checks_final_total{status="failed"} 4`, `batchd_checks_final_total{status="void"} 1`,
		`batchd_checks_final_total{status="deposited"} 0`} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if strings.Contains(body, `status="printed"`) {
		t.Error("a status that is not final was counted")
	}
}
