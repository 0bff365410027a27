// Package config is batchd's typed configuration: the YAML schema, its
// defaults, its validation and the loading of the API key, all in one place
// so that every other package reads plain, already-checked fields.
//
// A configuration is read with Load (or Parse, for tests). Both expand
// ${VAR} in scalar values, reject unknown keys, values of the wrong type and
// invalid values, and report every finding at once, each with the YAML line
// and the dotted key path (such as api.rate), so that an administrator can
// fix a file in one pass.
//
// The API key is never part of the YAML. It comes from the file named by
// api.key_file (systemd's LoadCredential puts it under
// $CREDENTIALS_DIRECTORY) or from $BATCHD_API_KEY, and it is kept in a
// Secret that does not print.
package config

import (
	"path"
	"strings"
	"time"

	"github.com/batchd/batchd/internal/payment"

	_ "time/tzdata" // schedule.timezone must load on machines without a zoneinfo database
)

// DefaultPath is the configuration file used when neither the --config flag
// nor $BATCHD_CONFIG names one.
const DefaultPath = "/etc/batchd/batchd.yaml"

// Names of the environment variables batchd itself reads.
const (
	EnvConfig = "BATCHD_CONFIG"  // path of the configuration file
	EnvAPIKey = "BATCHD_API_KEY" // the API key, when api.key_file is empty
)

// Values of api.mode. The mode must agree with the API key's prefix, so
// that a test deployment can never move real money and a live one never
// silently talks to the sandbox.
const (
	ModeTest = "test"
	ModeLive = "live"
)

// Values of ingest.on_invalid.
const (
	// OnInvalidRejectFile rejects the whole file when any row is invalid.
	OnInvalidRejectFile = "reject_file"
	// OnInvalidSkipRows submits the valid rows and reports the invalid ones.
	OnInvalidSkipRows = "skip_rows"
)

// Config is the whole of batchd's configuration. Field names follow the
// YAML keys; every field has been validated when Load or Parse returns it.
// Durations are Duration values; convert with Std.
//
// The zero Config is not useful: start from Default.
type Config struct {
	// StateDir holds the ledger database and the spool. Absolute path.
	StateDir string `yaml:"state_dir"`
	// State is where the ledger is kept (bbolt under StateDir, or
	// PostgreSQL) and the leader lease of a shared one.
	State StateConfig `yaml:"state"`
	// ShutdownTimeout bounds how long a stop waits for in-flight work.
	ShutdownTimeout Duration `yaml:"shutdown_timeout"`

	// The sections, one per concern; each type documents its keys.
	Log       LogConfig       `yaml:"log"`       // logging
	API       APIConfig       `yaml:"api"`       // the eCheck API
	ACH       ACHConfig       `yaml:"ach"`       // the ACH API (funding sources)
	SFTP      SFTPConfig      `yaml:"sftp"`      // the partner's SFTP server
	Ingest    IngestConfig    `yaml:"ingest"`    // picking up payment files
	Submit    SubmitConfig    `yaml:"submit"`    // creating checks
	Reconcile ReconcileConfig `yaml:"reconcile"` // following checks to the end
	Schedule  ScheduleConfig  `yaml:"schedule"`  // when each job runs
	Admin     AdminConfig     `yaml:"admin"`     // health and metrics endpoint
	Backup    BackupConfig    `yaml:"backup"`    // snapshots of the ledger
	Retention RetentionConfig `yaml:"retention"` // pruning finished batches
	Report    ReportConfig    `yaml:"report"`    // the reports' file formats
	Webhook   WebhookConfig   `yaml:"webhook"`   // the receiver of the service's events
	Health    HealthConfig    `yaml:"health"`    // when /healthz turns red during an outage

	apiKey        Secret         // from api.key_file or $BATCHD_API_KEY, never YAML
	webhookSecret Secret         // from webhook.secret_file, never YAML
	adminToken    Secret         // from admin.token_file, never YAML
	postgresDSN   Secret         // from state.postgres_dsn_file or $BATCHD_POSTGRES_DSN, never YAML
	loc           *time.Location // schedule.timezone, resolved by Validate
}

