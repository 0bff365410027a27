package sandbox

import (
	"math"
	"net/http"
	"strconv"
	"strings"
)

// webhookFaultsBody answers POST /_sandbox/webhooks/faults.
type webhookFaultsBody struct {
	Success     bool    `json:"success"`
	DropRate    float64 `json:"drop_rate"`
	DupRate     float64 `json:"dup_rate"`
	ReorderRate float64 `json:"reorder_rate"`
}

// setWebhookFaults changes the delivery faults of the whole sandbox while
// it runs ({"drop_rate", "dup_rate", "reorder_rate"}, each 0 to 1; a rate
// left out keeps its value), so that one rehearsal can first deliver
// cleanly and then lose, repeat and reorder deliveries, against the same
// checks. It answers the rates now in force.
func (s *Server) setWebhookFaults(w http.ResponseWriter, r *http.Request, _ *keyState, _ string) *apiError {
	f := s.readFields(w, r)
	rate := func(name string) (float64, bool) {
		v, ok := f.raw(name, true)
		if !ok || strings.TrimSpace(v) == "" {
			return 0, false
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(x) || x < 0 || x > 1 {
			f.fail(name, "must be a number between 0 and 1")
			return 0, false
		}
		return x, true
	}
	drop, setDrop := rate("drop_rate")
	dup, setDup := rate("dup_rate")
	reorder, setReorder := rate("reorder_rate")
	if f.err != nil {
		return f.err
	}
	h := s.hooks
	h.rngMu.Lock()
	if setDrop {
		h.drop = drop
	}
	if setDup {
		h.dup = dup
	}
	if setReorder {
		h.reorder = reorder
	}
	out := webhookFaultsBody{Success: true, DropRate: h.drop, DupRate: h.dup, ReorderRate: h.reorder}
	h.rngMu.Unlock()
	s.log.Info("sandbox webhook faults changed", "drop_rate", out.DropRate, "dup_rate", out.DupRate, "reorder_rate", out.ReorderRate)
	writeJSON(w, http.StatusOK, out)
	return nil
}
