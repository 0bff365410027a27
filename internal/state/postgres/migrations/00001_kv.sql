-- The ledger's storage: kv's flat buckets as two tables, and the leader
-- lease. Keys and values are bytea, which sorts bytewise, as kv requires.

-- +goose Up
CREATE TABLE kv_buckets (
    name bytea PRIMARY KEY CHECK (length(name) > 0),
    seq  bigint NOT NULL DEFAULT 0
);

CREATE TABLE kv_keys (
    bucket bytea NOT NULL REFERENCES kv_buckets (name) ON DELETE CASCADE,
    k      bytea NOT NULL CHECK (length(k) > 0),
    v      bytea NOT NULL,
    PRIMARY KEY (bucket, k)
);

-- Uniqueness money depends on, held by the database and not only by the
-- rules above it:
--   files        content hash -> file: the primary key (bucket, k);
--   hook_events  event id -> event: the primary key (bucket, k);
--   checks       check id -> the row that owns it, and
--   src_ids      funding-source id -> the row that owns it: once set, the
--                owner never changes to another row (the trigger below).
-- +goose StatementBegin
CREATE FUNCTION kv_keep_owner() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.v <> NEW.v THEN
        RAISE EXCEPTION 'bucket % key % is owned by % and may not move to %',
            convert_from(OLD.bucket, 'UTF8'), encode(OLD.k, 'escape'),
            encode(OLD.v, 'escape'), encode(NEW.v, 'escape')
            USING ERRCODE = 'unique_violation', CONSTRAINT = 'kv_keep_owner';
    END IF;
    RETURN NEW;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER kv_keep_owner
    BEFORE UPDATE OF v ON kv_keys
    FOR EACH ROW
    WHEN (OLD.bucket IN ('\x636865636b73'::bytea, '\x7372635f696473'::bytea)) -- 'checks', 'src_ids'
    EXECUTE FUNCTION kv_keep_owner();

-- The leader lease: one row, its epoch raised by every new holder.
-- expires_at is the database's clock, so instances' clocks never decide.
CREATE TABLE leader (
    id         int PRIMARY KEY CHECK (id = 1),
    holder     text NOT NULL,
    epoch      bigint NOT NULL CHECK (epoch >= 0),
    expires_at timestamptz NOT NULL
);
INSERT INTO leader (id, holder, epoch, expires_at) VALUES (1, '', 0, 'epoch');

-- +goose Down
DROP TABLE leader;
DROP TRIGGER kv_keep_owner ON kv_keys;
DROP FUNCTION kv_keep_owner();
DROP TABLE kv_keys;
DROP TABLE kv_buckets;