// LogConfig is the log section.
type LogConfig struct {
	// Level is debug, info, warn or error.
	Level string `yaml:"level"`
	// Format is json, text, or auto (text on a terminal, json otherwise).
	Format string `yaml:"format"`
}

// APIConfig is the api section: where the eCheck API is and how hard batchd
// may use it.
type APIConfig struct {
	// BaseURL is the API's base URL; https, or http to a loopback host only.
	BaseURL string `yaml:"base_url"`
	// Mode is ModeTest or ModeLive and must match the key's prefix.
	Mode string `yaml:"mode"`
	// KeyFile names the file holding the API key. Empty means $BATCHD_API_KEY.
	KeyFile string `yaml:"key_file"`
	// Rate is the ceiling of requests per second across all workers.
	Rate float64 `yaml:"rate"`
	// Burst is the token bucket's size.
	Burst int `yaml:"burst"`
	// Concurrency is the most API requests submit keeps in flight at once
	// (1..256): a ceiling, not a tuning knob. Within it the adaptive
	// limit (internal/inflight) keeps as many in flight as the rate and
	// the measured latency need (Little's law), fewer when requests fail.
	// It also sizes the HTTP connection pool.
	Concurrency int `yaml:"concurrency"`
	// Timeout bounds one HTTP request.
	Timeout Duration `yaml:"timeout"`
	// Accounts is how checks name the payee's bank account: AccountsRaw
	// (routing and account on every check) or AccountsTokenize (each
	// payee's details tokenized once, checks carry token and Store).
	Accounts string `yaml:"accounts"`
	// Store is the store tokens are kept under at the service (spec
	// §2.3), sent with every token; required with AccountsTokenize.
	Store string `yaml:"store"`
}

// Values of api.accounts.
const (
	// AccountsRaw sends the routing and account number with every check,
	// as batchd always did: the default.
	AccountsRaw = "raw"
	// AccountsTokenize tokenizes each payee's bank details before its
	// first check and sends token and store instead (README "Tokenized
	// accounts").
	AccountsTokenize = "tokenize"
)

// maxStore is the longest api.store the service takes (spec §2.3).
const maxStore = 128

// ACHConfig is the ach section: where the ACH API (/ach/v2) is, for
// funding-source files. It shares api's key, mode, rate limit and timeout:
// both APIs are one service, and one token bucket paces every call.
type ACHConfig struct {
	// BaseURL is the ACH API's host ({env_host} of spec §4.2); batchd adds
	// /ach/v2. Empty means api.base_url: the service serves both APIs on
	// one host.
	BaseURL string `yaml:"base_url"`
	// Provider is the bank-linking provider's word in
	// /funding-source/processor/{provider}: one lowercase word.
	Provider string `yaml:"provider"`
}

// SFTPConfig is the sftp section. An empty Address means no SFTP server is
// configured; when Address is set, User, IdentityFile and KnownHosts are
// required, because batchd always verifies the server's host key.
type SFTPConfig struct {
	Address      string   `yaml:"address"`       // host:port
	User         string   `yaml:"user"`          // login name
	IdentityFile string   `yaml:"identity_file"` // private key, absolute path
	KnownHosts   string   `yaml:"known_hosts"`   // known_hosts file, absolute path
	Inbox        string   `yaml:"inbox"`         // where payment files arrive
	Archive      string   `yaml:"archive"`       // where committed files go
	Failed       string   `yaml:"failed"`        // where rejected files go
	Outbox       string   `yaml:"outbox"`        // where reports are written
	DialTimeout  Duration `yaml:"dial_timeout"`  // TCP connect and SSH handshake
	Keepalive    Duration `yaml:"keepalive"`     // 0 disables keepalives
	// Claim is the parent of the claim folders: a file is renamed into
	// <claim>/<instance>/ (instance is the ledger's id) before it is
	// downloaded, so that no other batchd takes it. Empty means
	// <inbox>/.batchd (<inbox>/batchd-claims unless TempUpload is dot:
	// ingest.Options.NoDotNames).
	Claim string `yaml:"claim"`
	// Backups is the folder snapshots are uploaded to when
	// backup.upload is true.
	Backups string `yaml:"backups"`
	// TempUpload is how an upload is made to appear whole: TempUploadDot
	// (".name.<rand>.tmp", then rename), TempUploadSuffix
	// ("name.<rand>.partial", then rename, for servers that forbid
	// dotfiles) or TempUploadNone (the final name directly, then a
	// "<name>.done" marker, for servers that forbid rename).
	TempUpload string `yaml:"temp_upload"`
}

