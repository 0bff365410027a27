package config

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/batchd/batchd/internal/payment"
)

// Validate checks every value and the API key against api.mode, and returns
// all findings joined (each a *FieldError naming its key). It also resolves
// schedule.timezone for Location. Parse and Load call it; call it yourself
// only on a Config built in code.
func (c *Config) Validate() error {
	return c.validate(true).join()
}

// validate collects findings. checkKey is false when the key could not be
// loaded, so that the reason is reported once, not twice.
func (c *Config) validate(checkKey bool) findings {
	var f findings
	c.validateTop(&f)
	c.validateState(&f)
	c.validateAPI(&f, checkKey)
	c.validateSFTP(&f)
	c.validateIngest(&f)
	c.validateSubmit(&f)
	c.validateReconcile(&f)
	c.validateSchedule(&f)
	c.validateBackup(&f)
	c.validateWebhook(&f)
	if len(c.Report.Formats) == 0 {
		f.add(0, "report.formats", "report.formats: list at least one of csv, xlsx")
	}
	for i, v := range c.Report.Formats {
		oneOf(&f, "report.formats["+strconv.Itoa(i)+"]", v, "csv", "xlsx")
	}
	if c.Retention.KeepDays < 0 {
		f.add(0, "retention.keep_days", "retention.keep_days: must not be negative (0 keeps everything), got %d", c.Retention.KeepDays)
	}
	c.validateAdmin(&f)
	c.validateHealth(&f)
	checkNoKeys(&f, reflect.ValueOf(c).Elem(), "")
	return f
}

// checkNoKeys refuses any value that holds what looks like an API key
// (pasted into the wrong key, or pulled in by ${VAR}): every value may end
// up in a log line, and the key must not.
func checkNoKeys(f *findings, v reflect.Value, prefix string) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		key, fv := joinPath(prefix, tag), v.Field(i)
		switch {
		case fv.Kind() == reflect.Struct:
			checkNoKeys(f, fv, key)
		case fv.Kind() == reflect.String && looksSecret(fv.String()):
			f.add(0, key, "%s: holds what looks like an API key; the key belongs in the file named by api.key_file, or in $%s", key, EnvAPIKey)
		case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.String:
			for j := range fv.Len() {
				if looksSecret(fv.Index(j).String()) {
					ikey := key + "[" + strconv.Itoa(j) + "]"
					f.add(0, ikey, "%s: holds what looks like an API key; the key belongs in the file named by api.key_file, or in $%s", ikey, EnvAPIKey)
				}
			}
		}
	}
}

func (c *Config) validateTop(f *findings) {
	checkAbsPath(f, "state_dir", c.StateDir, true)
	positive(f, "shutdown_timeout", c.ShutdownTimeout)
	oneOf(f, "log.level", c.Log.Level, "debug", "info", "warn", "error")
	oneOf(f, "log.format", c.Log.Format, "auto", "json", "text")
}

func (c *Config) validateAPI(f *findings, checkKey bool) {
	a := c.API
	checkBaseURL(f, "api.base_url", a.BaseURL)
	if c.ACH.BaseURL != "" {
		checkBaseURL(f, "ach.base_url", c.ACH.BaseURL)
	}
	if !providerWord.MatchString(c.ACH.Provider) {
		f.add(0, "ach.provider", "ach.provider: must be one lowercase word (the bank-linking provider's name in /funding-source/processor/{provider}), got %s", showValue(c.ACH.Provider))
	}
	modeOK := oneOf(f, "api.mode", a.Mode, ModeTest, ModeLive)
	checkAbsPath(f, "api.key_file", a.KeyFile, false)
	if !(a.Rate > 0) || math.IsInf(a.Rate, 0) {
		f.add(0, "api.rate", "api.rate: must be a number of requests per second above 0, got %v", a.Rate)
	}
	if a.Burst < 1 {
		f.add(0, "api.burst", "api.burst: must be at least 1, got %d", a.Burst)
	}
	if a.Concurrency < 1 || a.Concurrency > 256 {
		f.add(0, "api.concurrency", "api.concurrency: must be between 1 and 256, got %d", a.Concurrency)
	}
	positive(f, "api.timeout", a.Timeout)
	c.validateAccounts(f)
	if checkKey && modeOK {
		if msg := keyModeProblem(c.apiKey.Reveal(), a.Mode); msg != "" {
			key := "api.mode"
			if c.apiKey.IsZero() {
				key = "api.key_file"
			}
			f.add(0, key, "%s", msg)
		}
	}
}

