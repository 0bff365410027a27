package tokenize

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/batchd/batchd/internal/payee"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/sendgate"
)

// checks records the rows the wrapped service was asked to create or
// edit with.
type checks struct {
	payment.Service
	mu   sync.Mutex
	sent []payment.Payment
}

func (c *checks) CreateCheck(ctx context.Context, row *payment.Row) (*payment.Check, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := sendgate.Check(ctx); err != nil {
		return nil, err
	}
	c.sent = append(c.sent, row.Payment)
	return &payment.Check{ID: fmt.Sprint("check-", len(c.sent))}, nil
}

func (c *checks) EditCheck(ctx context.Context, _ string, row *payment.Row) (*payment.Check, error) {
	return c.CreateCheck(ctx, row)
}

// tokens is the service's tokenization: it fails with fail (then
// answers) as long as failures are left, and counts every call.
type tokens struct {
	mu       sync.Mutex
	calls    int
	failures int
	fail     error
	asked    []payment.TokenRequest
}

func (s *tokens) TokenizeAccount(ctx context.Context, r payment.TokenRequest) (*payment.AccountToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if err := sendgate.Check(ctx); err != nil {
		return nil, err
	}
	s.asked = append(s.asked, r)
	if s.failures > 0 {
		s.failures--
		return nil, s.fail
	}
	return &payment.AccountToken{Token: fmt.Sprintf("token-%02d-%s", s.calls, r.Account[len(r.Account)-4:]), Bank: "First Bank",
		Last4: r.Account[len(r.Account)-4:]}, nil
}

// memTokens is a TokenLedger in memory.
type memTokens struct {
	mu sync.Mutex
	m  map[string]payment.AccountToken
}

func (l *memTokens) AccountToken(key string) (*payment.AccountToken, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t, ok := l.m[key]; ok {
		return &t, nil
	}
	return nil, nil
}

func (l *memTokens) PutAccountToken(t payment.AccountToken) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m[t.Key] = t
	return nil
}

type fixture struct {
	svc    *Service
	inner  *checks
	tok    *tokens
	ledger *memTokens
}

func newFixture(tok *tokens, ledger *memTokens) *fixture {
	if ledger == nil {
		ledger = &memTokens{m: map[string]payment.AccountToken{}}
	}
	inner := &checks{}
	hash := payee.NewKey([]byte("0123456789abcdef0123456789abcdef"))
	svc := New(inner, Options{Tokenizer: tok, Ledger: ledger, Key: func() (*payee.Key, error) { return hash, nil },
		Store: "Acme Payroll", Retry: retry.Policy{Base: time.Nanosecond, Max: time.Nanosecond, MaxAttempts: 4},
		Now: func() time.Time { return time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC) }})
	return &fixture{svc: svc, inner: inner, tok: tok, ledger: ledger}
}

func row(line uint32, name, account string) *payment.Row {
	return &payment.Row{Key: payment.RowKey{Batch: 1, Line: line}, Payment: payment.Payment{
		Amount: 1000, Memo: "m", Name: name, Email: "pay@example.com", BankRouting: "021000021", BankAccount: account}}
}

// TestCreateByToken: each payee's account is tokenized once, every check
// goes with token and store and without the account, the ledger's row
// keeps its details, and other details of a payee get a new token.
func TestCreateByToken(t *testing.T) {
	f := newFixture(&tokens{}, nil)
	ctx := context.Background()
	rows := []*payment.Row{row(2, "Ada Lovelace", "123456789"), row(3, "Ada Lovelace", "123456789"),
		row(4, "Acme Widgets Inc.", "555500001"), row(5, "Ada Lovelace", "987654321")}
	for _, r := range rows {
		if _, err := f.svc.CreateCheck(ctx, r); err != nil {
			t.Fatal(err)
		}
		if r.Payment.BankAccount == "" || r.Payment.Token != "" {
			t.Fatalf("the ledger's row was changed: %+v", r.Payment)
		}
	}
	if f.tok.calls != 3 {
		t.Fatalf("%d tokenizations, want 3 (one per payee and account)", f.tok.calls)
	}
	for i, p := range f.inner.sent {
		if p.BankAccount != "" || p.BankRouting != "" || p.Token == "" || p.Store != "Acme Payroll" {
			t.Fatalf("check %d sent with %+v; want token and store only", i, p)
		}
	}
	if f.inner.sent[0].Token != f.inner.sent[1].Token || f.inner.sent[3].Token == f.inner.sent[0].Token {
		t.Fatalf("tokens %q %q %q: want the first two equal, the last (new account) another", f.inner.sent[0].Token,
			f.inner.sent[1].Token, f.inner.sent[3].Token)
	}
	if a := f.tok.asked[1]; a.FirstName != "Acme Widgets" || a.LastName != "Inc." || a.Store != "Acme Payroll" || a.Account != "555500001" {
		t.Fatalf("asked %+v", a)
	}
	// A restart keeps the tokens: nothing is tokenized again.
	again := newFixture(&tokens{}, f.ledger)
	if _, err := again.svc.CreateCheck(ctx, row(6, "Ada Lovelace", "123456789")); err != nil || again.tok.calls != 0 {
		t.Fatalf("after a restart: %v, %d tokenizations", err, again.tok.calls)
	}
	if _, err := again.svc.EditCheck(ctx, "check-1", row(2, "Ada Lovelace", "123456789")); err != nil ||
		again.inner.sent[1].Token != f.inner.sent[0].Token || again.inner.sent[1].BankAccount != "" {
		t.Fatalf("an edit: %v, sent %+v", err, again.inner.sent)
	}
}