// Values of sftp.temp_upload.
const (
	TempUploadDot    = "dot"
	TempUploadSuffix = "suffix"
	TempUploadNone   = "none"
)

// IngestConfig is the ingest section: which files are picked up, when, and
// what happens to invalid rows.
type IngestConfig struct {
	// Pattern is a comma-separated list of path.Match patterns for file
	// names in the inbox ("*.csv, *.xlsx"); one pattern is a list of one.
	Pattern string `yaml:"pattern"`
	// StableFor is how long size and modification time must stay unchanged
	// before a file is read.
	StableFor Duration `yaml:"stable_for"`
	// MaxWait is the longest one ingest run waits for inbox files to
	// settle, whatever they do; files still changing then are left for the
	// next run. 0 means 2 × StableFor.
	MaxWait Duration `yaml:"max_wait"`
	// DoneMarker, when true, reads a file only once "<name>.done" exists.
	DoneMarker bool `yaml:"done_marker"`
	// OnInvalid is OnInvalidRejectFile or OnInvalidSkipRows.
	OnInvalid string `yaml:"on_invalid"`
	// OnAccountChange is what happens to a row paying a known payee to a
	// different account: "warn", "hold" or "allow" (internal/payee).
	OnAccountChange string `yaml:"on_account_change"`
	// IgnoreColumns are CSV headers accepted and ignored rather than
	// rejected as unknown.
	IgnoreColumns []string `yaml:"ignore_columns"`
	// MaxFileBytes is the largest file accepted, in bytes.
	MaxFileBytes int64 `yaml:"max_file_bytes"`
	// Delimiter separates the cells of a payment file: "," (the default),
	// ";" or "\t" for teams whose spreadsheet exports cannot use a comma.
	// Amounts always use a dot for decimals.
	Delimiter string `yaml:"delimiter"`
	// Sheet names the sheet of an XLSX file that holds the rows (matched
	// without regard to case); "" (the default) reads the first sheet.
	Sheet string `yaml:"sheet"`
	// Kinds pins the kind of the files whose names match a pattern
	// (path.Match, like Pattern), each entry PATTERN=KIND with a kind's
	// name (payment.KindNames): "stop-*.csv=cancels". A file no pattern
	// names is told by its header; a file two patterns of different kinds
	// name is refused.
	Kinds []string `yaml:"kinds"`
	// ClaimTimeout is how long a claim may sit untouched in another
	// instance's claim folder before this instance takes the file back
	// (that instance is taken to be dead).
	ClaimTimeout Duration `yaml:"claim_timeout"`
	// CheckRouting asks the service's bank directory about each routing
	// number of a payment file, once per number (kept in the ledger for
	// RoutingRefresh): a number it knows no bank for refuses its rows, as
	// an invalid row; a directory that cannot be asked refuses nothing.
	CheckRouting bool `yaml:"check_routing"`
	// RoutingRefresh is how long the directory's answer is trusted.
	RoutingRefresh Duration `yaml:"routing_refresh"`
}

