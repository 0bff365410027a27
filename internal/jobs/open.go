package jobs

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/acctseal"
	"github.com/batchd/batchd/internal/config"
	"github.com/batchd/batchd/internal/state"
)

// WatermarkName is the file in state_dir where a host keeps the highest
// write count it has seen of a shared ledger.
const WatermarkName = "ledger-watermark"

// openTimeout bounds the opening of a PostgreSQL ledger: connecting and
// applying the schema's migrations. Past it batchd stops with the error
// rather than hang at start on an unreachable database.
const openTimeout = 30 * time.Second

// OpenLedger opens the ledger state.backend names, with opts (its clock,
// Now, above all): the bbolt file under state_dir, or the PostgreSQL
// database of the DSN (config.PostgresDSN), whose send window is
// state.send_window's. It is the one place a backend is chosen; Open,
// OpenAt and the commands that read the ledger go through it. The
// file-only options (MustExist, NoSnapshots, Timeout) concern bbolt.
// Its errors name a database by host, port and name, never by its DSN.
//
// A PostgreSQL ledger is opened with fencing on: a write changes the
// ledger only from the instance that holds the leader lease.
func OpenLedger(cfg *config.Config, opts state.Options) (state.Ledger, error) {
	if err := withAccountKeys(cfg, &opts); err != nil {
		return nil, err
	}
	switch cfg.State.Backend {
	case config.BackendBbolt, "":
		db, err := state.Open(cfg.StateDir, opts)
		if err != nil {
			return nil, err
		}
		return db, nil
	case config.BackendPostgres:
		return openPostgres(cfg, opts)
	}
	return nil, fmt.Errorf("open the ledger: unknown state.backend %q (want %s or %s)", cfg.State.Backend, config.BackendBbolt, config.BackendPostgres)
}

// withAccountKeys gives opts the key ring state.account_keys_file names,
// unless the caller gave one. The file is read as every secret file is
// (config.ReadSecretFile: private to its owner, or a systemd credential).
func withAccountKeys(cfg *config.Config, opts *state.Options) (err error) {
	if opts.AccountKeys == nil && opts.AccountKeysFile == "" {
		opts.AccountKeys, err = AccountKeys(cfg)
	}
	return err
}

// AccountKeys is the key ring state.account_keys_file names, nil when it
// is empty (the ledger then uses the ring in state_dir).
func AccountKeys(cfg *config.Config) (*acctseal.Ring, error) {
	path := cfg.State.AccountKeysFile
	if path == "" {
		return nil, nil
	}
	text, err := config.ReadSecretFile(path, acctseal.MaxFileBytes, config.OSEnv)
	defer clear(text)
	if err != nil {
		return nil, fmt.Errorf("state.account_keys_file %s: %w", path, err)
	}
	ring, err := acctseal.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("state.account_keys_file %s: %w", path, err)
	}
	return ring, nil
}

// AccountKeysPath is the key ring file that seals the ledger's account
// numbers: state.account_keys_file, or the one the bbolt ledger makes in
// state_dir.
func AccountKeysPath(cfg *config.Config) string {
	if cfg.State.AccountKeysFile != "" {
		return cfg.State.AccountKeysFile
	}
	return filepath.Join(cfg.StateDir, acctseal.FileName)
}

// ReadAccountKeys reads the key ring file at AccountKeysPath, with the
// checks of a secret file; it makes none.
func ReadAccountKeys(cfg *config.Config) (*acctseal.Ring, error) {
	ring, err := AccountKeys(cfg)
	if err == nil && ring == nil {
		ring, err = acctseal.Load(AccountKeysPath(cfg))
	}
	return ring, err
}

// MayLead is a running batchd's daemon.Options.MayLead: it reads the key
// ring file again and hands it to db (state.Ledger.UseAccountKeys), so
// that an instance whose ring lacks the key the ledger seals with does
// not lead, one given the key may, and a key added to the file (batchd
// rekey while batchd runs) seals new rows from then on, which it logs
// once. Its errors name the file and the key id, never a key. The
// function it returns is called by one goroutine at a time.
func MayLead(cfg *config.Config, db state.Ledger, log *slog.Logger) func(leading bool) error {
	var newest uint32 // of the ring in use
	return func(leading bool) error {
		ring, err := ReadAccountKeys(cfg)
		if err != nil {
			return err
		}
		if err := db.UseAccountKeys(ring, leading); err != nil {
			return fmt.Errorf("the key ring %s: %w", AccountKeysPath(cfg), err)
		}
		if newest != 0 && ring.Newest() != newest {
			log.Info("the account key ring has a new key: new rows are sealed under it", "key", ring.Newest(),
				"file", AccountKeysPath(cfg), "leading", leading)
		}
		newest = ring.Newest()
		return nil
	}
}

func openPostgres(cfg *config.Config, opts state.Options) (state.Ledger, error) {
	// This host's memory of the highest write count it saw: a database
	// put back in time is noticed at takeover (state/watermark.go).
	opts.Watermark = filepath.Join(cfg.StateDir, WatermarkName)
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("open the ledger: create state_dir for this host's files: %w", err)
	}
	db, err := OpenPostgresDB(cfg, opts)
	if err != nil {
		return nil, err
	}
	return db, nil
}

// scrubbed is an error whose text had the DSN or its password taken out;
// it still unwraps to the original, for errors.Is.
type scrubbed struct {
	msg string
	err error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.err }

// scrubDSN returns err with the DSN and its password removed from its
// text: the backend promises never to quote them, and this keeps a driver
// error that does from reaching a log.
func scrubDSN(err error, dsn string) error {
	msg := err.Error()
	out := strings.ReplaceAll(msg, dsn, "(the DSN)")
	if pw := dsnPassword(dsn); pw != "" {
		out = strings.ReplaceAll(out, pw, "(password)")
	}
	if out == msg {
		return err
	}
	return &scrubbed{msg: out, err: err}
}

// dsnPassword is the password a DSN holds, as a URL's user information
// or a password=… setting; "" when none is found.
func dsnPassword(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			return pw
		}
	}
	for _, f := range strings.Fields(dsn) {
		if v, ok := strings.CutPrefix(f, "password="); ok {
			return strings.Trim(v, "'")
		}
	}
	return ""
}
