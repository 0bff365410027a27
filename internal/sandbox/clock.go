package sandbox

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/calendar"
)

// processingDays is how many full business days a check stays in_process.
const processingDays = 2

// maxAdvanceDays bounds one clock advance, to keep dates in range.
const maxAdvanceDays = 3650

// businessDays is the calendar checks move on by: batchd's own (Federal
// Reserve holidays), so that reconcile's count of a check's business days
// and the emulator's lifecycle agree. It is never changed after start.
var businessDays = calendar.FederalReserve()

// dueAt returns when a check created at created leaves in_process: at
// midnight UTC of the third business day after its creation day (UTC),
// that is once it is more than two business days old. Business days are
// Monday to Friday less the Federal Reserve's holidays (internal/calendar).
// Created on a Monday, a check moves on on Thursday; created on a Friday
// or over the weekend, on Wednesday; created on the Wednesday before
// Thanksgiving, on the Tuesday after. dueAt never decreases as created
// increases, which lets settle walk the creation-ordered slice from the
// front.
func dueAt(created time.Time) time.Time {
	return businessDays.AddBusinessDays(dateOf(created), processingDays+1)
}

// settle moves every in_process check whose processing time has passed at
// now to printed, or to failed when its risk is Fail, and returns the
// checks it moved, in creation order (nil for none). It must be called
// with ks.mu held, before any read or change of the key's checks, so that
// every answer sees the same lifecycle; handlers call it through
// Server.settle, which emits the webhook events of the moves. Because
// checks are kept in creation order and dueAt is monotone, due checks
// form a prefix of ks.checks; the cursor ks.settled makes the cost
// amortised constant per check.
func (ks *keyState) settle(now time.Time) (moved []*check) {
	for ks.settled < len(ks.checks) {
		c := ks.checks[ks.settled]
		if now.Before(c.due) {
			return moved
		}
		if c.status == statusInProcess {
			if c.verdict.Risk == riskFail {
				c.status = statusFailed
			} else {
				c.status = statusPrinted
			}
			moved = append(moved, c)
		}
		ks.settled++
	}
	return moved
}

// clockBody answers the clock endpoints.
type clockBody struct {
	Success bool   `json:"success"`
	Now     string `json:"now"`
}

// getClock answers the key's sandbox time.
func (s *Server) getClock(w http.ResponseWriter, _ *http.Request, ks *keyState, _ string) *apiError {
	writeJSON(w, http.StatusOK, clockBody{Success: true, Now: s.keyNow(ks).Format(timeLayout)})
	return nil
}

// advanceClock moves the key's sandbox clock advance_days days forward, or
// sets its day to date (forward or back, keeping the time of day), and
// applies the lifecycle at the new time.
func (s *Server) advanceClock(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	f := s.readFields(w, r)
	n, ok := f.integer("advance_days", 0, maxAdvanceDays)
	day, dated := f.date("date")
	if f.err != nil {
		return f.err
	}
	switch {
	case ok && dated:
		return badField("date", "give either advance_days or date, not both")
	case !ok && !dated:
		return badField("advance_days", "required")
	}
	ks.mu.Lock()
	if dated {
		if aerr := s.setDay(ks, day); aerr != nil {
			ks.mu.Unlock()
			return aerr
		}
	} else {
		ks.offsetDays.Add(n)
	}
	now := s.keyNow(ks)
	s.settle(ks, now)
	ks.mu.Unlock()
	writeJSON(w, http.StatusOK, clockBody{Success: true, Now: now.Format(timeLayout)})
	return nil
}

// depositBody answers /_sandbox/deposit.
type depositBody struct {
	Success   bool          `json:"success"`
	Deposited []string      `json:"deposited"`
	Skipped   []skippedItem `json:"skipped"`
}

// skippedItem is a check that could not be deposited, with its status.
type skippedItem struct {
	CheckID string `json:"check_id"`
	Status  string `json:"status"`
}

// deposit marks checks deposited, as the sandbox dashboard's deposit
// action does. Checks in_process or printed become deposited; others keep
// their status and are listed as skipped. An id the key does not own makes
// the whole request 404 with no change. Each deposit emits check.changed.
func (s *Server) deposit(w http.ResponseWriter, r *http.Request, ks *keyState, _ string) *apiError {
	p, aerr := readBody(w, r, s.opts.MaxBodyBytes)
	if aerr != nil {
		return aerr
	}
	ids, aerr := stringList(p, "check_ids")
	if aerr != nil {
		return aerr
	}
	now := s.lockSettled(ks)
	defer ks.mu.Unlock()
	for _, id := range ids {
		if ks.byID[id] == nil {
			return errorf(http.StatusNotFound, "check_ids: no check %.36q", id)
		}
	}
	out := depositBody{Success: true, Deposited: []string{}, Skipped: []skippedItem{}}
	for _, id := range ids {
		c := ks.byID[id]
		if c.status == statusInProcess || c.status == statusPrinted {
			c.status = statusDeposited
			out.Deposited = append(out.Deposited, id)
			s.emitCheck(ks, eventCheckChanged, c, now)
		} else {
			out.Skipped = append(out.Skipped, skippedItem{id, c.status})
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// stringList reads a non-empty list of strings: a JSON array, or repeated
// (or comma-separated) form values under name or name[].
func stringList(p params, name string) ([]string, *apiError) {
	var out []string
	if p.js != nil {
		v, ok := p.get(name)
		if !ok {
			return nil, badField(name, "required")
		}
		if err := json.Unmarshal(v.raw, &out); err != nil {
			return nil, badField(name, "must be an array of strings")
		}
	} else {
		for _, v := range append(p.form[name], p.form[name+"[]"]...) {
			for _, id := range strings.Split(v, ",") {
				out = append(out, strings.TrimSpace(id))
			}
		}
	}
	out = dedupe(out)
	if len(out) == 0 {
		return nil, badField(name, "required")
	}
	return out, nil
}

// dedupe drops empty and repeated entries, keeping first occurrences.
func dedupe(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := in[:0]
	for _, s := range in {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
