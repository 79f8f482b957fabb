/// The PostgreSQL schema of `PostgresJobStore`, as numbered migrations recorded in `schema_migrations`.
///
/// The same tables as `SQLiteSchema`'s five versions, in PostgreSQL's types: dates are `timestamptz` (written and
/// read as whole milliseconds, `StoredDate`), bodies `bytea`, tags a `text[]` (order and repeats kept) indexed by
/// `job_tags` (tag, sequence), kept in step by a trigger and cleared by a cascading foreign key, so a tag's jobs are
/// walked in list order. `jobs.sequence` comes from the `job_sequence` SEQUENCE, shared by every node on the
/// database: never reused, though a failed insert leaves a gap. Schema 6 adds what several nodes share
/// (`ClusterJobStore`): `jobs.owner`/`lease_until`, `nodes`, `events` (ids from `event_id`) and `event_window`.
/// Pure data; used on the store's queue.
enum PostgresSchema {
    struct Migration {
        var version: Int
        var sql: String
        /// Steps only Swift can decide, after `sql`, in the same transaction.
        var then: (@Sendable (PostgresConnection) throws -> Void)? = nil
    }

    /// The version this build writes. A database at a higher version is refused (a newer Ferry wrote it).
    static var currentVersion: Int { migrations.last?.version ?? 0 }

    /// Serializes migrations of nodes starting together (`pg_advisory_xact_lock`): "ferry" in ASCII.
    static let migrationLock: Int64 = 0x6665_7272_79

