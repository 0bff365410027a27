-- The typed tables (migration 4, tables.go): what people query. Each is
-- a view of one bucket of kv_keys, kept by the store in the transaction
-- that writes the bucket's key (project.go), from the ledger's own
-- decoding (internal/state/projection.go). kv_key is the record's key in
-- its bucket. Writes go only through batchd: docs/ops-sql.md.

CREATE TABLE batchd_files (
    kv_key     bytea NOT NULL UNIQUE,
    sha256     text PRIMARY KEY,
    name       text NOT NULL,
    size_bytes bigint NOT NULL,
    batch_id   bigint,
    seen_at    timestamptz,
    accepted   boolean NOT NULL,
    moved_to   text
);

-- A batch names its file by content hash, but has no foreign key to
-- batchd_files: the ledger records a batch when its load begins and its
-- file when the load commits, and keeps a file's record (the duplicate
-- check) after its batch is pruned.
CREATE TABLE batchd_batches (
    kv_key              bytea NOT NULL UNIQUE,
    id                  bigint PRIMARY KEY,
    kind                text NOT NULL,
    file_name           text NOT NULL,
    sha256              text,
    label               text NOT NULL,
    status              text NOT NULL,
    created_at          timestamptz,
    note                text,
    rows_in_file        integer NOT NULL,
    invalid_rows        integer NOT NULL,
    results_reported_at timestamptz
) WITH (fillfactor = 80); -- its counts change with every row: HOT updates
CREATE INDEX batchd_batches_sha256 ON batchd_batches (sha256);

-- Payment rows. No full account number and nothing sealed: only the
-- last four digits a final row keeps.
CREATE TABLE batchd_rows (
    kv_key        bytea NOT NULL UNIQUE,
    batch_id      bigint NOT NULL REFERENCES batchd_batches (id) DEFERRABLE INITIALLY DEFERRED,
    line          integer NOT NULL,
    state         text NOT NULL,
    label         text NOT NULL,
    number        text NOT NULL,
    amount_cents  bigint NOT NULL,
    account_last4 text,
    check_id      text,
    check_status  text,
    check_date    date,
    attempts      integer NOT NULL,
    sent_at       timestamptz,
    heard_at      timestamptz,
    error         text,
    created_at    timestamptz,
    updated_at    timestamptz,
    PRIMARY KEY (batch_id, line)
) WITH (fillfactor = 80);
-- No index on a column a transition changes (state, check_status…): a
-- row's update then stays HOT (no index written, docs/benchmarks.md),
-- which keeps the table's cost on a busy ledger near the key's. Who owns
-- a check: batchd_checks' key. The views scan.

-- A check id belongs to one row: the primary key.
CREATE TABLE batchd_checks (
    kv_key   bytea NOT NULL UNIQUE,
    check_id text PRIMARY KEY,
    batch_id bigint NOT NULL,
    line     integer NOT NULL,
    FOREIGN KEY (batch_id, line) REFERENCES batchd_rows (batch_id, line) DEFERRABLE INITIALLY DEFERRED
);
CREATE INDEX batchd_checks_row ON batchd_checks (batch_id, line);

-- Payees by keyed hash: the account each was last paid to (last four
-- digits and length only) and the row that paid it. The row may have
-- been pruned since, so it is no foreign key.
CREATE TABLE batchd_payees (
    kv_key         bytea NOT NULL UNIQUE,
    payee          text PRIMARY KEY,
    account_last4  text,
    account_length integer NOT NULL,
    paid_batch_id  bigint,
    paid_line      integer,
    paid_at        timestamptz
);

CREATE TABLE batchd_hook_events (
    kv_key      bytea NOT NULL UNIQUE,
    id          text PRIMARY KEY,
    received_at timestamptz,
    name        text NOT NULL,
    kind        text NOT NULL,
    check_id    text,
    source_id   text,
    status      text,
    at          timestamptz,
    outcome     text NOT NULL
);
CREATE INDEX batchd_hook_events_check_id ON batchd_hook_events (check_id) WHERE check_id IS NOT NULL;
CREATE INDEX batchd_hook_events_received ON batchd_hook_events (received_at);

-- Views for people (read-only).

-- Rows by state per file.
CREATE VIEW batchd_rows_by_state AS
SELECT b.id AS batch_id, b.file_name, b.sha256, r.state, count(*) AS rows, sum(r.amount_cents)::bigint AS amount_cents
FROM batchd_rows r JOIN batchd_batches b ON b.id = r.batch_id
GROUP BY b.id, b.file_name, b.sha256, r.state;

-- Rows that need a person: in doubt, held, rejected by the service, or
-- whose check failed, was voided, deleted, or is in a status batchd does
-- not know.
CREATE VIEW batchd_exceptions AS
SELECT r.batch_id, b.file_name, r.line, r.state, r.check_id, r.check_status, r.amount_cents, r.label, r.number,
       r.error, r.updated_at
FROM batchd_rows r JOIN batchd_batches b ON b.id = r.batch_id
WHERE r.state IN ('in_doubt', 'held', 'rejected')
   OR r.check_status IN ('failed', 'void', 'deleted', 'unknown');

-- Money by the day of its checks: every check made that day (issued),
-- then what became of it: paid (deposited, as the settlement report
-- counts money paid), cancelled (failed, void, deleted) and the rest,
-- still on its way (outstanding). Paid never includes a check that was
-- cancelled or has not settled.
CREATE VIEW batchd_paid_per_day AS
SELECT check_date, count(*) AS checks,
       sum(amount_cents)::bigint AS issued_cents,
       coalesce(sum(amount_cents) FILTER (WHERE check_status = 'deposited'), 0)::bigint AS paid_cents,
       coalesce(sum(amount_cents) FILTER (WHERE check_status IN ('failed', 'void', 'deleted')), 0)::bigint AS cancelled_cents,
       coalesce(sum(amount_cents) FILTER (WHERE check_status IS NULL
                OR check_status NOT IN ('deposited', 'failed', 'void', 'deleted')), 0)::bigint AS outstanding_cents
FROM batchd_rows
WHERE state = 'submitted'
GROUP BY check_date;

-- The leader lease (the table leader, migration 1) as people read it.
CREATE VIEW batchd_lease AS
SELECT holder, epoch, expires_at, expires_at > now() AS live FROM leader;
