package onboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/ach"
	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/ledgertest"
	"github.com/batchd/batchd/internal/money"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/pgtest"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/state"
)

const testKey = "sk_test_onboard_rig_0123456789"

// The sandbox's fixture accounts are "enabled for third-party
// verification": on demand they are Verified at once.
const fixtureRouting = "999900001"

func fixtureAccount(n int) string { return fmt.Sprintf("11110000%02d", n) }

// A routing number outside the fixture table: on demand, Unverified.
const otherRouting = "021000021"

// Days either side of the micro-deposit deprecation (2026-06-08, a
// Monday): the Friday before it and the day itself.
var (
	friday = time.Date(2026, 6, 5, 15, 0, 0, 0, time.UTC)
	monday = time.Date(2026, 6, 8, 15, 0, 0, 0, time.UTC)
)

// clock is the one clock of a rig: the ledger's, the sandbox's and the
// runner's. The runner's waits advance it instead of sleeping.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	if d > 0 {
		c.Advance(d)
	}
	return ctx.Err()
}

// rig is a ledger of either backend (ledgertest), the emulator over
// loopback HTTP, the ACH client and its domain adapter, sharing one clock.
type rig struct {
	t   *testing.T
	clk *clock
	db  *state.DB
	sb  *sandbox.Server
	srv *httptest.Server
	api *ach.Client
	svc *ach.FundingService
}

// newRig starts a rig on a ledger of backend whose clock reads now; the
// sandbox's day is sbOpts.Date when set, else now's.
func newRig(t *testing.T, backend string, now time.Time, sbOpts sandbox.Options) *rig {
	t.Helper()
	clk := &clock{t: now}
	db := ledgertest.Open(t, backend, state.Options{Now: clk.Now})
	sbOpts.Now = clk.Now
	sb := sandbox.New(sbOpts)
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	api, err := ach.New(apiwire.Options{BaseURL: srv.URL, Key: testKey, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, clk: clk, db: db, sb: sb, srv: srv, api: api, svc: ach.NewFundingService(api, "plaid")}
}

// runner returns a Runner on the rig's clock; opts may set the rest.
func (r *rig) runner(opts Options) *Runner {
	if opts.Now == nil {
		opts.Now = r.clk.Now
	}
	opts.Sleep = r.clk.Sleep
	if opts.Retry.Base == 0 {
		opts.Retry = retry.Policy{Base: time.Millisecond, Max: 2 * time.Millisecond}
	}
	return New(r.db, r.svc, opts)
}

// load commits a batch of kind with the given requests on lines 2, 3, ...
func (r *rig) load(kind payment.BatchKind, name string, reqs ...funding.Request) payment.Batch {
	r.t.Helper()
	l, err := r.db.BeginBatch(payment.FileMeta{Kind: kind, Name: name, SHA256: "sha-" + name})
	if err != nil {
		r.t.Fatal(err)
	}
	for i, q := range reqs {
		if err := l.(funding.Loader).AddSource(i+2, q); err != nil {
			r.t.Fatal(err)
		}
	}
	b, err := l.Commit(len(reqs), 0)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// rows returns every row of a batch, in line order.
func (r *rig) rows(batch uint64) []*funding.Row {
	r.t.Helper()
	var out []*funding.Row
	if err := r.db.SourceRows(batch, func(row *funding.Row) (bool, error) { out = append(out, row); return true, nil }); err != nil {
		r.t.Fatal(err)
	}
	return out
}

// control calls a sandbox control endpoint (or any /ach/v2 path) and
// decodes its answer into out.
func (r *rig) control(method, path string, body any, out any) {
	r.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, r.srv.URL+"/ach/v2"+path, rd)
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		r.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			r.t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
}

// token has the stand-in bank-linking provider issue a processor token
// for processor, for one account.
func (r *rig) token(processor, account string) string {
	r.t.Helper()
	var ans struct {
		Token string `json:"processor_token"`
	}
	r.control("POST", "/_sandbox/processor/token", map[string]string{"processor": processor,
		"routing_number": fixtureRouting, "account_number": account}, &ans)
	return ans.Token
}

// deposits reads a source's micro-deposits as the customer's bank
// statement shows them.
func (r *rig) deposits(sourceID string) [2]money.Cents {
	r.t.Helper()
	var ans struct {
		Amounts []json.Number `json:"amounts"`
	}
	r.control("GET", "/_sandbox/funding-source/"+sourceID+"/micro-deposits", nil, &ans)
	if len(ans.Amounts) != 2 {
		r.t.Fatalf("deposits of %s: %v", sourceID, ans.Amounts)
	}
	var out [2]money.Cents
	for i, a := range ans.Amounts {
		c, err := money.ParseWire(a.String())
		if err != nil {
			r.t.Fatal(err)
		}
		out[i] = c
	}
	return out
}

// serviceSources lists every funding source of every customer of the
// key at the service, by customer email. A read the sandbox's ErrorRate
// fails is read again.
func (r *rig) serviceSources() map[string][]ach.FundingSource {
	r.t.Helper()
	ctx := context.Background()
	out := map[string][]ach.FundingSource{}
	for page := 1; ; page++ {
		var pg *ach.UserPage
		r.again(func() (err error) { pg, err = r.api.ListUsers(ctx, page, 100); return err })
		for _, u := range pg.Users {
			var srcs []ach.FundingSource
			r.again(func() (err error) { srcs, err = r.api.ListFundingSources(ctx, u.ID); return err })
			out[funding.EmailKey(u.Email)] = srcs
		}
		if len(pg.Users) == 0 || page >= pg.LastPage {
			return out
		}
	}
}

// again runs a read until the service answers it, within reason.
func (r *rig) again(read func() error) {
	r.t.Helper()
	var err error
	for range 50 {
		if err = read(); err == nil || apiwire.ClassOf(err) != apiwire.Retryable {
			break
		}
	}
	if err != nil {
		r.t.Fatal(err)
	}
}

// customer builds the customer columns of a row.
func customer(name string) funding.Customer {
	return funding.Customer{FirstName: name, LastName: "Tester", Email: name + "@example.com"}
}

// onDemand, micro and processor build funding-source rows.
func onDemand(c funding.Customer, routing, account string) funding.Request {
	return funding.Request{Method: funding.OnDemand, Customer: c, Routing: routing, Account: account, AccountType: "checking"}
}

func micro(c funding.Customer, account string) funding.Request {
	return funding.Request{Method: funding.MicroDeposits, Customer: c, Routing: otherRouting, Account: account, AccountType: "checking"}
}

func processor(c funding.Customer, token string) funding.Request {
	return funding.Request{Method: funding.Processor, Customer: c, ProcessorToken: token}
}

// dirOutbox is an outbox on a local directory.
type dirOutbox struct{ dir string }

func (o dirOutbox) Upload(_ context.Context, dir, name string, rd io.Reader) error {
	p := filepath.Join(o.dir, dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

// mustRun runs once and fails the test on an error.
func mustRun(t *testing.T, r *Runner) Summary {
	t.Helper()
	sum, err := r.Run(context.Background())
	if err != nil {
		t.Fatalf("run: %v (summary %+v)", err, sum)
	}
	return sum
}

// TestMain stops the shared PostgreSQL server (pgtest) the rigs' ledgers
// on that backend live in.
func TestMain(m *testing.M) { pgtest.Main(m) }