// SubmitConfig is the submit section.
type SubmitConfig struct {
	// ResolveAfter is how long a row whose create answer was lost waits
	// before batchd looks it up by label and number.
	ResolveAfter Duration `yaml:"resolve_after"`
	// VoidOnRisk lists basic-verification results (Pass, Fail, Risky) whose
	// checks batchd voids right after creating them.
	VoidOnRisk []string `yaml:"void_on_risk"`
	// MaxAttempts bounds the tries of one request on retryable errors.
	MaxAttempts int `yaml:"max_attempts"`
	// BackoffMax caps the delay between retries.
	BackoffMax Duration `yaml:"backoff_max"`
	// ProgressInterval is how often a running submit logs its progress.
	ProgressInterval Duration `yaml:"progress_interval"`
}

// ReconcileConfig is the reconcile section. All values are counts of days.
type ReconcileConfig struct {
	// LookbackDays is how far back the check listing reaches.
	LookbackDays int `yaml:"lookback_days"`
	// StuckAfterBusinessDays flags a check without progress for this long.
	StuckAfterBusinessDays int `yaml:"stuck_after_business_days"`
	// ExceptionDays is how many daily exceptions reports list a check that
	// ended not paid (returned by the service, voided), counted from the
	// day batchd first recorded it so: long enough for a person to act on
	// it, short enough that the report stays a list of things to do.
	ExceptionDays int `yaml:"exception_days"`
	// KeepDays is how long local copies of reports are kept under
	// state_dir/reports; the SFTP outbox is never pruned.
	KeepDays int `yaml:"keep_days"`
	// FullWalkDays is how often reconcile still lists every check of its
	// window: the daily run reads only the checks not final (and, without
	// webhooks, lists the dates since its last listing), and this catches
	// what a dropped delivery or a list that once left a check out hid.
	FullWalkDays int `yaml:"full_walk_days"`
}

// ScheduleConfig is the schedule section. Each job's spec is a standard
// five-field cron expression or a descriptor such as "@every 5m" or
// "@daily", evaluated in Timezone.
type ScheduleConfig struct {
	Timezone  string `yaml:"timezone"`  // IANA zone name; see Config.Location
	Ingest    string `yaml:"ingest"`    // spec of the ingest job
	Submit    string `yaml:"submit"`    // spec of the submit job
	Reconcile string `yaml:"reconcile"` // spec of the reconcile job

	// The run deadlines: past its job's timeout a run is cancelled (it
	// stops cleanly, as on SIGTERM) and recorded failed with source
	// "timeout"; the next tick runs the job again. A timeout may exceed
	// the schedule's period: the ticks that come meanwhile are skipped.
	IngestTimeout    Duration `yaml:"ingest_timeout"`    // an ingest run (default 15m)
	SubmitTimeout    Duration `yaml:"submit_timeout"`    // a submit run: all pending rows at api.rate (default 6h)
	ReconcileTimeout Duration `yaml:"reconcile_timeout"` // a reconcile run (default 2h)
	BackupTimeout    Duration `yaml:"backup_timeout"`    // a backup run, upload included (default 1h)
	PruneTimeout     Duration `yaml:"prune_timeout"`     // a prune run (default 1h)
	WebhookTimeout   Duration `yaml:"webhook_timeout"`   // a webhook registration run (default 5m)
}

// BackupConfig is the backup section: the daemon's own snapshots of the
// ledger. Schedule empty means the daemon takes none (batchd backup still
// works by hand).
type BackupConfig struct {
	// Schedule is a cron spec, as in the schedule section.
	Schedule string `yaml:"schedule"`
	// Dir is where snapshots are written; absolute. Empty means
	// <state_dir>/backups.
	Dir string `yaml:"dir"`
	// Keep is how many snapshots are kept in Dir (the newest).
	Keep int `yaml:"keep"`
	// Upload also puts each snapshot in sftp.backups on the SFTP server.
	Upload bool `yaml:"upload"`
}

