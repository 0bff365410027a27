package reconcile

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/batchd/batchd/internal/payment"
)

// countedLedger counts the calls reconcile makes into a ledger, by
// method, to tell where a run's round trips go: each call is at least one
// read transaction.
type countedLedger struct {
	payment.Ledger
	n map[string]*atomic.Int64 // fixed at creation; the counters are atomic
}

var countedMethods = []string{"Row", "RowsByKey", "OwnerRows", "ObserveStatuses", "Rows", "TrackedRows", "Batch", "Batches", "Bank", "CheckOwners", "OpenRows"}

func newCountedLedger(db payment.Ledger) *countedLedger {
	c := &countedLedger{Ledger: db, n: map[string]*atomic.Int64{}}
	for _, m := range countedMethods {
		c.n[m] = new(atomic.Int64)
	}
	return c
}

func (c *countedLedger) total() int64 {
	var t int64
	for _, v := range c.n {
		t += v.Load()
	}
	return t
}

// String lists the counts by method, largest first.
func (c *countedLedger) String() string {
	ms := append([]string(nil), countedMethods...)
	sort.SliceStable(ms, func(i, j int) bool { return c.n[ms[i]].Load() > c.n[ms[j]].Load() })
	var parts []string
	for _, m := range ms {
		parts = append(parts, fmt.Sprintf("%s %d", m, c.n[m].Load()))
	}
	return strings.Join(parts, ", ")
}

func (c *countedLedger) Row(k payment.RowKey) (*payment.Row, error) {
	c.n["Row"].Add(1)
	return c.Ledger.Row(k)
}

func (c *countedLedger) RowsByKey(keys []payment.RowKey) ([]*payment.Row, error) {
	c.n["RowsByKey"].Add(1)
	return c.Ledger.RowsByKey(keys)
}

func (c *countedLedger) OwnerRows(ids []string) (map[string]*payment.Row, error) {
	c.n["OwnerRows"].Add(1)
	return c.Ledger.OwnerRows(ids)
}

func (c *countedLedger) ObserveStatuses(obs []payment.Observation, at time.Time) (map[payment.RowKey]*payment.Row, error) {
	c.n["ObserveStatuses"].Add(1)
	return c.Ledger.ObserveStatuses(obs, at)
}

func (c *countedLedger) Rows(batch uint64, fn func(*payment.Row) (bool, error)) error {
	c.n["Rows"].Add(1)
	return c.Ledger.Rows(batch, fn)
}

func (c *countedLedger) Batch(id uint64) (*payment.Batch, error) {
	c.n["Batch"].Add(1)
	return c.Ledger.Batch(id)
}

func (c *countedLedger) Batches() ([]payment.Batch, error) {
	c.n["Batches"].Add(1)
	return c.Ledger.Batches()
}

func (c *countedLedger) Bank(routing string) (*payment.Bank, error) {
	c.n["Bank"].Add(1)
	return c.Ledger.Bank(routing)
}

func (c *countedLedger) CheckOwners(ids []string) (map[string]payment.RowKey, error) {
	c.n["CheckOwners"].Add(1)
	return c.Ledger.CheckOwners(ids)
}

func (c *countedLedger) OpenRows(fn func(*payment.Row) (bool, error)) error {
	c.n["OpenRows"].Add(1)
	return c.Ledger.OpenRows(fn)
}

func (c *countedLedger) TrackedRows(fn func(*payment.Row) (bool, error)) error {
	c.n["TrackedRows"].Add(1)
	return c.Ledger.TrackedRows(fn)
}
