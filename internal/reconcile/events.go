package reconcile

import (
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// UnknownEvent is what the ledger keeps of a webhook event about a check
// that no row owned when the event arrived.
type UnknownEvent struct {
	CheckID string
	Name    string         // the event's name, such as "check.created"
	Status  payment.Status // the status the event carried; may be empty
	At      time.Time      // when it happened, or when it arrived if it did not say
}

// EventSource lists the webhook events about checks no row owned, at or
// after since. With webhooks, it is how a run that does not list the
// window learns of checks created outside batchd.
type EventSource interface {
	UnknownEvents(since time.Time) ([]UnknownEvent, error)
}

// heardOf notes, as unknown checks, those that webhook events named since
// since. A check a row owns by now is not unknown: submit may have
// recorded its create after the event, or the walk bound it to a row in
// doubt. A check the walk listed is already judged, with more than an
// event says. It returns how many it added.
func (m *matcher) heardOf(src EventSource, since time.Time) (int, error) {
	evs, err := src.UnknownEvents(since)
	if err != nil {
		return 0, fmt.Errorf("read webhook events of unknown checks: %w", err)
	}
	last := map[string]UnknownEvent{} // check id -> its latest event
	var ids []string
	for _, ev := range evs {
		if ev.CheckID == "" {
			continue
		}
		prev, ok := last[ev.CheckID]
		if !ok {
			ids = append(ids, ev.CheckID)
		}
		if !ok || !ev.At.Before(prev.At) {
			last[ev.CheckID] = ev
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	owners, err := m.db.CheckOwners(ids)
	if err != nil {
		return 0, fmt.Errorf("look up the owners of %d checks heard of: %w", len(ids), err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, id := range ids {
		if _, owned := owners[id]; owned || m.unknown[id] != nil || m.explained[id] {
			continue
		}
		ev := last[id]
		m.unknown[id] = &payment.Check{ID: id, Status: ev.Status}
		m.heard[id] = ev
		n++
	}
	return n, nil
}

// heardDetail is the exception detail of an unknown check known only from
// a webhook event: it has no label, number or amount to compare.
func heardDetail(ev UnknownEvent) string {
	when := "at an unknown time"
	if !ev.At.IsZero() {
		when = ev.At.UTC().Format(time.DateTime) + " UTC"
	}
	return fmt.Sprintf("heard of by webhook (%s, %s), not listed in this run; no row of batchd owns it", ev.Name, when)
}

// dayStart is the first instant of d at the service (UTC).
func dayStart(d Date) time.Time { return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC) }
