-- A check id (bucket 'checks') or funding-source id (bucket 'src_ids')
-- leaves its bucket only through prune. kv_keep_owner (00001) stops an
-- UPDATE moving an id to another row, but a DELETE followed by an INSERT
-- naming another row did the same move in two statements. Now a DELETE of
-- such a key, and an UPDATE taking it out of its bucket or renaming it,
-- is refused unless the transaction declared itself a prune (kv.Tx
-- DeclarePrune: SET LOCAL batchd.prune = 'on'), which removes the ids of
-- final rows it removes with them. A DELETE of the bucket cascades to its
-- keys and is refused the same way. (TRUNCATE and a superuser disabling
-- the trigger are outside what a trigger can hold.)

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION kv_keep_owner_key() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.bucket = NEW.bucket AND OLD.k = NEW.k THEN
        RETURN NEW;
    END IF;
    IF current_setting('batchd.prune', true) IS DISTINCT FROM 'on' THEN
        RAISE EXCEPTION 'bucket % key % (owned by row key %) may leave its bucket only in a transaction that declared itself a prune (kv.Tx DeclarePrune): a delete and a new insert would give the id to another row',
            convert_from(OLD.bucket, 'UTF8'), encode(OLD.k, 'escape'), encode(OLD.v, 'hex')
            USING ERRCODE = 'restrict_violation', CONSTRAINT = 'kv_keep_owner_key';
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER kv_keep_owner_key
    BEFORE DELETE OR UPDATE OF bucket, k ON kv_keys
    FOR EACH ROW
    WHEN (OLD.bucket IN ('\x636865636b73'::bytea, '\x7372635f696473'::bytea)) -- 'checks', 'src_ids'
    EXECUTE FUNCTION kv_keep_owner_key();

-- +goose Down
DROP TRIGGER kv_keep_owner_key ON kv_keys;
DROP FUNCTION kv_keep_owner_key();