// RetentionConfig is the retention section.
type RetentionConfig struct {
	// KeepDays is how long a batch whose every row is final stays in the
	// ledger after its last change; 0 keeps everything. The daemon prunes
	// once a day, after reconcile's schedule.
	KeepDays int `yaml:"keep_days"`
}

// ReportConfig is the report section.
type ReportConfig struct {
	// Formats lists the formats every report is written in: "csv" (for
	// machines) and "xlsx" (typed cells, for people); at least one.
	Formats []string `yaml:"formats"`
}

// AdminConfig is the admin section: the HTTP listener for health checks and
// metrics.
type AdminConfig struct {
	// Listen is host:port; empty disables the admin server.
	Listen string `yaml:"listen"`
	// Hosts are the names (or name:port) a request's Host may carry
	// besides the listen address itself (and, on loopback, localhost):
	// a reverse proxy's name, or the host's name for a remote scraper.
	// Any other Host is refused, against DNS rebinding.
	Hosts []string `yaml:"hosts"`
	// TokenFile, when set, names a file holding the bearer token the POST
	// endpoints (job triggers) require; GET /healthz and /metrics stay
	// open. Private to batchd's user, like api.key_file.
	TokenFile string `yaml:"token_file"`
}

// Default returns a Config holding every default. It has no api.base_url
// and no API key, so it does not validate until those are set.
func Default() *Config {
	return &Config{
		StateDir:        "/var/lib/batchd",
		State:           StateConfig{Backend: BackendBbolt, LeaseTTL: Duration(DefaultLeaseTTL)},
		ShutdownTimeout: Duration(30 * time.Second),
		Log:             LogConfig{Level: "info", Format: "auto"},
		API: APIConfig{
			Mode:        ModeTest,
			Rate:        10,
			Burst:       10,
			Concurrency: 64,
			Timeout:     Duration(30 * time.Second),
			Accounts:    AccountsRaw,
		},
		ACH: ACHConfig{Provider: "plaid"},
		SFTP: SFTPConfig{
			Inbox:       "/inbox",
			Archive:     "/archive",
			Failed:      "/failed",
			Outbox:      "/outbox",
			DialTimeout: Duration(10 * time.Second),
			Keepalive:   Duration(15 * time.Second),
			Backups:     "/backups",
			TempUpload:  TempUploadDot,
		},
		Ingest: IngestConfig{
			Pattern:         "*.csv, *.xlsx",
			StableFor:       Duration(30 * time.Second),
			OnInvalid:       OnInvalidRejectFile,
			OnAccountChange: "warn",
			IgnoreColumns:   []string{},
			Kinds:           []string{},
			MaxFileBytes:    256 << 20,
			ClaimTimeout:    Duration(time.Hour),
			Delimiter:       ",",
			CheckRouting:    true,
			RoutingRefresh:  Duration(30 * 24 * time.Hour),
		},
		Submit: SubmitConfig{
			ResolveAfter:     Duration(2 * time.Minute),
			VoidOnRisk:       []string{},
			MaxAttempts:      10,
			BackoffMax:       Duration(time.Minute),
			ProgressInterval: Duration(10 * time.Second),
		},
		Reconcile: ReconcileConfig{LookbackDays: 60, StuckAfterBusinessDays: 5, ExceptionDays: 7, KeepDays: 90, FullWalkDays: 7},
		Schedule: ScheduleConfig{
			Timezone:  "UTC",
			Ingest:    "@every 5m",
			Submit:    "@every 5m",
			Reconcile: "0 6 * * *",
			// Ingest: max_wait plus a 256 MiB file over a slow link;
			// submit: 216,000 rows at the default api.rate of 10/s;
			// the daily jobs: well within their day.
			IngestTimeout:    Duration(15 * time.Minute),
			SubmitTimeout:    Duration(6 * time.Hour),
			ReconcileTimeout: Duration(2 * time.Hour),
			BackupTimeout:    Duration(time.Hour),
			PruneTimeout:     Duration(time.Hour),
			WebhookTimeout:   Duration(5 * time.Minute),
		},
		Admin:     AdminConfig{Listen: "127.0.0.1:9464", Hosts: []string{}},
		Backup:    BackupConfig{Schedule: "30 5 * * *", Keep: 7}, // "" with postgres: followBackend
		Retention: RetentionConfig{KeepDays: 0},
		Report:    ReportConfig{Formats: []string{"csv", "xlsx"}},
		Webhook:   WebhookConfig{Path: "/webhook", Rate: 20},
		Health:    HealthConfig{FailingAfter: Duration(DefaultFailingAfter)},
	}
}

