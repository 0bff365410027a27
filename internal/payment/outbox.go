package payment

import (
	"context"
	"errors"
	"io"
)

// Outbox receives reports for the finance team: internal/remote's SFTP
// client implements it. Upload must be atomic: a reader of dir never sees
// half a file, and a failed upload leaves no file under name.
type Outbox interface {
	Upload(ctx context.Context, dir, name string, r io.Reader) error
}

// ErrRemote is wrapped by failures of the file server (SFTP): connecting,
// listing, moving or uploading. /healthz files them under "sftp".
var ErrRemote = errors.New("file server failure")

// Source names where a failure came from, for /healthz and the logs.
type Source string

// The sources of failures.
const (
	SourceLedger Source = "ledger"
	SourceAPI    Source = "api"
	SourceSFTP   Source = "sftp"
	SourceOther  Source = "batchd"
)

// SourceOf files err under its source. A ledger failure wins over the
// others: it is the one that stops every job.
func SourceOf(err error) Source {
	switch {
	case errors.Is(err, ErrLedger):
		return SourceLedger
	case errors.Is(err, ErrRemote):
		return SourceSFTP
	case errors.Is(err, ErrService), errors.Is(err, ErrKeyRefused), errors.Is(err, ErrRefused), errors.Is(err, ErrNotDone):
		return SourceAPI
	}
	return SourceOther
}

// ErrService is wrapped by every failure a Service adapter returns.
var ErrService = errors.New("payment service failure")
