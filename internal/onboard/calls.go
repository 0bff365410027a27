package onboard

import (
	"context"
	"sync/atomic"

	"github.com/batchd/batchd/internal/funding"
	"github.com/batchd/batchd/internal/money"
)

// counted counts the requests made to the service, so that a summary can
// say what a run cost of the shared rate budget, and paces each for the
// slot of the send it belongs to (pace).
type counted struct {
	funding.Service
	n atomic.Int64
}

func (c *counted) CreateCustomer(ctx context.Context, cu funding.Customer) (string, error) {
	c.n.Add(1)
	ctx, done := pace(ctx)
	id, err := c.Service.CreateCustomer(ctx, cu)
	done(err)
	return id, err
}

func (c *counted) FindCustomer(ctx context.Context, email string) (string, bool, error) {
	c.n.Add(1) // a walk of several pages counts once: the adapter pages
	ctx, done := pace(ctx)
	id, found, err := c.Service.FindCustomer(ctx, email)
	done(err)
	return id, found, err
}

func (c *counted) CreateSource(ctx context.Context, userID string, r *funding.Request) (*funding.Source, error) {
	c.n.Add(1)
	ctx, done := pace(ctx)
	src, err := c.Service.CreateSource(ctx, userID, r)
	done(err)
	return src, err
}

func (c *counted) Sources(ctx context.Context, userID string) ([]funding.Source, error) {
	c.n.Add(1)
	ctx, done := pace(ctx)
	srcs, err := c.Service.Sources(ctx, userID)
	done(err)
	return srcs, err
}

func (c *counted) Source(ctx context.Context, id string) (*funding.Source, error) {
	c.n.Add(1)
	ctx, done := pace(ctx)
	src, err := c.Service.Source(ctx, id)
	done(err)
	return src, err
}

func (c *counted) InitiateVerification(ctx context.Context, sourceID string) error {
	c.n.Add(1)
	ctx, done := pace(ctx)
	err := c.Service.InitiateVerification(ctx, sourceID)
	done(err)
	return err
}

func (c *counted) Verify(ctx context.Context, sourceID string, amounts [2]money.Cents) (*funding.Source, error) {
	c.n.Add(1)
	ctx, done := pace(ctx)
	src, err := c.Service.Verify(ctx, sourceID, amounts)
	done(err)
	return src, err
}
