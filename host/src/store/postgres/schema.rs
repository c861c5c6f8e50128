//! The PostgreSQL schema and its migrations, versioned in `scratchpad_schema`.
//!
//! The tables mirror the SQLite schema (see `store/sqlite/schema.rs` for what each column
//! means) with PostgreSQL's types: BYTEA values, BIGINT times in Unix milliseconds, and an
//! `ordinal` (a sequence) where SQLite orders by `rowid`, and the `C` collation on every
//! text column the host orders by, so listings come out in SQLite's byte order whatever the
//! server's locale. Observation chunks are stored
//! uncompressed out of line (`STORAGE EXTERNAL`), so a range read fetches only the TOAST
//! pieces it needs.
//!
//! Many host processes may start at the same moment on one empty database: every migration
//! runs inside one transaction that first takes a transaction-scoped advisory lock, so
//! exactly one process creates the schema and the others find it done.

use anyhow::bail;
use tokio_postgres::Client;

/// The advisory lock key migrations take (`'scratchpad'` in ASCII, as an i64).
const MIGRATION_LOCK: i64 = 0x7363_7261_7463_6870;

/// Each entry brings the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    r#"
    CREATE TABLE sessions (
        id TEXT COLLATE "C" PRIMARY KEY,
        parent TEXT COLLATE "C" REFERENCES sessions(id),
        origin TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        turn_id TEXT,
        turn_index BIGINT NOT NULL DEFAULT -1,
        version BIGINT NOT NULL DEFAULT 0,
        guidance TEXT NOT NULL DEFAULT '[]',
        compaction_count BIGINT NOT NULL DEFAULT 0,
        total_tokens BIGINT
    );
    CREATE TABLE plugin_state (
        session TEXT COLLATE "C" NOT NULL REFERENCES sessions(id),
        plugin TEXT COLLATE "C" NOT NULL,
        key TEXT COLLATE "C" NOT NULL,
        value BYTEA NOT NULL,
        PRIMARY KEY (session, plugin, key)
    );
    CREATE TABLE plugin_metadata (
        session TEXT COLLATE "C" NOT NULL REFERENCES sessions(id),
        plugin TEXT COLLATE "C" NOT NULL,
        key TEXT COLLATE "C" NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (session, plugin, key)
    );
    CREATE TABLE observations (
        id TEXT PRIMARY KEY,
        plugin TEXT NOT NULL,
        session TEXT NOT NULL REFERENCES sessions(id),
        turn_id TEXT NOT NULL,
        step_num BIGINT NOT NULL,
        executor_name TEXT NOT NULL,
        content_kind TEXT NOT NULL,
        size_bytes BIGINT NOT NULL,
        size_chars BIGINT NOT NULL,
        ascii BOOLEAN NOT NULL,
        sha256 TEXT NOT NULL,
        summary TEXT NOT NULL,
        metadata TEXT NOT NULL,
        created_at_ms BIGINT NOT NULL,
        expires_at_ms BIGINT NOT NULL,
        ordinal BIGSERIAL
    );
    CREATE INDEX observations_scope ON observations (session, plugin, turn_id);
    CREATE INDEX observations_expiry ON observations (expires_at_ms);
    CREATE TABLE observation_chunks (
        id TEXT NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        data BYTEA NOT NULL,
        PRIMARY KEY (id, seq)
    );
    ALTER TABLE observation_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
    CREATE TABLE checkpoints (
        id TEXT PRIMARY KEY,
        session TEXT NOT NULL REFERENCES sessions(id),
        plugin TEXT NOT NULL,
        parent_id TEXT,
        turn_id TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        trigger TEXT NOT NULL,
        tokens_at_checkpoint BIGINT NOT NULL,
        message_count_at_checkpoint BIGINT NOT NULL,
        summary TEXT NOT NULL,
        topics TEXT NOT NULL,
        key_decisions TEXT NOT NULL,
        open_questions TEXT NOT NULL,
        ordinal BIGSERIAL
    );
    CREATE INDEX checkpoints_session ON checkpoints (session, created_at, ordinal);
    CREATE TABLE plugin_identities (
        name TEXT COLLATE "C" PRIMARY KEY,
        identity TEXT NOT NULL,
        recorded_at BIGINT NOT NULL
    );