// TestLostAnswersAskedAgain: a lost tokenization answer is asked again;
// a refusal rejects the row; failures past the tries leave the row not
// sent (certainly no check), never in doubt.
func TestLostAnswersAskedAgain(t *testing.T) {
	ctx := context.Background()
	lost := errors.New("tokenize: answer lost (connection reset)")
	f := newFixture(&tokens{failures: 2, fail: lost}, nil)
	if _, err := f.svc.CreateCheck(ctx, row(2, "Ada Lovelace", "123456789")); err != nil || f.tok.calls != 3 || len(f.inner.sent) != 1 {
		t.Fatalf("after two lost answers: %v, %d calls, %d checks", err, f.tok.calls, len(f.inner.sent))
	}

	f = newFixture(&tokens{failures: 9, fail: lost}, nil)
	_, err := f.svc.CreateCheck(ctx, row(2, "Ada Lovelace", "123456789"))
	if payment.FailureOf(err) != payment.FailNotDone || f.tok.calls != 4 || len(f.inner.sent) != 0 {
		t.Fatalf("every answer lost: %v (failure %d), %d calls, %d checks", err, payment.FailureOf(err), f.tok.calls, len(f.inner.sent))
	}

	f = newFixture(&tokens{failures: 9, fail: fmt.Errorf("%w: bank_routing: invalid", payment.ErrRefused)}, nil)
	_, err = f.svc.CreateCheck(ctx, row(2, "Ada Lovelace", "123456789"))
	if payment.FailureOf(err) != payment.FailRefused || f.tok.calls != 1 || len(f.inner.sent) != 0 {
		t.Fatalf("refused: %v, %d calls, %d checks", err, f.tok.calls, len(f.inner.sent))
	}
}

// TestGivenTokenPassesThrough: a row that names a stored account of its
// own is sent as it is.
func TestGivenTokenPassesThrough(t *testing.T) {
	f := newFixture(&tokens{}, nil)
	r := &payment.Row{Payment: payment.Payment{Name: "Ada Lovelace", Token: "t-given", Store: "other"}}
	if _, err := f.svc.CreateCheck(context.Background(), r); err != nil || f.tok.calls != 0 || f.inner.sent[0].Token != "t-given" {
		t.Fatalf("%v, %d tokenizations, sent %+v", err, f.tok.calls, f.inner.sent)
	}
}

// TestSendGateIsTheCreates: the create's send gate (its send-by
// deadline) holds the create, not the tokenization before it.
func TestSendGateIsTheCreates(t *testing.T) {
	f := newFixture(&tokens{}, nil)
	late := errors.New("send-by deadline passed")
	ctx := sendgate.With(context.Background(), func() error { return late })
	_, err := f.svc.CreateCheck(ctx, row(2, "Ada Lovelace", "123456789"))
	if !errors.Is(err, late) || f.tok.calls != 1 || len(f.inner.sent) != 0 {
		t.Fatalf("%v, %d tokenizations, %d checks; want the token made and the create held by its gate", err, f.tok.calls, len(f.inner.sent))
	}
	hash, _ := f.svc.opts.Key()
	if tok, _ := f.ledger.AccountToken(KeyOf(hash, &row(2, "Ada Lovelace", "123456789").Payment)); tok == nil {
		t.Fatal("the token was not kept")
	}
}

// TestOneTokenizationAtOnce: rows of one payee and account sent at the
// same time tokenize once; those of other payees do not wait for it.
func TestOneTokenizationAtOnce(t *testing.T) {
	f := newFixture(&tokens{}, nil)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			name := []string{"Ada Lovelace", "Alan Turing"}[i%2]
			if _, err := f.svc.CreateCheck(context.Background(), row(uint32(2+i), name, "123456789")); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if f.tok.calls != 2 || len(f.inner.sent) != 16 || len(f.svc.locks.held) != 0 {
		t.Fatalf("%d tokenizations for 2 payees, %d checks, %d locks left", f.tok.calls, len(f.inner.sent), len(f.svc.locks.held))
	}
}