// validateAccounts checks api.accounts and the api.store tokenizing
// needs: without a store no token can be asked for or used.
func (c *Config) validateAccounts(f *findings) {
	a := c.API
	if !oneOf(f, "api.accounts", a.Accounts, AccountsRaw, AccountsTokenize) || a.Accounts != AccountsTokenize {
		return
	}
	switch {
	case strings.TrimSpace(a.Store) == "":
		f.add(0, "api.store", "api.store: required when api.accounts is tokenize; set it to the store the tokens are kept under (such as your company's name, up to %d characters), or set api.accounts: raw", maxStore)
	case len(a.Store) > maxStore:
		f.add(0, "api.store", "api.store: at most %d characters, got %d", maxStore, len(a.Store))
	}
}

func (c *Config) validateSFTP(f *findings) {
	s := c.SFTP
	if s.Address != "" {
		checkHostPort(f, "sftp.address", s.Address, false)
		required(f, "sftp.user", s.User, "sftp.address is set")
		required(f, "sftp.identity_file", s.IdentityFile, "sftp.address is set")
		if s.KnownHosts == "" {
			f.add(0, "sftp.known_hosts", "sftp.known_hosts: required when sftp.address is set; batchd always verifies the server's host key and has no option to skip it")
		}
	}
	checkAbsPath(f, "sftp.identity_file", s.IdentityFile, false)
	checkAbsPath(f, "sftp.known_hosts", s.KnownHosts, false)
	if s.Claim != "" && !path.IsAbs(s.Claim) {
		f.add(0, "sftp.claim", "sftp.claim: must be an absolute path on the SFTP server, got %s", showValue(s.Claim))
	}
	dirs := []struct{ key, dir string }{
		{"sftp.inbox", s.Inbox}, {"sftp.archive", s.Archive},
		{"sftp.failed", s.Failed}, {"sftp.outbox", s.Outbox},
	}
	for i, d := range dirs {
		if d.dir == "" {
			f.add(0, d.key, "%s: must not be empty", d.key)
			continue
		}
		for _, e := range dirs[:i] {
			if e.dir != "" && path.Clean(e.dir) == path.Clean(d.dir) {
				f.add(0, d.key, "%s: must differ from %s (both are %s)", d.key, e.key, showValue(d.dir))
			}
		}
	}
	positive(f, "sftp.dial_timeout", s.DialTimeout)
	oneOf(f, "sftp.temp_upload", s.TempUpload, TempUploadDot, TempUploadSuffix, TempUploadNone)
	if s.Keepalive < 0 {
		f.add(0, "sftp.keepalive", "sftp.keepalive: must not be negative (0 disables keepalives), got %s", s.Keepalive)
	}
}

func (c *Config) validateIngest(f *findings) {
	in := c.Ingest
	if strings.TrimSpace(strings.ReplaceAll(in.Pattern, ",", "")) == "" {
		f.add(0, "ingest.pattern", "ingest.pattern: must not be empty (the default is \"*.csv, *.xlsx\")")
	}
	for _, p := range strings.Split(in.Pattern, ",") {
		p = strings.TrimSpace(p)
		switch _, err := path.Match(p, ""); {
		case p == "":
		case err != nil:
			f.add(0, "ingest.pattern", "ingest.pattern: not a valid pattern (see Go's path.Match; separate "+
				"patterns with commas: \"*.csv, *.xlsx\"): %s", showValue(p))
		case strings.Contains(p, "/"):
			f.add(0, "ingest.pattern", "ingest.pattern: matches file names in sftp.inbox and must not contain \"/\", got %s", showValue(p))
		}
	}
	if strings.ContainsAny(in.Sheet, "[]:*?/\\") || len([]rune(in.Sheet)) > 31 {
		f.add(0, "ingest.sheet", "ingest.sheet: %s cannot be a sheet's name (at most 31 characters, none of [ ] : * ? / \\); "+
			"name the sheet as its tab shows it, or leave ingest.sheet out to read the first sheet", showValue(in.Sheet))
	}
	if in.StableFor < 0 || (in.StableFor == 0 && !in.DoneMarker) {
		f.add(0, "ingest.stable_for", "ingest.stable_for: must be above 0 (0 is allowed only with ingest.done_marker: true), got %s", in.StableFor)
	}
	switch {
	case in.MaxWait < 0:
		f.add(0, "ingest.max_wait", "ingest.max_wait: must not be negative (0s means 2 × ingest.stable_for), got %s", in.MaxWait)
	case in.MaxWait > 0 && in.MaxWait < in.StableFor && !in.DoneMarker:
		f.add(0, "ingest.max_wait", "ingest.max_wait: must be at least ingest.stable_for (%s), or a file first seen in a run could never be read by it; set it to %s or more, or 0s for 2 × stable_for, got %s", in.StableFor, in.StableFor, in.MaxWait)
	}
	wait := in.MaxWait
	if wait == 0 {
		wait = 2 * in.StableFor
	}
	if limit := c.Schedule.IngestTimeout; limit > 0 && wait >= limit {
		f.add(0, "ingest.max_wait", "ingest.max_wait: waiting %s for files to settle must leave an ingest run time to read them within schedule.ingest_timeout (%s); lower ingest.max_wait (or ingest.stable_for) or raise schedule.ingest_timeout", wait, limit)
	}
	oneOf(f, "ingest.on_invalid", in.OnInvalid, OnInvalidRejectFile, OnInvalidSkipRows)
	oneOf(f, "ingest.on_account_change", in.OnAccountChange, "warn", "hold", "allow")
	for i, col := range in.IgnoreColumns {
		if strings.TrimSpace(col) == "" {
			key := "ingest.ignore_columns[" + strconv.Itoa(i) + "]"
			f.add(0, key, "%s: must not be empty", key)
		}
	}
	for i, e := range in.Kinds {
		if _, _, ok := pinnedKind(e); !ok {
			key := "ingest.kinds[" + strconv.Itoa(i) + "]"
			f.add(0, key, "%s: want PATTERN=KIND, a file-name pattern (like stop-*.csv) and one of %s, got %s",
				key, strings.Join(payment.KindNames(), ", "), showValue(e))
		}
	}
	positive(f, "ingest.claim_timeout", in.ClaimTimeout)
	positive(f, "ingest.routing_refresh", in.RoutingRefresh)
	if in.Delimiter != "," && in.Delimiter != ";" && in.Delimiter != "\t" {
		f.add(0, "ingest.delimiter", "ingest.delimiter: must be \",\", \";\" or a tab (\"\\t\" in double quotes), got %s", showValue(in.Delimiter))
	}
	if in.MaxFileBytes < 1 {
		f.add(0, "ingest.max_file_bytes", "ingest.max_file_bytes: must be at least 1, got %d", in.MaxFileBytes)
	}
}

