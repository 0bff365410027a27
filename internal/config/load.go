package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads the configuration file at path (see Path) and returns it
// parsed, validated and with its API key loaded; see Parse. Variables for
// ${VAR} and $BATCHD_API_KEY come from env (OSEnv in main).
func Load(path string, env Env) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config %s: %w", path, err)
	}
	return Parse(data, path, env)
}

// Parse is Load without the reading of the configuration file: it decodes
// one YAML document over Default, expands ${VAR} in values from env, loads
// the API key (from api.key_file or $BATCHD_API_KEY in env) and validates
// the result. name labels findings; it is usually the file's path.
//
// On failure Parse returns a nil Config and every finding joined, each a
// *FieldError carrying the key path and, when the key is in the file, its
// line. An empty document yields the defaults, which still need
// api.base_url and a key.
func Parse(data []byte, name string, env Env) (*Config, error) {
	root, err := parseYAML(data)
	if err != nil {
		return nil, &FieldError{File: name, Msg: err.Error(), Err: err}
	}
	cfg := Default()
	d := &decoder{env: env, lines: make(map[string]int)}
	if root != nil {
		d.mapping(root, reflect.ValueOf(cfg).Elem(), "")
	}
	cfg.followBackend(func(key string) bool { _, ok := d.lines[key]; return ok })
	all := d.errs
	keyOK := false
	// A key_file that failed to decode, is relative or holds a key itself
	// (Validate says so) is not read: falling back to $BATCHD_API_KEY or
	// opening a path relative to the working directory would hide the real
	// mistake.
	kf := cfg.API.KeyFile
	if !hasKey(d.errs, "api.key_file") && (kf == "" || filepath.IsAbs(kf)) && !looksSecret(kf) {
		if kerr := cfg.loadAPIKey(env); kerr != nil {
			all = append(all, kerr)
		} else {
			keyOK = true
		}
	}
	if !hasKey(d.errs, "webhook.secret_file") {
		if serr := cfg.loadWebhookSecret(env); serr != nil {
			all = append(all, serr)
		}
	}
	if !hasKey(d.errs, "admin.token_file") {
		if terr := cfg.loadAdminToken(env); terr != nil {
			all = append(all, terr)
		}
	}
	if !hasKey(d.errs, "state.postgres_dsn_file") && !hasKey(d.errs, "state.backend") {
		if perr := cfg.loadPostgresDSN(env); perr != nil {
			all = append(all, perr)
		}
	}
	// Secret files read later, by another package: only their mode here.
	for _, c := range []struct {
		key   string
		check func(Env) *FieldError
	}{{"state.account_keys_file", cfg.checkAccountKeysMode}, {"sftp.identity_file", cfg.checkIdentityMode}} {
		if !hasKey(d.errs, c.key) {
			if ferr := c.check(env); ferr != nil {
				all = append(all, ferr)
			}
		}
	}
	all = append(all, cfg.validate(keyOK)...)
	for _, e := range all {
		e.File = name
		if e.Line == 0 {
			e.Line = d.lineOf(e.Key)
		}
	}
	if err := all.join(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// parseYAML returns the top-level node of the only document in data, or
// nil for an empty file. It refuses several documents, because batchd would
// silently ignore all but the first.
func parseYAML(data []byte) (root *yaml.Node, err error) {
	defer func() {
		// A configuration file must never crash batchd, not even through a
		// parser bug.
		if r := recover(); r != nil {
			root, err = nil, errors.New("invalid YAML: the parser failed")
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, fmt.Errorf("invalid YAML: %s", safeErr(err))
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, errors.New("invalid YAML: the file holds more than one document (---); batchd reads exactly one")
	case !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("invalid YAML: %s", safeErr(err))
	}
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil, nil
		}
		return doc.Content[0], nil
	}
	return &doc, nil
}

func hasKey(f findings, key string) bool {
	for _, e := range f {
		if e.Key == key {
			return true
		}
	}
	return false
}

// lineOf is the line where key is written or, for a key missing from the
// file (a required one), where its nearest enclosing section is; 0 if
// neither is in the file.
func (d *decoder) lineOf(key string) int {
	for key != "" {
		if l, ok := d.lines[key]; ok {
			return l
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}
