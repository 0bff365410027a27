// Package tokenize pays payees through tokens of their bank accounts
// (api.accounts: tokenize, README "Tokenized accounts"): a Service wraps
// the payment service so that each payee's bank details are tokenized
// once, before its first check, and every check is created (and edited)
// with the token and the store, never with the account number. The jobs
// see a payment.Service like any other; submit knows nothing of tokens.
package tokenize

import (
	"context"
	"fmt"
	"time"

	"github.com/batchd/batchd/internal/payee"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/sendgate"
)

// Options are what a Service needs besides the service it wraps.
type Options struct {
	Tokenizer payment.Tokenizer   // the service's tokenization, on the same rate limiter
	Ledger    payment.TokenLedger // where tokens are kept, sealed
	// Key returns the key that hashes payee and account into a token's
	// key (the payee hash key of internal/payee), so that the ledger
	// names neither. It is asked for at the first tokenized check, so
	// that commands that send none never read (or make) its file.
	Key   func() (*payee.Key, error)
	Store string // api.store
	// Retry is how a tokenization that failed for now is tried again: a
	// lost answer is simply asked again (a token is not money, an unused
	// one harmless). Keep it short: the create's context is not cancelled
	// with the run (a cancelled create is an ambiguous one), so a stop
	// waits for these tries; past them the row is released, and submit's
	// own retries, which a stop ends, take it up.
	Retry retry.Policy
	Now   func() time.Time
}

// Service is a payment.Service whose checks name the payee's account by
// token. Rows that give a token of their own, or no account, go through
// unchanged.
type Service struct {
	payment.Service
	opts  Options
	locks keyLocks // one tokenization at a time per payee and account
}

var _ payment.Service = (*Service)(nil)

// New wraps svc.
func New(svc payment.Service, opts Options) *Service { return &Service{Service: svc, opts: opts} }

// CreateCheck creates row's check with its payee's token and the store,
// tokenizing the bank details first when the ledger has no token for them.
func (s *Service) CreateCheck(ctx context.Context, row *payment.Row) (*payment.Check, error) {
	byToken, err := s.byToken(ctx, row)
	if err != nil {
		return nil, err
	}
	return s.Service.CreateCheck(ctx, byToken)
}

// EditCheck edits check id with the payee's token in place of the bank
// details row carries (issue 29: once accounts are tokenized, the payee's
// token is used).
func (s *Service) EditCheck(ctx context.Context, id string, row *payment.Row) (*payment.Check, error) {
	byToken, err := s.byToken(ctx, row)
	if err != nil {
		return nil, err
	}
	return s.Service.EditCheck(ctx, id, byToken)
}

// byToken is a copy of row naming its account by token and store (row
// itself is the ledger's and keeps its details), or row when it has no
// account number to replace.
func (s *Service) byToken(ctx context.Context, row *payment.Row) (*payment.Row, error) {
	p := &row.Payment
	if p.Token != "" || p.BankAccount == "" {
		return row, nil
	}
	tok, err := s.token(ctx, p)
	if err != nil {
		return nil, notSent(fmt.Errorf("tokenize the bank account of %s: %w", row.Key, err))
	}
	out := *row
	out.Payment.BankRouting, out.Payment.BankAccount = "", ""
	out.Payment.Token, out.Payment.Store = tok, s.opts.Store
	return &out, nil
}

// KeyOf is the ledger key of p's payee and account: keyed hashes of
// each (payee.Name, payee.Key.Account) under the key's id, so that other
// bank details of the payee, or a new hash key, get a new token.
func KeyOf(k *payee.Key, p *payment.Payment) string {
	acct, _ := k.Account(p)
	return k.ID() + "/" + k.Payee(payee.Name(p)) + "/" + acct.Hash
}

// token is the token of p's payee and account: the ledger's, or a new
// one. Rows of one payee and account sent at once wait for one another:
// the first tokenizes, the others find its token in the ledger.
func (s *Service) token(ctx context.Context, p *payment.Payment) (string, error) {
	hash, err := s.opts.Key()
	if err != nil {
		return "", err
	}
	key := KeyOf(hash, p)
	defer s.locks.lock(key)()
	known, err := s.opts.Ledger.AccountToken(key)
	switch {
	case err != nil:
		return "", err
	case known != nil:
		return known.Token, nil
	}
	made, err := s.tokenize(ctx, key, p)
	if err != nil {
		return "", err
	}
	return made.Token, nil
}

// tokenize asks the service for a token of p's details, again after a
// failure that may pass (a lost answer included), and records it. The
// create's send gate (internal/sendgate: its send-by deadline, its slot's
// "sent") is the check's, not the tokenization's: it is lifted here, so
// that only the create itself is held to it.
func (s *Service) tokenize(ctx context.Context, key string, p *payment.Payment) (*payment.AccountToken, error) {
	ctx = sendgate.With(ctx, nil)
	first, last := Names(p)
	req := payment.TokenRequest{FirstName: first, LastName: last, Email: p.Email, Phone: p.Phone,
		Routing: p.BankRouting, Account: p.BankAccount, Store: s.opts.Store}
	var tok *payment.AccountToken
	err := retry.Do(ctx, s.opts.Retry, func(ctx context.Context) (err error) {
		tok, err = s.opts.Tokenizer.TokenizeAccount(ctx, req)
		return retryable(err)
	})
	if err != nil {
		return nil, err
	}
	tok.Key, tok.At = key, s.opts.Now()
	if err := s.opts.Ledger.PutAccountToken(*tok); err != nil {
		return nil, err
	}
	return tok, nil
}

// retryable marks err permanent unless asking again may succeed: a lost
// answer, a failure before the request was carried out.
func retryable(err error) error {
	switch f := payment.FailureOf(err); {
	case err == nil:
		return nil
	case f == payment.FailRefused || f == payment.FailKeyRefused:
		return retry.Permanent(err)
	case payment.RetryAfter(err) > 0:
		return retry.After(payment.RetryAfter(err), err)
	}
	return err
}

// notSent files a token that could not be had (a tokenization failed
// after its tries, the ledger could not be read or written): no create
// was sent, so the check certainly does not exist (payment.ErrNotDone),
// unless the service refused the details or the key, which the row or a
// person must settle.
func notSent(err error) error {
	if f := payment.FailureOf(err); f == payment.FailRefused || f == payment.FailKeyRefused {
		return err
	}
	return fmt.Errorf("%w: no token yet, so no check was sent: %w", payment.ErrNotDone, err)
}
