package jobs

import (
	"fmt"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/payee"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/retry"
	"github.com/batchd/batchd/internal/tokenize"
)

// checkService is the payment service every job uses: the eCheck
// adapter, or with api.accounts: tokenize the same wrapped so that its
// checks name accounts by token (internal/tokenize). The tokenization
// goes through the client's core, so the one rate limiter paces it with
// the creates.
func (e *Env) checkService(svc *echeck.Service) payment.Service {
	c := e.Cfg
	if c.API.Accounts != config.AccountsTokenize {
		return svc
	}
	// The tokens' keys are keyed hashes, as the payees' marks are: read
	// (or made) at the first tokenized check, never by a command that
	// sends none (status, backup, a shell's root).
	key := sync.OnceValues(func() (*payee.Key, error) {
		k, err := payee.LoadKey(c.StateDir)
		if err != nil {
			return nil, fmt.Errorf("api.accounts tokenize: %w", err)
		}
		return k, nil
	})
	return tokenize.New(svc, tokenize.Options{Tokenizer: svc, Ledger: e.DB, Key: key, Store: c.API.Store,
		Retry: tokenizeRetry(e.retryPolicy()), Now: e.now})
}

// tokenizeRetry is how a tokenization is asked again within one create:
// submit's policy, at most three tries and a second's wait, because a
// stopping run waits for them (tokenize.Options.Retry); then submit's
// own retries take the row up.
func tokenizeRetry(p retry.Policy) retry.Policy {
	p.MaxAttempts = min(max(p.MaxAttempts, 1), 3)
	if p.Max <= 0 || p.Max > time.Second { // 0 would be retry's default, a minute
		p.Max = time.Second
	}
	return p
}