func (c *Config) validateSubmit(f *findings) {
	s := c.Submit
	positive(f, "submit.resolve_after", s.ResolveAfter)
	for i, r := range s.VoidOnRisk {
		oneOf(f, "submit.void_on_risk["+strconv.Itoa(i)+"]", r, "Pass", "Fail", "Risky")
	}
	if s.MaxAttempts < 1 {
		f.add(0, "submit.max_attempts", "submit.max_attempts: must be at least 1, got %d", s.MaxAttempts)
	}
	positive(f, "submit.backoff_max", s.BackoffMax)
	positive(f, "submit.progress_interval", s.ProgressInterval)
}

func (c *Config) validateReconcile(f *findings) {
	r := c.Reconcile
	for _, d := range []struct {
		key string
		n   int
	}{
		{"reconcile.lookback_days", r.LookbackDays},
		{"reconcile.stuck_after_business_days", r.StuckAfterBusinessDays},
		{"reconcile.exception_days", r.ExceptionDays},
		{"reconcile.keep_days", r.KeepDays},
		{"reconcile.full_walk_days", r.FullWalkDays},
	} {
		if d.n < 1 {
			f.add(0, d.key, "%s: must be at least 1, got %d", d.key, d.n)
		}
	}
}

func (c *Config) validateBackup(f *findings) {
	b := c.Backup
	if b.Schedule != "" {
		checkCron(f, "backup.schedule", b.Schedule)
	}
	checkAbsPath(f, "backup.dir", b.Dir, false)
	if b.Keep < 1 {
		f.add(0, "backup.keep", "backup.keep: must be at least 1, got %d", b.Keep)
	}
	if b.Upload && c.SFTP.Address == "" {
		f.add(0, "backup.upload", "backup.upload: needs sftp.address (snapshots are uploaded to sftp.backups)")
	}
	if b.Upload && c.SFTP.Backups == "" {
		f.add(0, "sftp.backups", "sftp.backups: must not be empty when backup.upload is true")
	}
}

func (c *Config) validateSchedule(f *findings) {
	s := c.Schedule
	c.loc = nil
	if s.Timezone == "" {
		f.add(0, "schedule.timezone", "schedule.timezone: must not be empty (use \"UTC\")")
	} else if loc, err := time.LoadLocation(s.Timezone); err != nil {
		f.add(0, "schedule.timezone", "schedule.timezone: unknown time zone %s; use an IANA name such as \"UTC\" or \"America/New_York\"", showValue(s.Timezone))
	} else {
		c.loc = loc
	}
	checkCron(f, "schedule.ingest", s.Ingest)
	checkCron(f, "schedule.submit", s.Submit)
	checkCron(f, "schedule.reconcile", s.Reconcile)
	for _, t := range []struct {
		key string
		d   Duration
	}{
		{"schedule.ingest_timeout", s.IngestTimeout}, {"schedule.submit_timeout", s.SubmitTimeout},
		{"schedule.reconcile_timeout", s.ReconcileTimeout}, {"schedule.backup_timeout", s.BackupTimeout},
		{"schedule.prune_timeout", s.PruneTimeout}, {"schedule.webhook_timeout", s.WebhookTimeout},
	} {
		checkRunTimeout(f, t.key, t.d)
	}
}

