/// The SQLite schema of `SQLiteJobStore`, as numbered migrations tracked in `PRAGMA user_version`.
///
/// Columns that are queried are real columns (`id`, `sequence`, `state`, `dedupe_key`, `created_at`, ...); so is
/// every other field of `JobRecord`, except `headers`, kept as a JSON array of `{"name","value"}`, and `tags`, a JSON
/// array of strings (indexed in `job_tags`). Dates are Unix-epoch seconds as `REAL`, rounded to the millisecond
/// (`StoredDate`). Pure data; used on the store's queue.
///
/// `jobs.resume_data` (schema 1) is no longer read or written: nothing ever set it, so every row holds NULL, and new
/// rows get NULL by default. It stays rather than costing a migration (a table rewrite, `DROP COLUMN` needs SQLite
/// 3.35) and a schema version an older Ferry would refuse. Likewise `jobs.expected_sha256` (schema 1): schema 7
/// moved its values into `checksum` and left it NULL.
enum SQLiteSchema {
    /// One step from `version - 1` to `version`. Steps run in order, each in its own transaction together with
    /// the `user_version` bump, so a crash mid-migration leaves the previous version intact.
    struct Migration {
        var version: Int32
        var sql: String
        /// Fills new columns of existing rows with values only Swift computes, after `sql`, in the same transaction.
        var backfill: (@Sendable (SQLiteConnection) throws -> Void)? = nil
    }

    /// The version this build writes. A database with a higher `user_version` is refused (a newer Ferry wrote it).
    static var currentVersion: Int32 { migrations.last?.version ?? 0 }