    static let migrations: [Migration] = [
        Migration(version: 1, sql: """
            CREATE SEQUENCE job_sequence AS bigint START 1;
            CREATE TABLE jobs (
                id                   text        PRIMARY KEY,
                sequence             bigint      NOT NULL UNIQUE DEFAULT nextval('job_sequence'),
                state                text        NOT NULL,
                dedupe_key           text        NOT NULL,
                url                  text        NOT NULL,
                final_url            text,
                filename             text,
                requested_filename   text,
                bytes_received       bigint      NOT NULL,
                bytes_expected       bigint,
                content_type         text,
                sha256               text,
                expected_sha256      text,
                error_code           text,
                error_message        text,
                error_http_status    integer,
                attempts             integer     NOT NULL,
                priority             integer     NOT NULL,
                max_bytes_per_second bigint,
                connections          integer,
                headers              text        NOT NULL,
                etag                 text,
                last_modified        text,
                created_at           timestamptz NOT NULL,
                started_at           timestamptz,
                finished_at          timestamptz,
                updated_at           timestamptz NOT NULL,
                tags                 text[]      NOT NULL DEFAULT '{}',
                notify               text,
                search_text          text        NOT NULL DEFAULT ''
            );
            ALTER SEQUENCE job_sequence OWNED BY jobs.sequence;
            CREATE INDEX jobs_state_sequence ON jobs (state, sequence);
            CREATE INDEX jobs_dedupe_key ON jobs (dedupe_key);
            CREATE INDEX jobs_created_at ON jobs (created_at);

            CREATE TABLE job_tags (
                tag      text   NOT NULL,
                sequence bigint NOT NULL REFERENCES jobs (sequence) ON DELETE CASCADE,
                PRIMARY KEY (tag, sequence)
            );
            CREATE INDEX job_tags_sequence ON job_tags (sequence);
            CREATE FUNCTION ferry_job_tags_sync() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'UPDATE' THEN
                    DELETE FROM job_tags WHERE sequence = OLD.sequence;
                END IF;
                INSERT INTO job_tags (tag, sequence) SELECT DISTINCT tag, NEW.sequence FROM unnest(NEW.tags) AS tag;
                RETURN NULL;
            END
            $$;
            CREATE TRIGGER job_tags_after_insert AFTER INSERT ON jobs
                FOR EACH ROW WHEN (cardinality(NEW.tags) > 0) EXECUTE FUNCTION ferry_job_tags_sync();
            CREATE TRIGGER job_tags_after_update AFTER UPDATE OF tags ON jobs
                FOR EACH ROW WHEN (NEW.tags IS DISTINCT FROM OLD.tags) EXECUTE FUNCTION ferry_job_tags_sync();

            CREATE TABLE idempotency_records (
                key          text        PRIMARY KEY,
                request_hash text        NOT NULL,
                status       integer     NOT NULL,
                body         bytea       NOT NULL,
                created_at   timestamptz NOT NULL
            );
            CREATE INDEX idempotency_records_created_at ON idempotency_records (created_at);

            CREATE TABLE meta (
                key   text PRIMARY KEY,
                value text NOT NULL
            );

            CREATE TABLE revoked_sessions (
                nonce      text        PRIMARY KEY,
                expires_at timestamptz NOT NULL
            );
            CREATE INDEX revoked_sessions_expires_at ON revoked_sessions (expires_at);

            CREATE TABLE settings (
                name  text PRIMARY KEY,
                value bigint
            );

            CREATE TABLE webhook_notices (
                id         text        PRIMARY KEY,
                job_id     text        NOT NULL,
                type       text        NOT NULL,
                url        text        NOT NULL,
                body       bytea       NOT NULL,
                created_at timestamptz NOT NULL,
                due_at     timestamptz NOT NULL,
                attempts   integer     NOT NULL
            );
            CREATE INDEX webhook_notices_due ON webhook_notices (due_at, created_at, id);
            """),
        // Search (`q`) through a trigram index, when the server offers `pg_trgm` (a trusted extension shipped with
        // PostgreSQL's contrib modules, in Debian's server package): lists then find rare matches without walking
        // every job. Without it (or without the right to create it) the schema is the same minus the index, and
        // the search walks `jobs` in list order as SQLite's does.
        Migration(version: 2, sql: "", then: addTrigramIndexIfPossible),
        // Onward delivery: a job's `deliver` target and how far its upload got, as JSON (`Delivery`), as in SQLite.
        Migration(version: 3, sql: "ALTER TABLE jobs ADD COLUMN delivery text"),
        // A job's `checksum` as `ALGORITHM:HEX`; an expected SHA-256 stored before moves here (`expected_sha256`
        // is left NULL, no longer read or written), as in SQLite's schema 7.
        Migration(version: 4, sql: """
            ALTER TABLE jobs ADD COLUMN checksum text;
            UPDATE jobs SET checksum = 'sha-256:' || lower(expected_sha256), expected_sha256 = NULL
                WHERE expected_sha256 IS NOT NULL;
            """),
        // Mirrors: a job's sources as JSON (`[JobSource]`), as in SQLite.
        Migration(version: 5, sql: "ALTER TABLE jobs ADD COLUMN sources text"),
        // Several nodes (`ClusterJobStore`): who owns a job and until when, the nodes alive, and the cluster-wide
        // event log. Event ids continue above the single node's high-water mark, so they keep increasing when a
        // store is shared.
        Migration(version: 6, sql: """
            ALTER TABLE jobs ADD COLUMN owner text, ADD COLUMN lease_until timestamptz;
            CREATE INDEX jobs_claimable ON jobs (priority DESC, sequence)
                WHERE state IN ('waiting', 'downloading', 'delivering');
            CREATE INDEX jobs_owner ON jobs (owner) WHERE owner IS NOT NULL;

            CREATE TABLE nodes (
                id           text        PRIMARY KEY,
                started_at   timestamptz NOT NULL,
                heartbeat_at timestamptz NOT NULL,
                lease_until  timestamptz NOT NULL
            );

            CREATE SEQUENCE event_id AS bigint START 1;
            SELECT setval('event_id', value::bigint) FROM meta
                WHERE key = 'event-id-high-water' AND value ~ '^[0-9]{1,18}$' AND value::bigint > 0;
            CREATE TABLE events (
                id         bigint      PRIMARY KEY,
                job_id     text        NOT NULL,
                kind       text        NOT NULL CHECK (kind IN ('job', 'removed')),
                data       bytea       NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX events_created_at ON events (created_at);
            CREATE TABLE event_window (
                single         boolean PRIMARY KEY DEFAULT true CHECK (single),
                purged_through bigint  NOT NULL
            );
            INSERT INTO event_window (purged_through) VALUES (0);
            """),
        // Several nodes with an object store: each unfinished job's multipart upload of the parts stored so far (a
        // JSON document the engine writes), so a node taking the job over continues from them. No foreign key: the
        // node discarding a deleted job reads it to abort the upload, then removes it.
        Migration(version: 7, sql: """
            CREATE TABLE object_uploads (
                job_id     text        PRIMARY KEY,
                document   text        NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            """),
        // Shared transfers: the id of the job whose transfer a job follows (`JobRecord.follows`), as in SQLite's
        // schema 9.
        Migration(version: 8, sql: "ALTER TABLE jobs ADD COLUMN IF NOT EXISTS follows text"),
        // Several nodes: the fencing token of a job's ownership (`lease_epoch`), raised each time a node other than
        // the last to take it (`lease_holder`, kept when the job is released) takes it (`claim`, `acquire`); a node's
        // writes for a job it held carry the token it got, and are refused once another node took the job since
        // (`ClusterChange.heldUnder`).
        Migration(version: 9, sql: "ALTER TABLE jobs ADD COLUMN lease_epoch bigint NOT NULL DEFAULT 0, ADD COLUMN lease_holder text"),
        // Fetch-through (API.md, "Fetch-through"): each cached file's entry (`FetchEntryRecord`), by its job, removed
        // with it; `lifetime` in milliseconds.
        Migration(version: 10, sql: """
            CREATE TABLE fetch_entries (
                job_id               text        PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
                cache_key            text        NOT NULL,
                fresh_until          timestamptz NOT NULL,
                stale_if_error_until timestamptz NOT NULL,
                lifetime             bigint      NOT NULL,
                last_used            timestamptz NOT NULL
            );
            """),
        // API keys, as SQLite's schema 11 (version 10 is the fetch-through's).
        Migration(version: 11, sql: """
            ALTER TABLE jobs ADD COLUMN IF NOT EXISTS owner_key text;
            CREATE INDEX jobs_owner_key_sequence ON jobs (owner_key, sequence);
            CREATE TABLE keys (
                id           text        PRIMARY KEY,
                name         text        NOT NULL,
                scope        text        NOT NULL,
                limits       text        NOT NULL,
                digest       text        NOT NULL UNIQUE,
                created_at   timestamptz NOT NULL,
                last_used_at timestamptz
            );
            ALTER TABLE webhook_notices ADD COLUMN state text NOT NULL DEFAULT 'pending',
                ADD COLUMN last_status integer, ADD COLUMN settled_at timestamptz;
            CREATE INDEX webhook_notices_state_due ON webhook_notices (state, due_at, created_at, id);
            CREATE INDEX webhook_notices_job ON webhook_notices (job_id);
            ALTER TABLE events ADD COLUMN owner_key text;
            """),
        // Keys' `bytesPerDay` counts, as SQLite's schema 12.
        Migration(version: 12, sql: """
            CREATE TABLE key_usage (
                key_id text   NOT NULL,
                bucket bigint NOT NULL,
                bytes  bigint NOT NULL,
                PRIMARY KEY (key_id, bucket)
            );
            """),
    ]