"#,
    r#"
    CREATE TABLE plugin_events (
        session TEXT COLLATE "C" NOT NULL REFERENCES sessions(id),
        plugin TEXT NOT NULL,
        hook TEXT NOT NULL,
        kind TEXT NOT NULL,
        message TEXT NOT NULL,
        at_ms BIGINT NOT NULL,
        ordinal BIGSERIAL
    );
    CREATE INDEX plugin_events_session ON plugin_events (session, ordinal);
"#,
    // Which project a session belongs to, and each plugin's search index of a project (see
    // `index.rs`): the documents with a stored tsvector under a GIN index, and each scope's
    // usage for its quota, kept by a trigger.
    r#"
    ALTER TABLE sessions ADD COLUMN project TEXT;
    CREATE INDEX sessions_project ON sessions (project);
    CREATE TABLE index_documents (
        project TEXT COLLATE "C" NOT NULL,
        plugin TEXT COLLATE "C" NOT NULL,
        id TEXT COLLATE "C" NOT NULL,
        session TEXT COLLATE "C" NOT NULL,
        kind TEXT NOT NULL,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        at_ms BIGINT NOT NULL,
        bytes BIGINT NOT NULL,
        ordinal BIGSERIAL,
        search tsvector GENERATED ALWAYS AS
            (setweight(to_tsvector('simple', title), 'A') || setweight(to_tsvector('simple', body), 'B')) STORED,
        PRIMARY KEY (project, plugin, id)
    );
    CREATE INDEX index_documents_search ON index_documents USING GIN (search);
    CREATE INDEX index_documents_recent ON index_documents (project, plugin, at_ms);
    CREATE INDEX index_documents_newest ON index_documents (project, plugin, ordinal);
    CREATE TABLE index_usage (
        project TEXT COLLATE "C" NOT NULL,
        plugin TEXT COLLATE "C" NOT NULL,
        documents BIGINT NOT NULL,
        bytes BIGINT NOT NULL,
        PRIMARY KEY (project, plugin)
    );
    -- Statement-level, over the statement's rows: a per-row trigger would update one usage row
    -- once per document, and within one transaction each update walks every version the
    -- earlier ones left (an import of 210,000 documents took minutes).
    CREATE FUNCTION index_usage_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO index_usage AS u (project, plugin, documents, bytes)
            SELECT project, plugin, count(*), sum(bytes) FROM inserted GROUP BY project, plugin
            ON CONFLICT (project, plugin)
            DO UPDATE SET documents = u.documents + EXCLUDED.documents, bytes = u.bytes + EXCLUDED.bytes;
        RETURN NULL;
    END $$;
    CREATE FUNCTION index_usage_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE index_usage u SET documents = u.documents - d.documents, bytes = u.bytes - d.bytes
          FROM (SELECT project, plugin, count(*) AS documents, sum(bytes) AS bytes FROM deleted
                 GROUP BY project, plugin) d
         WHERE u.project = d.project AND u.plugin = d.plugin;
        RETURN NULL;
    END $$;
    CREATE TRIGGER index_documents_inserted AFTER INSERT ON index_documents
        REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION index_usage_inserted();
    CREATE TRIGGER index_documents_deleted AFTER DELETE ON index_documents
        REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION index_usage_deleted();
"#,
];

/// Brings the schema up to date, serialized across every process by the advisory lock.
pub(super) async fn migrate(client: &mut Client) -> anyhow::Result<()> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).await?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS scratchpad_schema (version INTEGER NOT NULL)").await?;
    let version: i32 = match tx.query_opt("SELECT version FROM scratchpad_schema", &[]).await? {
        Some(row) => row.get(0),
        None => {
            tx.execute("INSERT INTO scratchpad_schema (version) VALUES (0)", &[]).await?;
            0
        }
    };
    let version = version.max(0) as usize;
    if version > MIGRATIONS.len() {
        bail!(
            "the database has schema version {version}, newer than this scratchpad understands ({}); upgrade \
             scratchpad",
            MIGRATIONS.len()
        );
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
        tx.batch_execute(sql).await?;
        tx.execute("UPDATE scratchpad_schema SET version = $1", &[&((i + 1) as i32)]).await?;
    }
    tx.commit().await?;
    Ok(())
}
