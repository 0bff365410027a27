package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/batchd/batchd/internal/logattr"
)

// webhookUserAgent names the sandbox in its deliveries.
const webhookUserAgent = "batchd-sandbox-webhooks"

// maxWebhookAnswer is how much of a receiver's answer is read, so that
// the connection can be reused.
const maxWebhookAnswer = 64 << 10

// runHooks empties the key's queue in order, one delivery (with its
// retries) at a time, and ends when the queue is empty. At most one runs
// per key (hookState.running).
func (s *Server) runHooks(ks *keyState) {
	h, hk := s.hooks, &ks.hook
	defer h.wg.Done()
	for {
		hk.mu.Lock()
		if len(hk.queue) == 0 {
			hk.running = false
			hk.queue = nil
			hk.mu.Unlock()
			return
		}
		ev := hk.queue[0]
		hk.queue[0] = nil
		hk.queue = hk.queue[1:]
		u, gen, off := hk.url, hk.gen, hk.disabled
		hk.mu.Unlock()
		if off || u == "" || h.ctx.Err() != nil {
			h.finish(1, &h.discarded)
			continue
		}
		s.settleDelivery(ks, gen, ev, s.deliver(ks, u, ev))
	}
}

// settleDelivery counts the outcome of one delivery to the registration
// gen. A failure that makes WebhookMaxFailures in a row disables the
// endpoint and discards what is still queued for it.
func (s *Server) settleDelivery(ks *keyState, gen uint64, ev *hookEvent, err error) {
	h, hk := s.hooks, &ks.hook
	switch {
	case err == nil:
		h.sent.Add(1)
	case h.ctx.Err() != nil: // aborted by Close
		h.finish(1, &h.discarded)
		return
	default:
		h.failed.Add(1)
		s.log.Info("sandbox webhook delivery failed", "event", ev.name, "key", redactKey(ks), "tries", h.tries, "error", err)
	}
	hk.mu.Lock()
	n := 0
	if gen == hk.gen {
		if err == nil {
			hk.failures = 0
		} else if hk.failures++; hk.failures >= h.maxFailures && !hk.disabled {
			hk.disabled = true
			n = len(hk.queue)
			hk.queue = hk.queue[:0]
			s.log.Warn("sandbox webhook endpoint disabled; register it again to enable it",
				"key", redactKey(ks), "host", urlHost(hk.url), "failures", hk.failures)
		}
	}
	hk.mu.Unlock()
	h.finish(1, nil)
	h.finish(n, &h.discarded)
}

// deliver POSTs ev to u until an answer is 2xx, with exponential backoff
// between tries, at most WebhookTries times. It gives up early when the
// server closes.
func (s *Server) deliver(ks *keyState, u string, ev *hookEvent) error {
	h := s.hooks
	b := &backoff.ExponentialBackOff{
		InitialInterval: h.wait, RandomizationFactor: 0.5, Multiplier: 2, MaxInterval: maxWebhookWait,
	}
	_, err := backoff.Retry(h.ctx, func() (struct{}, error) {
		return struct{}{}, s.post(ks, u, ev)
	},
		backoff.WithBackOff(b),
		backoff.WithMaxTries(uint(h.tries)),
		backoff.WithMaxElapsedTime(0),
		backoff.WithNotify(func(err error, wait time.Duration) {
			s.log.Debug("sandbox webhook try failed", "event", ev.name, "key", redactKey(ks), "error", err, logattr.Duration("retry_in", wait))
		}))
	return err
}

// post makes one try: the body with the key as Bearer credential, as
// public clients report the merchant's secret arriving in Authorization.
func (s *Server) post(ks *keyState, u string, ev *hookEvent) error {
	h := s.hooks
	h.attempts.Add(1)
	req, err := http.NewRequestWithContext(h.ctx, http.MethodPost, u, bytes.NewReader(ev.body))
	if err != nil {
		return backoff.Permanent(errors.New("webhook URL not usable"))
	}
	req.Header.Set("Authorization", "Bearer "+ks.key.Value)
	req.Header.Set("Content-Type", ev.ctype)
	req.Header.Set("User-Agent", webhookUserAgent)
	res, err := h.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, whose path or query may hold a secret
		}
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxWebhookAnswer))
	_ = res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Errorf("receiver answered HTTP %d", res.StatusCode)
	}
	return nil
}