    /// Schema 2: `jobs_search_text_trigram`, in a savepoint, so a server without `pg_trgm` keeps the rest.
    private static func addTrigramIndexIfPossible(_ connection: PostgresConnection) throws {
        let offered = try connection.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'",
                                             operation: "look for pg_trgm").rowCount > 0
        guard offered else { return }
        try connection.executeScript("SAVEPOINT trigram", operation: "migrate to schema 2")
        do {
            try connection.executeScript("""
                CREATE EXTENSION IF NOT EXISTS pg_trgm;
                CREATE INDEX jobs_search_text_trigram ON jobs USING gin (search_text gin_trgm_ops);
                """, operation: "create the search index")
            try connection.executeScript("RELEASE SAVEPOINT trigram", operation: "migrate to schema 2")
        } catch let error as JobStoreError where !error.isUnavailable {
            try connection.executeScript("ROLLBACK TO SAVEPOINT trigram", operation: "migrate to schema 2")
        }
    }

    /// Brings the database up to `currentVersion` in one transaction holding `migrationLock`, so nodes starting
    /// together migrate once and a crash mid-migration leaves the previous version intact.
    /// - Throws: `JobStoreError.corrupt` for a database newer than this build; PostgreSQL errors otherwise.
    /// - Parameter target: the version to stop at (tests start from an older schema); `currentVersion` otherwise.
    static func migrate(_ connection: PostgresConnection, to target: Int = currentVersion) throws {
        try connection.transaction("migrate the schema") {
            try connection.execute("SELECT pg_advisory_xact_lock($1)", [PostgresParameter(migrationLock)],
                                   operation: "lock the schema for migration")
            try connection.executeScript("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version    integer     PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """, operation: "create schema_migrations")
            let found = try connection.execute("SELECT coalesce(max(version), 0) FROM schema_migrations",
                                               operation: "read schema version").int64(0, 0) ?? 0
            guard found <= currentVersion else {
                throw JobStoreError.corrupt(
                    "\(connection.location) has schema version \(found); this Ferry understands up to \(currentVersion)")
            }
            // Every version not recorded yet, in order: a database migrated by a build that had a later version but
            // not an earlier one (work merged out of order) still gets the earlier one.
            let applied = try connection.execute("SELECT version FROM schema_migrations", operation: "read schema versions")
            let done = Set((0..<applied.rowCount).compactMap { applied.int64($0, 0) })
            for migration in migrations where !done.contains(Int64(migration.version)) && migration.version <= target {
                try connection.executeScript(migration.sql, operation: "migrate to schema \(migration.version)")
                try migration.then?(connection)
                try connection.execute("INSERT INTO schema_migrations (version) VALUES ($1)",
                                       [PostgresParameter(migration.version)],
                                       operation: "record schema version \(migration.version)")
            }
        }
    }

    /// The version the database is at (0 before any migration).
    static func version(_ connection: PostgresConnection) throws -> Int {
        Int(try connection.execute("SELECT coalesce(max(version), 0) FROM schema_migrations",
                                   operation: "read schema version").int64(0, 0) ?? 0)
    }
}
