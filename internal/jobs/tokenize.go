package jobs

import (
	"fmt"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/payee"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/tokenize"
)

// checkService is the payment service every job uses: the eCheck
// adapter, or with api.accounts: tokenize the same wrapped so that its
// checks name accounts by token (internal/tokenize). The tokenization
// goes through the client's core, so the one rate limiter paces it with
// the creates.
func (e *Env) checkService(svc *echeck.Service) (payment.Service, error) {
	c := e.Cfg
	if c.API.Accounts != config.AccountsTokenize {
		return svc, nil
	}
	key, err := payee.LoadKey(c.StateDir) // the tokens' keys are keyed hashes, as the payees' marks are
	if err != nil {
		return nil, fmt.Errorf("api.accounts tokenize: %w", err)
	}
	return tokenize.New(svc, tokenize.Options{Tokenizer: svc, Ledger: e.DB, Key: key, Store: c.API.Store,
		Retry: e.retryPolicy(), Now: e.now}), nil
}
