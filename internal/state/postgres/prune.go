package postgres

// DeclarePrune lets this transaction delete keys of the buckets checks
// and src_ids, which the trigger kv_keep_owner_key (migration 00002)
// refuses otherwise: SET LOCAL batchd.prune = 'on', through set_config,
// so the setting ends with the transaction and never reaches the next
// one on the pooled connection. It is sent at once, before the buffered
// writes, which the trigger checks only when they are flushed.
func (t *tx) DeclarePrune() error {
	if err := t.check(); err != nil {
		return err
	}
	if err := t.lockFirst(); err != nil {
		return err
	}
	if _, err := t.exec("SELECT set_config('batchd.prune', 'on', true)"); err != nil {
		return t.fail("declare prune", nil, err)
	}
	return nil
}
