-- kv_origin is called by kv_expect_origin in every optimistic commit. As
-- a SQL function called in FROM it is not inlined, and PostgreSQL
-- planned its body again at every call: 0.3 ms of the server's time per
-- commit. The same query in PL/pgSQL keeps its plan for the connection.
-- Both kv_expect_origin and the opening of a locked transaction still
-- read the origin through this one function.

-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION kv_origin(OUT system bigint, OUT timeline bigint, OUT db bigint)
LANGUAGE plpgsql AS $$
BEGIN
    SELECT s.system_identifier,
        ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint, d.oid::bigint
    INTO system, timeline, db
    FROM pg_control_system() s, pg_database d WHERE d.datname = current_database();
END;
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION kv_origin(OUT system bigint, OUT timeline bigint, OUT db bigint)
LANGUAGE sql AS $$
    SELECT s.system_identifier,
        ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint, d.oid::bigint
    FROM pg_control_system() s, pg_database d WHERE d.datname = current_database()
$$;
-- +goose StatementEnd