// minRunTimeout is the shortest run deadline accepted: below it even an
// idle run (a login, one listing) would be cut off every time.
const minRunTimeout = Duration(time.Second)

// checkRunTimeout refuses a run deadline that is not a duration of at
// least minRunTimeout.
func checkRunTimeout(f *findings, key string, d Duration) {
	if d < minRunTimeout {
		f.add(0, key, "%s: must be a duration of at least %s such as \"15m\" (how long one run may last before it is cancelled), got %s", key, minRunTimeout, d)
	}
}

// checkCron accepts what the scheduler will parse: cron.ParseStandard's
// five fields or descriptors. A TZ= prefix is refused because the zone is
// schedule.timezone's job, and because robfig/cron v3.0.1 panics on some
// malformed TZ= specs.
func checkCron(f *findings, key, spec string) {
	switch {
	case strings.TrimSpace(spec) == "":
		f.add(0, key, "%s: must not be empty", key)
	case strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ="):
		f.add(0, key, "%s: set the time zone with schedule.timezone, not a TZ= prefix", key)
	default:
		if err := parseCron(spec); err != nil {
			f.add(0, key, "%s: not a valid schedule %s: %v (want five cron fields such as \"0 6 * * *\" or a descriptor such as \"@every 5m\")", key, showValue(spec), safeErr(err))
		}
	}
}

// parseCron turns a panic inside the cron parser into an error, so that no
// input file can crash batchd. It also refuses "@every" below one second,
// which robfig/cron would silently run every second (even "@every -5m").
func parseCron(spec string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unparseable")
		}
	}()
	if rest, ok := strings.CutPrefix(spec, "@every "); ok {
		d, perr := time.ParseDuration(rest)
		if perr == nil && d < time.Second {
			return fmt.Errorf("@every needs a duration of at least 1s")
		}
	}
	_, err = cron.ParseStandard(spec)
	return err
}

// providerWord is a bank-linking provider's path word.
var providerWord = regexp.MustCompile(`^[a-z]{1,32}$`)

func checkBaseURL(f *findings, key, raw string) {
	if raw == "" {
		f.add(0, key, "%s: required (the API's https URL)", key)
		return
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the whole URL, which may hold credentials.
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err
		}
		f.add(0, key, "%s: not a URL: %s", key, safeErr(err))
		return
	}
	switch {
	case u.User != nil:
		f.add(0, key, "%s: must not contain a user name or password", key)
	case u.Scheme != "https" && u.Scheme != "http":
		f.add(0, key, "%s: must be an https URL, got %s", key, showValue(raw))
	case u.Hostname() == "":
		f.add(0, key, "%s: has no host: %s", key, showValue(raw))
	case u.RawQuery != "" || u.Fragment != "":
		f.add(0, key, "%s: must not have a query or fragment: %s", key, showValue(raw))
	case u.Scheme == "http" && !isLoopback(u.Hostname()):
		f.add(0, key, "%s: http:// is allowed only to a loopback host (localhost, 127.0.0.1, ::1), such as a local sandbox; use https:// for %s", key, showValue(u.Hostname()))
	}
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkHostPort checks a host:port. An empty host (":9464", all
// interfaces) is allowed only where emptyHost says so.
func checkHostPort(f *findings, key, v string, emptyHost bool) {
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		f.add(0, key, "%s: want host:port, got %s", key, showValue(v))
		return
	}
	if host == "" && !emptyHost {
		f.add(0, key, "%s: has no host: %s", key, showValue(v))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		f.add(0, key, "%s: port must be a number from 1 to 65535, got %s", key, showValue(port))
	}
}

// checkAbsPath insists on absolute local paths: a daemon's working
// directory is not something an administrator thinks about.
func checkAbsPath(f *findings, key, p string, needed bool) {
	switch {
	case p == "" && needed:
		f.add(0, key, "%s: required", key)
	case p != "" && !filepath.IsAbs(p):
		f.add(0, key, "%s: must be an absolute path, got %s", key, showValue(p))
	}
}

func required(f *findings, key, v, because string) {
	if v == "" {
		f.add(0, key, "%s: required when %s", key, because)
	}
}

func positive(f *findings, key string, d Duration) {
	if d <= 0 {
		f.add(0, key, "%s: must be a duration above 0 such as \"30s\", got %s", key, d)
	}
}

// oneOf reports v unless it is one of allowed, and says whether it was.
func oneOf(f *findings, key, v string, allowed ...string) bool {
	if slices.Contains(allowed, v) {
		return true
	}
	f.add(0, key, "%s: must be %s, got %s", key, orList(allowed), showValue(v))
	return false
}

// orList writes "a, b or c".
func orList(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
