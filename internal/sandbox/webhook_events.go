package sandbox

import (
	"encoding/json"
	"net/url"
	"time"
)

// Webhook event names. The check events are those public eCheck clients
// receive; a void (DELETE /v1/check/{id}) is check.deleted, its data the
// check with status void. The funding-source events are those public
// ACH clients receive.
const (
	eventCheckCreated       = "check.created"
	eventCheckChanged       = "check.changed"
	eventCheckDeleted       = "check.deleted"
	eventSourceAdded        = "funding-source.added"
	eventSourceVerified     = "funding-source.verified"
	eventSourceVerifyFailed = "funding-source.verification-failed"
	eventSourceDeleted      = "funding-source.deleted"
	eventSourceMadePrimary  = "funding-source.made-primary"
)

// eventBody is a JSON webhook body.
type eventBody struct {
	Event     string `json:"event"`
	Data      any    `json:"data"`
	Timestamp string `json:"timestamp"`
}

// encodeEvent builds the request body of event name with data at the
// key's sandbox time now: JSON, or a form with data as JSON text.
func encodeEvent(name string, data any, now time.Time, form bool) (*hookEvent, error) {
	ts := now.UTC().Format(timeLayout)
	if form {
		b, err := json.Marshal(data)
		if err != nil {
			return nil, err
		}
		body := "event=" + url.QueryEscape(name) + "&data=" + url.QueryEscape(string(b)) + "&timestamp=" + url.QueryEscape(ts)
		return &hookEvent{name: name, ctype: typeForm, body: []byte(body)}, nil
	}
	b, err := json.Marshal(eventBody{name, data, ts})
	if err != nil {
		return nil, err
	}
	return &hookEvent{name: name, ctype: typeJSON, body: b}, nil
}

// emitCheck queues event name for check c of ks, as GET /v1/check
// would answer it now. It must be called with ks.mu held, right after
// the change, so that events leave in the order of the changes.
func (s *Server) emitCheck(ks *keyState, name string, c *check, now time.Time) {
	s.emit(ks, name, s.hooks.form, now, func() any { return s.render(c) })
}

// emitSource queues event name for src, as GET /ach/v2/funding-source
// would answer it now. It must be called with s.ach.mu held.
func (s *Server) emitSource(src *fundingSource, name string) {
	ks := src.cust.owner
	s.emit(ks, name, false, s.keyNow(ks), func() any { return s.viewSource(src, false) })
}

// settle applies the key's lifecycle at now (keyState.settle) and emits
// check.changed for every check it moved on. ks.mu must be held.
func (s *Server) settle(ks *keyState, now time.Time) {
	for _, c := range ks.settle(now) {
		s.emitCheck(ks, eventCheckChanged, c, now)
	}
}

// emit queues an event for the key's endpoint, if it has one that is
// not disabled; data is rendered only then. The event's faults are
// drawn here, in the order of the key's events: dropped, doubled, or
// held back until the key's next event is queued (then it goes after
// that one) or webhookHold passes.
func (s *Server) emit(ks *keyState, name string, form bool, now time.Time, data func() any) {
	hk := &ks.hook
	hk.mu.Lock()
	defer hk.mu.Unlock()
	if hk.url == "" || hk.disabled {
		return
	}
	ev, err := encodeEvent(name, data(), now, form)
	if err != nil {
		s.log.Error("sandbox webhook event not encoded", "event", name, "error", err)
		return
	}
	h := s.hooks
	h.events.Add(1)
	drop, dup, hold := h.draw(hk.held == nil)
	if drop {
		h.dropped.Add(1)
		s.log.Info("sandbox fault injected", "fault", "webhook drop", "event", name, "key", redactKey(ks))
		return
	}
	batch := []*hookEvent{ev}
	if dup {
		h.duplicated.Add(1)
		s.log.Info("sandbox fault injected", "fault", "webhook duplicate", "event", name, "key", redactKey(ks))
		batch = append(batch, ev)
	}
	h.add(len(batch))
	if hold {
		h.reordered.Add(1)
		s.log.Info("sandbox fault injected", "fault", "webhook reorder", "event", name, "key", redactKey(ks))
		s.holdBack(ks, batch)
		return
	}
	s.push(ks, batch)
	s.release(ks)
}

// holdBack keeps batch aside until the key's next event or until
// webhookHold passes, under hk.mu.
func (s *Server) holdBack(ks *keyState, batch []*hookEvent) {
	h, hk := s.hooks, &ks.hook
	if !h.goAdd() {
		h.finish(len(batch), &h.discarded) // closed
		return
	}
	hk.held = batch
	hk.holdSeq++
	seq := hk.holdSeq
	hk.timer = time.AfterFunc(h.hold, func() {
		defer h.wg.Done()
		hk.mu.Lock()
		defer hk.mu.Unlock()
		if hk.holdSeq == seq && hk.held != nil {
			hk.timer = nil // fired: its place in wg is released above
			s.release(ks)
		}
	})
}

// release queues the deliveries held back, if any, under hk.mu.
func (s *Server) release(ks *keyState) {
	hk := &ks.hook
	if hk.held == nil {
		return
	}
	s.hooks.stopTimer(hk)
	batch := hk.held
	hk.held = nil
	hk.holdSeq++
	s.push(ks, batch)
}

// push appends batch to the key's queue and starts its worker if none
// runs, under hk.mu. After Close, or beyond maxWebhookQueue, the batch
// is discarded.
func (s *Server) push(ks *keyState, batch []*hookEvent) {
	h, hk := s.hooks, &ks.hook
	if len(hk.queue)+len(batch) > maxWebhookQueue {
		s.log.Warn("sandbox webhook queue full; event discarded", "event", batch[0].name, "key", redactKey(ks))
		h.finish(len(batch), &h.discarded)
		return
	}
	if !hk.running {
		if !h.goAdd() {
			h.finish(len(batch), &h.discarded)
			return
		}
		hk.running = true
		go s.runHooks(ks)
	}
	hk.queue = append(hk.queue, batch...)
}

// hookAnswer answers GET /ach/v2/webhooks: the URL, and whether
// failures disabled it.
type hookAnswer struct {
	achOK
	WebhookURL string `json:"webhook_url"`
	Disabled   bool   `json:"disabled"`
}

// register makes u the key's endpoint and enables it, forgetting its
// failures. Deliveries already queued go to u.
func (s *Server) register(ks *keyState, u string) {
	hk := &ks.hook
	hk.mu.Lock()
	defer hk.mu.Unlock()
	if hk.disabled {
		s.log.Info("sandbox webhook endpoint enabled again", "key", redactKey(ks), "host", urlHost(u))
	}
	hk.url, hk.disabled, hk.failures = u, false, 0
	hk.gen++
}

// endpoint returns the key's registered URL and whether it is disabled.
func (ks *keyState) endpoint() (string, bool) {
	ks.hook.mu.Lock()
	defer ks.hook.mu.Unlock()
	return ks.hook.url, ks.hook.disabled
}

// urlHost is the host of a webhook URL, all a log line shows of it: its
// path or query may hold a secret.
func urlHost(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Host
	}
	return "-"
}
