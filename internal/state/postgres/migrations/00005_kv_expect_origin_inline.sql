-- kv_expect_origin runs in every optimistic commit. Calling kv_origin()
-- from it planned that SQL function's body again at every call (a SQL
-- function used in FROM is not inlined, and its plan is not kept): 0.3 ms
-- of the server's time per commit. The same query written in the
-- PL/pgSQL body is planned once per connection. kv_origin stays, for the
-- opening of a locked transaction; the two must read the origin alike.

-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION kv_expect_origin(sys bigint, tl bigint, db_oid bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM pg_control_system() s, pg_database d
        WHERE d.datname = current_database()
          AND s.system_identifier = sys
          AND ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint = tl
          AND d.oid::bigint = db_oid) THEN
        RAISE EXCEPTION 'the database is not the one whose origin the transaction used' USING ERRCODE = 'BD002';
    END IF;
END;
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION kv_expect_origin(sys bigint, tl bigint, db_oid bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM kv_origin() o WHERE o.system = sys AND o.timeline = tl AND o.db = db_oid) THEN
        RAISE EXCEPTION 'the database is not the one whose origin the transaction used' USING ERRCODE = 'BD002';
    END IF;
END;
$$;
-- +goose StatementEnd
