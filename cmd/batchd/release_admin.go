package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	if cfg.Admin.Listen == "" {
		return "", errors.New("a running batchd holds the ledger and admin.listen is empty, so batchd release cannot ask it: " +
			"set admin.listen and admin.token_file and restart batchd, or stop batchd, release, and start it again")
	}
	addr := adminDialAddr(cfg.Admin.Listen)
	body, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("release through the admin API: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v1/release", bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("release through the admin API at %s: %w", addr, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	if tok := cfg.AdminToken(); tok != "" {
		hr.Header.Set("Authorization", "Bearer "+tok)
	}
	// No proxy: the token goes to batchd itself, never through a proxy
	// named by HTTP_PROXY. One request: no connection is kept.
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(hr)
	if err != nil {
		return "", fmt.Errorf("a running batchd holds the ledger, and its admin server at %s (admin.listen) does not answer: %w; "+
			"check that batchd run is up and admin.listen is its address, or stop batchd, release, and start it again", addr, err)
	}
	defer resp.Body.Close()
	var out struct{ Result, Error string }
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&out); err != nil {
		return "", fmt.Errorf("release through the admin API at %s: %s, and the answer is not batchd's JSON: %w", addr, resp.Status, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return out.Result, nil
	case http.StatusUnauthorized:
		return "", fmt.Errorf("the running batchd refused the token (%s): admin.token_file must hold the token batchd read when it started "+
			"(restart batchd after changing the file), and you must be able to read it", out.Error)
	}
	return "", fmt.Errorf("the running batchd did not release: %s", out.Error)
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