    static let migrations: [Migration] = [
        Migration(version: 1, sql: """
            CREATE TABLE jobs (
                id                   TEXT    PRIMARY KEY NOT NULL,
                sequence             INTEGER NOT NULL UNIQUE,
                state                TEXT    NOT NULL,
                dedupe_key           TEXT    NOT NULL,
                url                  TEXT    NOT NULL,
                final_url            TEXT,
                filename             TEXT,
                requested_filename   TEXT,
                bytes_received       INTEGER NOT NULL,
                bytes_expected       INTEGER,
                content_type         TEXT,
                sha256               TEXT,
                expected_sha256      TEXT,
                error_code           TEXT,
                error_message        TEXT,
                error_http_status    INTEGER,
                attempts             INTEGER NOT NULL,
                priority             INTEGER NOT NULL,
                max_bytes_per_second INTEGER,
                connections          INTEGER,
                headers              TEXT    NOT NULL,
                etag                 TEXT,
                last_modified        TEXT,
                resume_data          BLOB,
                created_at           REAL    NOT NULL,
                started_at           REAL,
                finished_at          REAL,
                updated_at           REAL    NOT NULL
            );
            CREATE INDEX jobs_state_sequence ON jobs (state, sequence);
            CREATE INDEX jobs_dedupe_key ON jobs (dedupe_key);
            CREATE INDEX jobs_created_at ON jobs (created_at);

            CREATE TABLE idempotency_records (
                key          TEXT    PRIMARY KEY NOT NULL,
                request_hash TEXT    NOT NULL,
                status       INTEGER NOT NULL,
                body         BLOB    NOT NULL,
                created_at   REAL    NOT NULL
            );
            CREATE INDEX idempotency_records_created_at ON idempotency_records (created_at);

            CREATE TABLE meta (
                key   TEXT PRIMARY KEY NOT NULL,
                value TEXT NOT NULL
            );

            -- The last sequence handed out, so sequences are never reused after deletes.
            CREATE TABLE counters (
                name  TEXT    PRIMARY KEY NOT NULL,
                value INTEGER NOT NULL
            );
            INSERT INTO counters (name, value) VALUES ('job_sequence', 0);
            """),
        // Logged-out session cookies, kept until the cookie expires (purged by expiry).
        Migration(version: 2, sql: """
            CREATE TABLE revoked_sessions (
                nonce      TEXT PRIMARY KEY NOT NULL,
                expires_at REAL NOT NULL
            );
            CREATE INDEX revoked_sessions_expires_at ON revoked_sessions (expires_at);
            """),
        // Tags and search (GET /api/v1/jobs?tag=&q=). `jobs.tags` holds a job's tags as a JSON array, as given;
        // `job_tags` indexes them by (tag, sequence), so a tag's jobs are read in list order straight from its
        // primary key and a page stops after `limit` rows. Triggers keep it in step with every insert, update and
        // delete of `jobs` (an update rewrites it only when the tags changed). `jobs.search_text` is what `q` is
        // looked for in (`JobFilter.searchText`: the folded filename and redacted URL), written with each row.
        Migration(version: 3, sql: """
            ALTER TABLE jobs ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
            ALTER TABLE jobs ADD COLUMN search_text TEXT NOT NULL DEFAULT '';
            CREATE TABLE job_tags (
                tag      TEXT    NOT NULL,
                sequence INTEGER NOT NULL,
                PRIMARY KEY (tag, sequence)
            ) WITHOUT ROWID;
            CREATE INDEX job_tags_sequence ON job_tags (sequence);
            CREATE TRIGGER job_tags_after_insert AFTER INSERT ON jobs WHEN new.tags <> '[]' BEGIN
                INSERT OR IGNORE INTO job_tags (tag, sequence) SELECT value, new.sequence FROM json_each(new.tags);
            END;
            CREATE TRIGGER job_tags_after_update AFTER UPDATE OF tags ON jobs WHEN new.tags IS NOT old.tags BEGIN
                DELETE FROM job_tags WHERE sequence = old.sequence;
                INSERT OR IGNORE INTO job_tags (tag, sequence) SELECT value, new.sequence FROM json_each(new.tags);
            END;
            CREATE TRIGGER job_tags_after_delete AFTER DELETE ON jobs WHEN old.tags <> '[]' BEGIN
                DELETE FROM job_tags WHERE sequence = old.sequence;
            END;
            """, backfill: SQLiteJobRow.backfillSearchText),
        // Service settings changed at runtime (PATCH /api/v1/settings): a row per setting changed that way
        // ('max_bytes_per_second', 'max_concurrent'); a NULL value is "none" (no limit).
        Migration(version: 4, sql: """
            CREATE TABLE IF NOT EXISTS settings (
                name  TEXT    PRIMARY KEY NOT NULL,
                value INTEGER
            );
            """),
        // Webhooks (API.md, "Webhooks"): a job's `notify` URL, and the outbox of completion notices, each written
        // in the same transaction as the job change that caused it and removed once delivered or given up. The
        // sender reads the soonest due first (`webhook_notices_due`). Notices outlive their job (no foreign key).
        Migration(version: 5, sql: """
            ALTER TABLE jobs ADD COLUMN notify TEXT;
            CREATE TABLE webhook_notices (
                id         TEXT    PRIMARY KEY NOT NULL,
                job_id     TEXT    NOT NULL,
                type       TEXT    NOT NULL,
                url        TEXT    NOT NULL,
                body       BLOB    NOT NULL,
                created_at REAL    NOT NULL,
                due_at     REAL    NOT NULL,
                attempts   INTEGER NOT NULL
            );
            CREATE INDEX webhook_notices_due ON webhook_notices (due_at, created_at, id);
            """),
        // Onward delivery (API.md, "Onward delivery"): a job's `deliver` target and how far its upload got, as one
        // JSON object (`Delivery`; NULL for jobs without one).
        Migration(version: 6, sql: """
            ALTER TABLE jobs ADD COLUMN delivery TEXT;
            """),
        // Checksums of any algorithm (API.md, "Downloader options"): a job's `checksum` as `ALGORITHM:HEX`
        // (`Checksum.description`), NULL for none. An expected SHA-256 stored before moves here, and
        // `expected_sha256` is left NULL in every row, no longer read or written (as `resume_data` is).
        Migration(version: 7, sql: """
            ALTER TABLE jobs ADD COLUMN checksum TEXT;
            UPDATE jobs SET checksum = 'sha-256:' || lower(expected_sha256), expected_sha256 = NULL
                WHERE expected_sha256 IS NOT NULL;
            """),
        // Mirrors (API.md, "Downloader options"): a job's sources with their bytes and whether dropped, as one JSON
        // list (`[JobSource]`; NULL for jobs without mirrors).
        Migration(version: 8, sql: """
            ALTER TABLE jobs ADD COLUMN sources TEXT;
            """),
        // Shared transfers (API.md, POST /api/v1/jobs, dedupe): the id of the job whose transfer a job follows
        // (`JobRecord.follows`), NULL for a job with a transfer of its own.
        Migration(version: 9, sql: """
            ALTER TABLE jobs ADD COLUMN follows TEXT;
            """),
        // Fetch-through (API.md, "Fetch-through"): each cached file's entry (`FetchEntryRecord`), by its job. Dates
        // in epoch seconds as elsewhere; `lifetime` in seconds. Rows of deleted jobs are removed with them.
        Migration(version: 10, sql: """
            CREATE TABLE fetch_entries (
                job_id               TEXT PRIMARY KEY NOT NULL,
                cache_key            TEXT NOT NULL,
                fresh_until          REAL NOT NULL,
                stale_if_error_until REAL NOT NULL,
                lifetime             REAL NOT NULL,
                last_used            REAL NOT NULL
            );
            CREATE TRIGGER fetch_entries_job_deleted AFTER DELETE ON jobs BEGIN
                DELETE FROM fetch_entries WHERE job_id = OLD.id;
            END;
            """),
        // API keys (API.md, "API keys"): the keys (a token's SHA-256 digest, never the token; limits as one JSON
        // object) and the key owning each job (`jobs.owner_key`, NULL for the administrator's), indexed with
        // `sequence` so one key's jobs are read in list order. Version 10 is the fetch-through's.
        Migration(version: 11, sql: """
            ALTER TABLE jobs ADD COLUMN owner_key TEXT;
            CREATE INDEX jobs_owner_key_sequence ON jobs (owner_key, sequence);
            CREATE TABLE keys (
                id           TEXT PRIMARY KEY NOT NULL,
                name         TEXT NOT NULL,
                scope        TEXT NOT NULL,
                limits       TEXT NOT NULL,
                digest       TEXT NOT NULL UNIQUE,
                created_at   REAL NOT NULL,
                last_used_at REAL
            );
            -- Notices stay once settled, so they can be listed and sent again: `state` pending, delivered or failed.
            ALTER TABLE webhook_notices ADD COLUMN state TEXT NOT NULL DEFAULT 'pending';
            ALTER TABLE webhook_notices ADD COLUMN last_status INTEGER;
            ALTER TABLE webhook_notices ADD COLUMN settled_at REAL;
            CREATE INDEX webhook_notices_state_due ON webhook_notices (state, due_at, created_at, id);
            CREATE INDEX webhook_notices_job ON webhook_notices (job_id);
            """),
        // A key's `bytesPerDay` counted by every node and kept over restarts: bytes fetched, a row a key and bucket.
        Migration(version: 12, sql: """
            CREATE TABLE key_usage (
                key_id TEXT    NOT NULL,
                bucket INTEGER NOT NULL,
                bytes  INTEGER NOT NULL,
                PRIMARY KEY (key_id, bucket)
            ) WITHOUT ROWID;
            """),
    ]

    /// Brings the database up to `currentVersion` (or to `target`: tests make the databases older versions left).
    /// - Throws: `JobStoreError.corrupt` for a database newer than this build; SQLite errors otherwise.
    static func migrate(_ connection: SQLiteConnection, upTo target: Int32 = currentVersion) throws {
        let found = try userVersion(connection)
        guard found <= currentVersion else {
            throw JobStoreError.corrupt(
                "\(connection.path) has schema version \(found); this Ferry understands up to \(currentVersion)")
        }
        for migration in migrations where migration.version > found && migration.version <= target {
            try connection.transaction("migrate to schema \(migration.version)") {
                try connection.executeScript(migration.sql, operation: "migrate to schema \(migration.version)")
                try migration.backfill?(connection)
                try connection.executeScript("PRAGMA user_version = \(migration.version)",
                                             operation: "set schema version \(migration.version)")
            }
        }
    }

    static func userVersion(_ connection: SQLiteConnection) throws -> Int32 {
        try connection.withStatement("PRAGMA user_version", operation: "read schema version") { statement in
            try statement.step()
            return Int32(truncatingIfNeeded: statement.int64("user_version") ?? 0)
        }
    }
}