// followBackend applies the defaults that depend on state.backend to the
// keys the file did not set (set reports whether it did): batchd's
// snapshots are of the bbolt file, so with postgres backup.schedule
// defaults to "" (none; the database is backed up with its own tools),
// rather than to a schedule that Validate then refuses until the
// administrator writes backup.schedule: "" by hand.
func (c *Config) followBackend(set func(key string) bool) {
	if c.State.Backend == BackendPostgres && !set("backup.schedule") {
		c.Backup.Schedule = ""
	}
}

// Path chooses the configuration file: the --config flag's value when set,
// else $BATCHD_CONFIG, else DefaultPath. getenv is os.Getenv in main and a
// stub in tests.
func Path(flagValue string, getenv func(string) string) string {
	if flagValue != "" {
		return flagValue
	}
	if getenv != nil {
		if p := getenv(EnvConfig); p != "" {
			return p
		}
	}
	return DefaultPath
}

// APIKey returns the API key for the Authorization header. Never log it.
func (c *Config) APIKey() string { return c.apiKey.Reveal() }

// SetAPIKey sets the API key of a Config built in code (Default and field
// assignments) rather than by Load; Validate then checks it against
// api.mode. Surrounding whitespace is trimmed.
func (c *Config) SetAPIKey(key string) { c.apiKey = NewSecret(key) }

// Location is schedule.timezone as a *time.Location, for the scheduler and
// for business-day arithmetic. It falls back to UTC only for a Config that
// was never validated and has an unloadable zone.
func (c *Config) Location() *time.Location {
	if c.loc != nil {
		return c.loc
	}
	if loc, err := time.LoadLocation(c.Schedule.Timezone); err == nil {
		return loc
	}
	return time.UTC
}

// ACHBaseURL is ach.base_url, or api.base_url when it is empty: the host
// below which the ACH API lives at /ach/v2.
func (c *Config) ACHBaseURL() string {
	if c.ACH.BaseURL != "" {
		return c.ACH.BaseURL
	}
	return c.API.BaseURL
}

// BackupDir is backup.dir, or <state_dir>/backups when it is empty.
func (c *Config) BackupDir() string {
	if c.Backup.Dir != "" {
		return c.Backup.Dir
	}
	return c.StateDir + "/backups"
}

// PinnedKinds reads ingest.kinds: each pattern and the kind it pins. An
// entry validation refuses is left out.
func (in IngestConfig) PinnedKinds() map[string]payment.BatchKind {
	out := map[string]payment.BatchKind{}
	for _, e := range in.Kinds {
		if pat, kind, ok := pinnedKind(e); ok {
			out[pat] = kind
		}
	}
	return out
}

// pinnedKind reads one ingest.kinds entry, PATTERN=KIND.
func pinnedKind(entry string) (string, payment.BatchKind, bool) {
	pat, name, ok := strings.Cut(entry, "=")
	pat, name = strings.TrimSpace(pat), strings.TrimSpace(name)
	kind, known := payment.KindNamed(name)
	if _, err := path.Match(pat, ""); !ok || !known || pat == "" || err != nil {
		return "", "", false
	}
	return pat, kind, true
}
