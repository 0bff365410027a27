package config

// checkAccountKeysMode refuses at load, as every secret file is refused,
// a state.account_keys_file others may read or write: it holds the keys
// that seal the ledger's account numbers. A missing file is the ledger's
// to report when it opens (it names the rows it cannot read).
func (c *Config) checkAccountKeysMode(env Env) *FieldError {
	p := c.State.AccountKeysFile
	if p == "" {
		return nil
	}
	return c.checkSecretMode("state.account_keys_file", p, env)
}
