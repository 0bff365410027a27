package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/daemon"
	"github.com/batchd/batchd/internal/jobs"
)

// releaseTimeout bounds a release sent to the running daemon: one ledger
// transaction, answered in milliseconds.
const releaseTimeout = 15 * time.Second

// adminRelease is AdminOptions.Release of `batchd run`: the same rule as
// `batchd release` (jobs.Release) on the daemon's ledger, then a submit run
// at once (or right after the one in progress) sends the released row.
func adminRelease(db jobs.ReleaseLedger, sched *daemon.Scheduler) func(context.Context, []byte) (string, error) {
	return func(ctx context.Context, body []byte) (string, error) {
		var req jobs.ReleaseRequest
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return "", daemon.Refusal(fmt.Errorf("release request: %w: send JSON {\"file\":…, \"line\":…, \"by\":…}", err))
		}
		msg, err := jobs.Release(db, req)
		if errors.Is(err, jobs.ErrNotReleasable) {
			return "", daemon.Refusal(err)
		}
		if err != nil {
			return "", err
		}
		sched.Request("submit", "release")
		return msg, nil
	}
}

// releaseThroughAdmin sends req to the running batchd's admin server
// (POST /v1/release at admin.listen, with admin.token_file's token), for
// when that batchd holds the ledger.
func releaseThroughAdmin(ctx context.Context, cfg *config.Config, req jobs.ReleaseRequest) (string, error) {
	c, err := newAdminClient(cfg, "release", "or stop batchd, release, and start it again")
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("release through the admin API: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	var out struct{ Result string }
	if _, err := c.do(ctx, http.MethodPost, "/v1/release", bytes.NewReader(body), &out); err != nil {
		var r *adminRefusal
		if errors.As(err, &r) {
			return "", fmt.Errorf("the running batchd did not release: %s", r.msg)
		}
		return "", err
	}
	return out.Result, nil
}

// adminDialAddr is where to reach admin.listen from this host: a wildcard
// listen address is reached on loopback, whose Host the server accepts.
func adminDialAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}
