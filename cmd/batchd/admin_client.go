package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/batchd/batchd/internal/config"
)

// adminClient asks the running batchd, through its admin server
// (admin.listen, with admin.token_file's token), for what a command
// cannot do itself while that batchd holds the ledger: `release`,
// `status`, `reconcile`.
type adminClient struct {
	cfg  *config.Config
	addr string
	// what names the command, for messages; otherwise says what else
	// the user can do when batchd cannot be asked ("" for nothing).
	what, otherwise string
	http            *http.Client
}

// newAdminClient is the client of command what; an error when
// admin.listen is empty, saying what to do (and otherwise, when set).
func newAdminClient(cfg *config.Config, what, otherwise string) (*adminClient, error) {
	if otherwise != "" {
		otherwise = ", " + otherwise
	}
	if cfg.Admin.Listen == "" {
		return nil, fmt.Errorf("a running batchd holds the ledger and admin.listen is empty, so batchd %s cannot ask it: "+
			"set admin.listen (and admin.token_file) and restart batchd%s", what, otherwise)
	}
	// No proxy: the token goes to batchd itself, never through a proxy
	// named by HTTP_PROXY. No connection is kept between calls.
	return &adminClient{cfg: cfg, addr: adminDialAddr(cfg.Admin.Listen), what: what, otherwise: otherwise,
		http: &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}}, nil
}

// do sends one request and decodes batchd's JSON answer into out (nil:
// none wanted). It returns the status code; a transport failure is an
// error saying that batchd does not answer there.
func (c *adminClient) do(ctx context.Context, method, path string, body io.Reader, out any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://"+c.addr+path, body)
	if err != nil {
		return 0, fmt.Errorf("batchd %s through the admin API at %s: %w", c.what, c.addr, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if tok := c.cfg.AdminToken(); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("a running batchd holds the ledger, and its admin server at %s (admin.listen) does not answer: %w; "+
			"check that batchd run is up and admin.listen is its address%s", c.addr, err, c.otherwise)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("batchd %s through the admin API at %s: %w", c.what, c.addr, err)
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return resp.StatusCode, fmt.Errorf("the running batchd refused the token (%s): admin.token_file must hold the token batchd read when it started "+
			"(restart batchd after changing the file), and you must be able to read it", errorText(raw))
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, &adminRefusal{code: resp.StatusCode, msg: errorText(raw)}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("batchd %s through the admin API at %s: %s, and the answer is not batchd's JSON: %w", c.what, c.addr, resp.Status, err)
		}
	}
	return resp.StatusCode, nil
}

// adminRefusal is an answer of the admin server other than a success.
type adminRefusal struct {
	code int
	msg  string
}

func (e *adminRefusal) Error() string { return e.msg }

// errorText is the "error" of batchd's JSON error body, or the body.
func errorText(raw []byte) string {
	var b struct{ Error string }
	if json.Unmarshal(raw, &b) == nil && b.Error != "" {
		return b.Error
	}
	return string(raw)
}

// refusedWith reports whether err is an admin answer with code.
func refusedWith(err error, code int) bool {
	var r *adminRefusal
	return errors.As(err, &r) && r.code == code
}
