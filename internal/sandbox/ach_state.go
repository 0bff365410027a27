package sandbox

import (
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Funding-source status values of docs/ach-wire.md. A source linked by a
// processor token keeps the lowercase "verified" the specification (§2.5)
// shows in that answer, in every later answer too.
const (
	srcPending            = "Pending"
	srcUnverified         = "Unverified"
	srcVerified           = "Verified"
	srcVerifiedProcessor  = "verified"
	srcVerificationFailed = "verification_failed"
	srcDeleted            = "deleted"
)

// achState is the ACH API's data that must be seen across keys: the
// specification makes an account number belong to one customer "across
// all keys", and a customer or source of another key must be told apart
// from an unknown one (404 "not the owner"). One mutex guards all of it
// and every key's achKey; ACH handlers never hold a key's mu with it.
type achState struct {
	mu        sync.Mutex
	customers map[string]*customer       // user_id → customer, all keys
	sources   map[string]*fundingSource  // source_id → source, all keys
	accounts  map[string]*fundingSource  // bankKey → the live source holding it
	tokens    map[string]*processorToken // processor token → what it stands for
	rng       *rand.Rand                 // micro-deposit amounts
}

// achKey is one key's part of the ACH API, guarded by achState.mu.
type achKey struct {
	customers []*customer          // in creation order
	byEmail   map[string]*customer // lower-cased e-mail → customer
	transfers []transfer           // direct debits and credits
}

// customer is an ACH customer (user).
type customer struct {
	id                      string
	owner                   *keyState
	first, last, email, tel string
	created                 time.Time // key's sandbox clock
	sources                 []*fundingSource
}

// fundingSource is a bank account linked to a customer.
type fundingSource struct {
	id               string
	cust             *customer
	routing, account string
	kind, nickname   string // kind: checking or savings
	status           string
	primary          bool
	created          time.Time
	deposits         [2]int64 // micro-deposit cents, once initiated
	initiated        bool
	failures         int // wrong verification tries
}

// transfer is a direct debit or credit; the sandbox only keeps it.
type transfer struct {
	id, source, kind string
	cents            int64
}

// newACHState returns empty ACH data whose micro-deposits come from a
// generator seeded by seed. It is a generator apart from the fault
// generator, so that linking accounts never shifts the faults a seeded
// run meets.
func newACHState(seed int64) *achState {
	return &achState{
		customers: make(map[string]*customer),
		sources:   make(map[string]*fundingSource),
		accounts:  make(map[string]*fundingSource),
		tokens:    make(map[string]*processorToken),
		rng:       rand.New(rand.NewPCG(uint64(seed)^0x5851f42d4c957f2d, uint64(seed))),
	}
}

// counts returns how many customers and funding sources are held.
func (a *achState) counts() (customers, sources int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.customers), len(a.sources)
}

// bankKey identifies an account number at its bank, the unit of the
// one-customer-per-account rule.
func bankKey(routing, account string) string { return routing + "/" + account }

// newID returns a UUID not yet used as a customer or source id.
func (a *achState) newID() string {
	for {
		id := uuid.NewString()
		if a.customers[id] == nil && a.sources[id] == nil {
			return id
		}
	}
}

// customerOf resolves a user_id for ks: 404 "Customer not found" for an
// unknown id and "You are not the owner of the customer" for another
// key's customer, as the specification's error table tells them apart.
func (a *achState) customerOf(ks *keyState, id string) (*customer, *apiError) {
	c := a.customers[trimColon(id)]
	switch {
	case c == nil:
		return nil, errorf(http.StatusNotFound, "Customer not found")
	case c.owner != ks:
		return nil, errorf(http.StatusNotFound, "You are not the owner of the customer")
	}
	return c, nil
}

// sourceOf resolves a funding source id for ks. Another key's source is
// "not found" too, so that ids of other merchants cannot be probed.
func (a *achState) sourceOf(ks *keyState, id string) (*fundingSource, *apiError) {
	src := a.sources[trimColon(id)]
	if src == nil || src.cust.owner != ks {
		return nil, errorf(http.StatusNotFound, "Funding source not found")
	}
	return src, nil
}

// trimColon drops the colon public clients put before a path id
// ("/user/:{id}"), so that ids read the same from a path or a body.
func trimColon(id string) string {
	if len(id) > 0 && id[0] == ':' {
		return id[1:]
	}
	return id
}

// live counts the customer's sources that count towards the limit.
func (c *customer) live() int {
	n := 0
	for _, src := range c.sources {
		if src.status != srcDeleted {
			n++
		}
	}
	return n
}

// hasPrimary reports whether one of the customer's sources is primary.
func (c *customer) hasPrimary() bool {
	for _, src := range c.sources {
		if src.primary {
			return true
		}
	}
	return false
}

// makePrimary makes src the customer's one primary source.
func (c *customer) makePrimary(src *fundingSource) {
	for _, o := range c.sources {
		o.primary = o == src
	}
}

// remove deletes src from its customer's profile: its status becomes
// deleted, it is no longer primary and its account is free for any
// customer again. Removing a deleted source changes nothing. It reports
// whether src was deleted now.
func (a *achState) remove(src *fundingSource) bool {
	if src.status == srcDeleted {
		return false
	}
	src.status = srcDeleted
	src.primary = false
	if k := bankKey(src.routing, src.account); a.accounts[k] == src {
		delete(a.accounts, k)
	}
	return true
}

// verified reports whether a source may be debited.
func (src *fundingSource) verified() bool {
	return src.status == srcVerified || src.status == srcVerifiedProcessor
}
