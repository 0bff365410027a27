package remote

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/batchd/batchd/internal/payment"
)

func TestServerErrorsAreFiledUnderSFTP(t *testing.T) {
	ctx := context.Background()
	srv := serverError(ctx, fmt.Errorf("%w: reconnect: refused", ErrConnectionLost))
	if payment.SourceOf(srv) != payment.SourceSFTP || !errors.Is(srv, ErrConnectionLost) || srv.Error() != "sftp connection lost: reconnect: refused" {
		t.Errorf("server failure: source %s, %v", payment.SourceOf(srv), srv)
	}
	if local := serverError(ctx, fmt.Errorf("download: %w", asLocal(errors.New("disk full")))); errors.Is(local, payment.ErrRemote) {
		t.Errorf("a local failure is filed under sftp: %v", local)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if c := serverError(cctx, context.Canceled); errors.Is(c, payment.ErrRemote) {
		t.Error("the caller's cancellation is filed under sftp")
	}
	if serverError(ctx, nil) != nil {
		t.Error("nil is not nil")
	}
}
