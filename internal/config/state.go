package config

import (
	"strings"
	"time"
)

// Values of state.backend.
const (
	// BackendBbolt keeps the ledger in one file under state_dir: no
	// server, one instance.
	BackendBbolt = "bbolt"
	// BackendPostgres keeps the ledger in a PostgreSQL database that
	// several instances share, one of them leading under a lease.
	BackendPostgres = "postgres"
)

// EnvPostgresDSN is the variable holding the PostgreSQL DSN when
// state.postgres_dsn_file is empty.
const EnvPostgresDSN = "BATCHD_POSTGRES_DSN"

// Bounds of the leader lease.
const (
	// DefaultLeaseTTL is state.lease_ttl's default.
	DefaultLeaseTTL = 15 * time.Second
	// MinLeaseTTL is the shortest lease accepted: shorter, and a
	// garbage-collection pause or a slow disk loses the lease in normal
	// operation, and leadership flaps.
	MinLeaseTTL = 3 * time.Second
)

// maxDSNFileBytes bounds the read of state.postgres_dsn_file: a DSN is a
// line, so anything larger is the wrong file.
const maxDSNFileBytes = 4096

// StateConfig is the state section: where the ledger is kept, and the
// leader lease of instances sharing one (PostgreSQL). The DSN is never
// part of the YAML: it holds the database password.
type StateConfig struct {
	// Backend is BackendBbolt (the default: a file under state_dir) or
	// BackendPostgres.
	Backend string `yaml:"backend"`
	// PostgresDSNFile names the file holding the PostgreSQL DSN, private
	// to its owner like api.key_file. Empty means $BATCHD_POSTGRES_DSN.
	// Only with backend postgres.
	PostgresDSNFile string `yaml:"postgres_dsn_file"`
	// LeaseTTL is how long the leader's lease lasts unless renewed: a
	// standby takes over at most about this long after the leader stops.
	// At least MinLeaseTTL.
	LeaseTTL Duration `yaml:"lease_ttl"`
	// SendWindow is how long after a create intent is recorded its
	// request may still leave (its send-by deadline). It must be under
	// half of LeaseTTL, so that a leader that lost its lease can no longer
	// send by the time another has taken over and looks its rows up. 0
	// means LeaseTTL/3 (see Window).
	SendWindow Duration `yaml:"send_window"`
	// AccountKeysFile names the key ring that seals full account numbers
	// in the ledger (internal/acctseal), private to its owner like
	// api.key_file, never in the YAML. Empty: the file account-keys in
	// state_dir, made on first open with the bbolt backend; required
	// with postgres (a config error without it), the same ring on every
	// instance: a ring made on one host would leave the others unable
	// to read the rows.
	AccountKeysFile string `yaml:"account_keys_file"`
}

// Window is the effective send window: SendWindow, or LeaseTTL/3 when it
// is 0.
func (s StateConfig) Window() time.Duration {
	if s.SendWindow > 0 {
		return s.SendWindow.Std()
	}
	return s.LeaseTTL.Std() / 3
}

// PostgresDSN returns the PostgreSQL DSN, from state.postgres_dsn_file or
// $BATCHD_POSTGRES_DSN; "" with the bbolt backend. Never log it: it may
// hold a password.
func (c *Config) PostgresDSN() string { return c.postgresDSN.Reveal() }

// SetPostgresDSN sets the DSN of a Config built in code (tests).
func (c *Config) SetPostgresDSN(dsn string) { c.postgresDSN = NewSecret(dsn) }

