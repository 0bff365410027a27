package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/batchd/batchd/internal/apiwire"
	"github.com/batchd/batchd/internal/bankinfo"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/echeck"
	"github.com/batchd/batchd/internal/payment"
	"github.com/batchd/batchd/internal/throttle"
)

// onlineRouting is validate --online's routing check: ingest's rule
// (bankinfo.Banks.Refusal) over the configured API, under its rate, with
// the answers kept in memory only (validate writes nothing, and the
// ledger may be a running daemon's).
func onlineRouting(cfg *config.Config) (func(context.Context, string) (string, error), error) {
	api, err := echeck.New(apiwire.Options{BaseURL: cfg.API.BaseURL, Key: cfg.APIKey(), Timeout: cfg.API.Timeout.Std(),
		Limiter: throttle.New(cfg.API.Rate, cfg.API.Burst)})
	if err != nil {
		return nil, fmt.Errorf("validate --online: %w", err)
	}
	return bankinfo.New(echeck.NewService(api), &memBanks{m: map[string]payment.Bank{}}, 0, time.Now).Refusal, nil
}

// memBanks keeps the bank directory's answers for one validate run.
type memBanks struct {
	mu sync.Mutex
	m  map[string]payment.Bank
}

func (b *memBanks) Bank(routing string) (*payment.Bank, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if v, ok := b.m[routing]; ok {
		return &v, nil
	}
	return nil, nil
}

func (b *memBanks) PutBank(v payment.Bank) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[v.Routing] = v
	return nil
}
