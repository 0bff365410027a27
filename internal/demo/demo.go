// Package demo runs the whole of batchd once, on this machine alone: an
// in-process sandbox of the eCheck API, an in-process SFTP server with
// generated keys and a pinned known_hosts, two sample payment files (one
// clean, one with errors), and then ingest, submit, a deposit of some
// checks, a clock advance, and reconcile. It is what `batchd demo` runs,
// so that a newcomer sees the job work before configuring anything.
package demo

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/ingest/csvfile"
	"github.com/batchd/batchd/internal/jobs"
	"github.com/batchd/batchd/internal/sandbox"
	"github.com/batchd/batchd/internal/sftpd"
)

// Samples are the demo's payment files and its funding-source file. They are copies of testdata/demo
// (a test keeps the two identical), embedded so that the demo needs no
// working directory.
//
//go:embed samples/*.csv
var Samples embed.FS

// Key is the sandbox API key the demo uses. It is a test key of the
// sandbox the demo itself starts; it opens nothing anywhere else.
const Key = "sk_test_batchd_demo_0000000000000000"

// Options configures a demo run.
type Options struct {
	Dir string    // where everything is kept; empty makes a temporary directory
	Out io.Writer // the summary for a person
	// Date, when not zero, is the day (UTC) the demo runs on: the
	// sandbox and batchd share a clock that starts at noon that day and
	// then runs at the real pace (jobs.ClockOn). Zero runs on the real
	// clock.
	Date time.Time
	// Files, when given, are a person's own payment (or onboarding) files
	// to rehearse instead of the samples, each copied with the sandbox's
	// test bank details in place of the real ones (files.go).
	Files []string
}

// Result is what the demo did, for tests.
type Result struct {
	Dir        string // everything the demo made
	Outbox     string // the SFTP outbox: rejects, results and daily reports
	ReportsDir string // local copies of every report
	Log        string // batchd's JSON log of the run
}

// Run runs the demo. It needs no network beyond loopback.
func Run(ctx context.Context, opts Options) (*Result, error) {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	dir := opts.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "batchd-demo-")
		if err != nil {
			return nil, err
		}
		dir = d
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	res := &Result{Dir: dir, Log: filepath.Join(dir, "batchd.log")}
	logf, err := os.OpenFile(res.Log, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	log := slog.New(slog.NewJSONHandler(logf, nil))

	now := time.Now
	if !opts.Date.IsZero() {
		now = jobs.ClockOn(opts.Date, time.UTC)
	}
	sbURL, stopSandbox, err := startSandbox(log, now)
	if err != nil {
		return nil, err
	}
	defer stopSandbox()
	srv, err := sftpd.Start(ctx, filepath.Join(dir, "sftp"))
	if err != nil {
		return nil, fmt.Errorf("start SFTP server: %w", err)
	}
	defer srv.Close()
	res.Outbox = filepath.Join(srv.Root, "outbox")

	cfg, err := demoConfig(dir, sbURL, srv)
	if err != nil {
		return nil, err
	}
	res.ReportsDir = filepath.Join(cfg.StateDir, "reports")
	fmt.Fprintf(out, "batchd demo in %s\n  sandbox %s, SFTP server %s (host key %s pinned)\n", dir, sbURL, srv.Addr, srv.HostKeyFingerprint)
	inbox := filepath.Join(srv.Root, "inbox")
	if len(opts.Files) == 0 {
		err = dropSamples(inbox)
	} else {
		err = rehearse(out, opts.Files, inbox)
	}
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(out)

	je, err := jobs.OpenAt(cfg, log, jobs.Hooks{}, now)
	if err != nil {
		return nil, err
	}
	defer je.Close()
	if err := steps(ctx, out, je, sbURL, inbox, len(opts.Files) == 0); err != nil {
		return res, err
	}
	fmt.Fprintf(out, "\nReports (open them in a spreadsheet):\n  %s\nLocal copies: %s\nLog: %s\n", res.Outbox, res.ReportsDir, res.Log)
	return res, nil
}

// startSandbox serves a sandbox on a free loopback port, on the clock now.
func startSandbox(log *slog.Logger, now func() time.Time) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("start sandbox: %w", err)
	}
	hs := &http.Server{Handler: sandbox.New(sandbox.Options{Keys: []sandbox.Key{{Value: Key, FundConfirmation: true}}, Logger: log, Now: now}),
		ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String(), func() { hs.Close() }, nil
}

// demoConfig is the configuration a person would write for this set-up.
func demoConfig(dir, sbURL string, srv *sftpd.Server) (*config.Config, error) {
	c := config.Default()
	c.StateDir = filepath.Join(dir, "state")
	c.API.BaseURL, c.API.Mode = sbURL, config.ModeTest
	c.API.Rate, c.API.Burst, c.API.Concurrency = 50, 10, 8
	c.SFTP.Address, c.SFTP.User = srv.Addr, srv.User
	c.SFTP.IdentityFile, c.SFTP.KnownHosts = srv.IdentityFile, srv.KnownHostsFile
	for _, p := range []*string{&c.SFTP.Inbox, &c.SFTP.Archive, &c.SFTP.Failed, &c.SFTP.Outbox} {
		*p = filepath.Join(srv.Root, filepath.Base(*p))
	}
	c.Ingest.StableFor = config.Duration(200 * time.Millisecond)
	c.Ingest.OnInvalid = config.OnInvalidRejectFile
	c.Submit.ResolveAfter = config.Duration(time.Second)
	c.Submit.VoidOnRisk = []string{"Fail"}
	c.Schedule.Timezone = "UTC"
	c.SetAPIKey(Key)
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("demo configuration: %w", err)
	}
	return c, nil
}

// rehearse drops the person's files, saying what was replaced.
func rehearse(out io.Writer, files []string, inbox string) error {
	rs, err := dropFiles(files, inbox)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "  your files, rehearsed against this machine's sandbox only: nothing is sent anywhere else")
	for _, r := range rs {
		fmt.Fprintf(out, "  %s -> inbox/%s: %d rows; %d account numbers replaced by the sandbox's passing test accounts (routing %s)\n",
			r.From, r.Name, r.Rows, r.Accounts, csvfile.SandboxRouting)
	}
	fmt.Fprintln(out, "  the copies hold no real bank details; `batchd validate FILE` checks the real ones without sending anything")
	return nil
}

func dropSamples(inbox string) error {
	if err := os.MkdirAll(inbox, 0o755); err != nil {
		return err
	}
	entries, err := Samples.ReadDir("samples")
	if err != nil {
		return err
	}
	for _, e := range entries {
		b, err := Samples.ReadFile("samples/" + e.Name())
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(inbox, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// sandboxPost calls one of the sandbox's own endpoints (deposit, clock),
// which stand in for the service's dashboard; the API client has no such
// calls because the real service has none.
func sandboxPost(ctx context.Context, base, path string, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+Key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return errors.New(path + ": " + resp.Status + ": " + string(msg))
	}
	return nil
}
