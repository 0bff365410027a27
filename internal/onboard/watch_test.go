package onboard

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/money"
)

// watch is a funding.Service over the rig's real client (the sandbox over
// loopback) that records what is in flight: requests in all, and requests
// per customer, named "user:<id>" for what names a customer or one of its
// sources (a source's customer once watched creating it) and
// "email:<key>" for a customer step (create a customer, find one by
// email). It also logs, per customer, the requests in the order they
// left.
//
// With a wave, the first requests wait until wave of them are in flight
// together (then all pass): what shows that rows went out together
// without a sleep. A wave never reached fails the test after waveTimeout,
// a guard against a hang rather than a timing the test rests on.
//
// With hold set to an email key, a source create waits, once in flight,
// until a lookup of that email has returned: a row whose customer is found
// by that lookup while another row of the customer is still creating its
// source would then show as an overlap, whatever the timing.
type watch struct {
	funding.Service
	wave int
	hold string

	mu       sync.Mutex
	inside   int
	max      int
	per      map[string]int
	overlaps []string
	owner    map[string]string   // source id -> user id
	log      map[string][]string // user id -> requests in order
	released chan struct{}
	missed   bool          // the wave was never reached
	found    chan struct{} // closed when the lookup of hold's email returned
}

const waveTimeout = 30 * time.Second

func newWatch(svc funding.Service, wave int) *watch {
	return &watch{Service: svc, wave: wave, per: map[string]int{}, owner: map[string]string{},
		log: map[string][]string{}, released: make(chan struct{}), found: make(chan struct{})}
}

// enter counts a request of key in; what it logs under user when user is
// known.
func (w *watch) enter(key, user, what string) {
	w.mu.Lock()
	w.inside++
	w.max = max(w.max, w.inside)
	w.per[key]++
	if w.per[key] > 1 {
		w.overlaps = append(w.overlaps, fmt.Sprintf("%s: %d requests at once (%s)", key, w.per[key], what))
	}
	if user != "" {
		w.log[user] = append(w.log[user], what)
	}
	wait := w.wave > 0
	if wait && w.inside >= w.wave {
		w.wave = 0
		close(w.released)
		wait = false
	}
	w.mu.Unlock()
	if !wait {
		return
	}
	w.await(w.released)
}

// await waits for ch to close; after waveTimeout it notes a miss.
func (w *watch) await(ch chan struct{}) {
	t := time.NewTimer(waveTimeout)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
		w.mu.Lock()
		w.missed = true
		w.mu.Unlock()
	}
}

func (w *watch) leave(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inside--
	w.per[key]--
}

func (w *watch) sourceUser(id string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.owner[id]
}

// sourceKey names a request about source id by its customer when known.
func (w *watch) sourceKey(id string) (key, user string) {
	if u := w.sourceUser(id); u != "" {
		return "user:" + u, u
	}
	return "source:" + id, ""
}

func (w *watch) CreateCustomer(ctx context.Context, c funding.Customer) (string, error) {
	k := "email:" + funding.EmailKey(c.Email)
	w.enter(k, "", "create customer")
	defer w.leave(k)
	return w.Service.CreateCustomer(ctx, c)
}

func (w *watch) FindCustomer(ctx context.Context, email string) (string, bool, error) {
	k := "email:" + funding.EmailKey(email)
	w.enter(k, "", "find customer")
	defer w.leave(k)
	id, found, err := w.Service.FindCustomer(ctx, email)
	if w.hold != "" && funding.EmailKey(email) == w.hold {
		w.mu.Lock()
		select {
		case <-w.found:
		default:
			close(w.found)
		}
		w.mu.Unlock()
	}
	return id, found, err
}

func (w *watch) CreateSource(ctx context.Context, userID string, r *funding.Request) (*funding.Source, error) {
	k := "user:" + userID
	w.enter(k, userID, "create "+r.Account+r.ProcessorToken)
	defer w.leave(k)
	if w.hold != "" {
		w.await(w.found)
	}
	src, err := w.Service.CreateSource(ctx, userID, r)
	if err == nil {
		w.mu.Lock()
		w.owner[src.ID] = userID
		w.mu.Unlock()
	}
	return src, err
}

func (w *watch) Sources(ctx context.Context, userID string) ([]funding.Source, error) {
	k := "user:" + userID
	w.enter(k, userID, "list sources")
	defer w.leave(k)
	return w.Service.Sources(ctx, userID)
}

func (w *watch) Source(ctx context.Context, id string) (*funding.Source, error) {
	k, u := w.sourceKey(id)
	w.enter(k, u, "read "+id)
	defer w.leave(k)
	return w.Service.Source(ctx, id)
}

func (w *watch) InitiateVerification(ctx context.Context, id string) error {
	k, u := w.sourceKey(id)
	w.enter(k, u, "initiate "+id)
	defer w.leave(k)
	return w.Service.InitiateVerification(ctx, id)
}

func (w *watch) Verify(ctx context.Context, id string, amounts [2]money.Cents) (*funding.Source, error) {
	k, u := w.sourceKey(id)
	w.enter(k, u, "verify "+id)
	defer w.leave(k)
	return w.Service.Verify(ctx, id, amounts)
}

// seen is what the watch saw: the most requests at once, the overlaps
// of one customer, whether the wave was missed, and the customer's log.
func (w *watch) seen(user string) (most int, overlaps []string, missed bool, log []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.max, append([]string(nil), w.overlaps...), w.missed, append([]string(nil), w.log[user]...)
}

// rearm sets a new wave for the requests to come.
func (w *watch) rearm(wave int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wave, w.max, w.released = wave, 0, make(chan struct{})
}
