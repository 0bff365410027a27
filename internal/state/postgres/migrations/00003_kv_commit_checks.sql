-- The checks a write transaction sends with its writes, in the one
-- pipelined batch that takes the write lock and commits (tx.go): the
-- lease (kv_fence) and the values the transaction read before it took
-- the lock (kv_expect, kv_expect_page). Each raises, so that the batch's
-- COMMIT never runs after a failed check: the server skips the rest of a
-- pipeline after an error.
--   BD001  the lease's epoch is not the one this instance holds (fenced);
--   BD002  a key the transaction read has changed since (retry).

-- +goose Up
-- kv_origin: which server and database this is (kv.Origin). The timeline
-- is read from the name of the WAL file being written, not from the last
-- checkpoint (pg_control_checkpoint), which still names the old timeline
-- for a while after a promotion. pg_current_wal_lsn fails on a standby,
-- where no write may run anyway.
-- +goose StatementBegin
CREATE FUNCTION kv_origin(OUT system bigint, OUT timeline bigint, OUT db bigint)
LANGUAGE sql AS $$
    SELECT s.system_identifier,
        ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint, d.oid::bigint
    FROM pg_control_system() s, pg_database d WHERE d.datname = current_database()
$$;
-- +goose StatementEnd

-- kv_expect_origin: the transaction runs on the server and database it
-- took its origin for (from an earlier transaction of its process).
-- +goose StatementBegin
CREATE FUNCTION kv_expect_origin(sys bigint, tl bigint, db_oid bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM kv_origin() o WHERE o.system = sys AND o.timeline = tl AND o.db = db_oid) THEN
        RAISE EXCEPTION 'the database is not the one whose origin the transaction used' USING ERRCODE = 'BD002';
    END IF;
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION kv_fence(held bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    cur bigint;
BEGIN
    SELECT epoch INTO cur FROM leader WHERE id = 1 FOR SHARE;
    IF cur IS DISTINCT FROM held THEN
        RAISE EXCEPTION 'not the leader: lease epoch %, this instance holds %', cur, held
            USING ERRCODE = 'BD001', DETAIL = coalesce(cur::text, 'none');
    END IF;
END;
$$;
-- +goose StatementEnd

-- kv_expect: each (b[i], k[i]) holds v[i] still; a NULL v[i] means absent.
-- +goose StatementBegin
CREATE FUNCTION kv_expect(b bytea[], k bytea[], v bytea[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM unnest(b, k, v) AS e(b, k, v)
               LEFT JOIN kv_keys x ON x.bucket = e.b AND x.k = e.k
               WHERE x.v IS DISTINCT FROM e.v) THEN
        RAISE EXCEPTION 'a key this transaction read has changed' USING ERRCODE = 'BD002';
    END IF;
END;
$$;
-- +goose StatementEnd

-- kv_expect_no_bucket: none of the buckets named exists.
-- +goose StatementBegin
CREATE FUNCTION kv_expect_no_bucket(names bytea[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM kv_buckets WHERE name = ANY (names)) THEN
        RAISE EXCEPTION 'a bucket this transaction read absent exists' USING ERRCODE = 'BD002';
    END IF;
END;
$$;
-- +goose StatementEnd

-- kv_expect_page: a cursor's page (the keys of bucket b at or after, or
-- after, from_k, at most lim of them) is still ks with values vs.
-- +goose StatementBegin
CREATE FUNCTION kv_expect_page(b bytea, from_k bytea, incl bool, lim int, ks bytea[], vs bytea[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    gk bytea[];
    gv bytea[];
BEGIN
    IF incl THEN
        SELECT coalesce(array_agg(p.k ORDER BY p.k), '{}'), coalesce(array_agg(p.v ORDER BY p.k), '{}') INTO gk, gv
        FROM (SELECT k, v FROM kv_keys WHERE bucket = b AND k >= from_k ORDER BY k LIMIT lim) p;
    ELSE
        SELECT coalesce(array_agg(p.k ORDER BY p.k), '{}'), coalesce(array_agg(p.v ORDER BY p.k), '{}') INTO gk, gv
        FROM (SELECT k, v FROM kv_keys WHERE bucket = b AND k > from_k ORDER BY k LIMIT lim) p;
    END IF;
    IF gk IS DISTINCT FROM coalesce(ks, '{}') OR gv IS DISTINCT FROM coalesce(vs, '{}') THEN
        RAISE EXCEPTION 'a page of keys this transaction read has changed' USING ERRCODE = 'BD002';
    END IF;
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION kv_expect_page(bytea, bytea, bool, int, bytea[], bytea[]);
DROP FUNCTION kv_expect_no_bucket(bytea[]);
DROP FUNCTION kv_expect(bytea[], bytea[], bytea[]);
DROP FUNCTION kv_fence(bigint);
DROP FUNCTION kv_expect_origin(bigint, bigint, bigint);
DROP FUNCTION kv_origin();