func (c *Config) validateState(f *findings) {
	s := c.State
	if !oneOf(f, "state.backend", s.Backend, BackendBbolt, BackendPostgres) {
		return
	}
	if s.LeaseTTL.Std() < MinLeaseTTL {
		f.add(0, "state.lease_ttl", "state.lease_ttl: must be at least %s (a shorter lease is lost to a pause in normal operation), got %s",
			MinLeaseTTL, s.LeaseTTL)
	}
	switch {
	case s.SendWindow < 0:
		f.add(0, "state.send_window", "state.send_window: must not be negative (0 means a third of state.lease_ttl), got %s", s.SendWindow)
	case s.LeaseTTL > 0 && s.Window() >= s.LeaseTTL.Std()/2:
		f.add(0, "state.send_window", "state.send_window: must be under half of state.lease_ttl (%s), so that a leader that lost its lease "+
			"can no longer send once another has taken over; got %s", s.LeaseTTL.Std()/2, s.SendWindow)
	}
	if s.Backend == BackendBbolt {
		if s.PostgresDSNFile != "" {
			f.add(0, "state.postgres_dsn_file", "state.postgres_dsn_file: only with state.backend: postgres (the ledger is the bbolt file under state_dir)")
		}
		return
	}
	if dsnInPathKey(s.PostgresDSNFile) {
		// Not shown: it holds what looks like a DSN, password and all.
		f.add(0, "state.postgres_dsn_file", "state.postgres_dsn_file: holds what looks like a DSN (not shown), not a path; "+
			"put the DSN in a file private to batchd's user and name that file here, or set $%s", EnvPostgresDSN)
	} else {
		checkAbsPath(f, "state.postgres_dsn_file", s.PostgresDSNFile, false)
	}
	checkAbsPath(f, "state.account_keys_file", s.AccountKeysFile, false)
	if s.AccountKeysFile == "" {
		// A ring made on one host would leave the others unable to read
		// the rows, so none is made here: without one the numbers would
		// be stored in the clear, which batchd never does.
		f.add(0, "state.account_keys_file", "state.account_keys_file: required with state.backend: postgres, so that no account "+
			"number is stored in the clear: name the key ring file (batchd init makes it when it is missing) and copy it, "+
			"mode 0600, to the same path on every instance")
	}
	if c.Backup.Schedule != "" {
		f.add(0, "backup.schedule", "backup.schedule: batchd's snapshots are of the bbolt file; with state.backend: postgres set backup.schedule: \"\" "+
			"and back the database up with pg_dump or point-in-time recovery")
	}
}

// loadPostgresDSN sets c.postgresDSN from state.postgres_dsn_file, or
// from $BATCHD_POSTGRES_DSN when the file is not named, with the postgres
// backend. The file wins when both are set, as api.key_file does. No
// finding quotes the DSN or the file's contents.
func (c *Config) loadPostgresDSN(env Env) *FieldError {
	s := c.State
	if s.Backend != BackendPostgres {
		return nil
	}
	if s.PostgresDSNFile == "" {
		v, _ := env.lookup(EnvPostgresDSN)
		v = strings.TrimSpace(v)
		if v == "" {
			return &FieldError{Key: "state.postgres_dsn_file", Msg: "state.backend is postgres but there is no DSN: set state.postgres_dsn_file " +
				"to a file holding it, or set $" + EnvPostgresDSN}
		}
		if msg := dsnShapeProblem(v); msg != "" {
			return &FieldError{Key: "state.postgres_dsn_file", Msg: "$" + EnvPostgresDSN + ": " + msg}
		}
		c.postgresDSN = NewSecret(v)
		return nil
	}
	if !strings.HasPrefix(s.PostgresDSNFile, "/") {
		return nil // validateState says so
	}
	return dsnFile.load(&c.postgresDSN, s.PostgresDSNFile, env)
}

// dsnShapeProblem refuses what cannot be a PostgreSQL DSN: several lines,
// or neither a postgres:// URL nor key=value settings. The driver checks
// the rest when it connects. The words never quote the DSN.
func dsnShapeProblem(dsn string) string {
	if strings.ContainsAny(dsn, "\r\n") {
		return "it holds several lines, not one DSN"
	}
	if !looksLikeDSN(dsn) {
		return "it is not a PostgreSQL DSN: want postgres://user@host:5432/dbname or host=… dbname=… settings"
	}
	return ""
}

// looksLikeDSN reports whether s is written as a PostgreSQL DSN: a URL or
// key=value settings.
func looksLikeDSN(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") || strings.Contains(s, "=")
}

// dsnInPathKey reports whether the value of state.postgres_dsn_file is a
// DSN rather than a path (an absolute path never is), so that it is
// refused without being quoted.
func dsnInPathKey(s string) bool { return !strings.HasPrefix(s, "/") && looksLikeDSN(s) }
