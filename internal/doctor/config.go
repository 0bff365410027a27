package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/batchd/batchd/internal/config"
)

// Config loads and validates the configuration at path with load, as
// every command does (config.Load: the YAML, its values, and the secret
// files it reads). It returns the configuration, nil when it does not load, and
// one result per finding: a secret file that others may read is filed
// under "secrets" with its chmod, any other finding under "config".
func Config(path string, load func(path string) (*config.Config, error)) (*config.Config, []Result) {
	cfg, err := load(path)
	if err == nil {
		return cfg, []Result{ok("config", path+" loads and is valid")}
	}
	var res []Result
	for _, e := range flatten(err) {
		res = append(res, configFinding(path, e))
	}
	return nil, res
}

// flatten lists the errors errors.Join put together.
func flatten(err error) []error {
	if j, isJoin := err.(interface{ Unwrap() []error }); isJoin {
		return j.Unwrap()
	}
	return []error{err}
}

func configFinding(path string, err error) Result {
	var fe *config.FieldError
	if !errors.As(err, &fe) {
		return fail("config", err.Error(), "make "+path+" readable by this user, or name the file with --config")
	}
	where := ""
	if fe.Line > 0 {
		where = "line " + strconv.Itoa(fe.Line) + ": "
	}
	if config.IsSecretModeError(fe.Err) {
		what, fix := splitFix(fe.Msg)
		return fail("secrets", where+what, fix)
	}
	what, fix := splitFix(fe.Msg)
	if fix == "" {
		fix = fmt.Sprintf("correct %s in %s", orKey(fe.Key), path)
	}
	return fail("config", where+what, fix)
}

func orKey(k string) string {
	if k == "" {
		return "the file"
	}
	return k
}

// secretFile is one configured file that holds a secret.
type secretFile struct{ key, path string }

func secretFiles(cfg *config.Config) []secretFile {
	var out []secretFile
	add := func(key, path string) {
		if path != "" {
			out = append(out, secretFile{key, path})
		}
	}
	add("api.key_file", cfg.API.KeyFile)
	if cfg.Webhook.Enabled() {
		add("webhook.secret_file", cfg.Webhook.SecretFile)
	}
	add("admin.token_file", cfg.Admin.TokenFile)
	if cfg.State.Backend == config.BackendPostgres {
		add("state.postgres_dsn_file", cfg.State.PostgresDSNFile)
	}
	if cfg.SFTP.Address != "" {
		add("sftp.identity_file", cfg.SFTP.IdentityFile)
	}
	return out
}

// Secrets checks every configured secret file with the rule batchd reads
// them by (config.CheckSecretFile: a regular file private to its owner;
// group-readable under $CREDENTIALS_DIRECTORY). Load already refused most
// faults; this adds the SSH identity, which Load leaves to the connection
// when it is missing or unreadable, and says which files were checked.
func Secrets(cfg *config.Config, env config.Env) []Result {
	var res []Result
	if cfg.API.KeyFile == "" {
		res = append(res, ok("secrets", "api key from $"+config.EnvAPIKey+" (no file to check)"))
	}
	for _, f := range secretFiles(cfg) {
		res = append(res, secretResult(f, config.CheckSecretFile(f.path, env)))
	}
	return res
}

func secretResult(f secretFile, err error) Result {
	check := "secrets"
	switch {
	case err == nil:
		return ok(check, f.key+" "+f.path+" is private to its owner")
	case config.IsSecretModeError(err):
		what, fix := splitFix(err.Error())
		return fail(check, f.key+" "+f.path+": "+what, fix)
	case errors.Is(err, fs.ErrNotExist):
		return fail(check, f.key+" "+f.path+": the file does not exist",
			"put the secret there, owned by the service user, mode 600 (or correct "+f.key+")")
	case errors.Is(err, fs.ErrPermission):
		return fail(check, f.key+" "+f.path+": this user cannot read it",
			"run batchd doctor as the service user or root; the file must be owned by the service user, mode 600")
	default:
		return fail(check, f.key+" "+f.path+": "+err.Error(), "name a regular file holding only the secret, mode 600")
	}
}
