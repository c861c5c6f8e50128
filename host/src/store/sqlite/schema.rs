//! The schema and its migrations, versioned with `PRAGMA user_version`.

use anyhow::bail;
use rusqlite::{Connection, TransactionBehavior};

/// Each entry brings the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: sessions and plugin state.
    "CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        parent TEXT REFERENCES sessions(id),
        origin TEXT NOT NULL,            -- new | spawn | spawn-copy | fork
        created_at INTEGER NOT NULL,     -- unix ms
        updated_at INTEGER NOT NULL,     -- unix ms, last committed plugin write
        turn_id TEXT,                    -- the runtime's id of the current turn
        turn_index INTEGER NOT NULL DEFAULT -1,
        version INTEGER NOT NULL DEFAULT 0,  -- bumped by every commit; optimistic concurrency
        guidance TEXT NOT NULL DEFAULT '[]', -- JSON: standing injections from before-session-create
        compaction_count INTEGER NOT NULL DEFAULT 0,
        total_tokens INTEGER
    );
    CREATE TABLE plugin_state (
        plugin TEXT NOT NULL,
        session TEXT NOT NULL REFERENCES sessions(id),
        key TEXT NOT NULL,
        value BLOB NOT NULL,
        PRIMARY KEY (plugin, session, key)
    ) WITHOUT ROWID;",
    // 2: the blob store for offloaded observations: the large-observation store's `entries`, scoped per plugin
    // and session like all plugin state. One deviation, measured: the content is not one
    // BLOB but 64 KiB rows in `observation_chunks`. A read at offset N of one large BLOB walks
    // SQLite's overflow-page chain from the start (41 ms for 2 KB at the end of 100 MB);
    // with chunks a range read touches only the chunks it needs, each through incremental
    // blob I/O.
    "CREATE TABLE observations (
        id TEXT PRIMARY KEY,             -- 16 lowercase hex
        plugin TEXT NOT NULL,
        session TEXT NOT NULL REFERENCES sessions(id),
        turn_id TEXT NOT NULL,
        step_num INTEGER,
        executor_name TEXT,
        content_kind TEXT NOT NULL,      -- text | binary
        size_bytes INTEGER NOT NULL,
        size_chars INTEGER NOT NULL,
        ascii INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        summary TEXT,
        metadata TEXT NOT NULL DEFAULT '{}',
        created_at REAL NOT NULL,        -- unix seconds
        expires_at REAL NOT NULL         -- unix seconds
    );
    CREATE TABLE observation_chunks (
        id TEXT NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,            -- chunk n holds bytes [n * 65536, (n + 1) * 65536)
        data BLOB NOT NULL,
        PRIMARY KEY (id, seq)
    );
    CREATE INDEX observations_turn ON observations(plugin, session, turn_id);
    CREATE INDEX observations_expiry ON observations(expires_at);",
    // 3: what plugins publish about a session (the `metadata` import; the context-pressure policy's session
    // metadata such as flushActioned), and the context-pressure policy's rolling checkpoints, written by the
    // embedder's summarizer at a plugin's request.
    "CREATE TABLE plugin_metadata (
        plugin TEXT NOT NULL,
        session TEXT NOT NULL REFERENCES sessions(id),
        key TEXT NOT NULL,
        value TEXT NOT NULL,             -- JSON
        PRIMARY KEY (plugin, session, key)
    ) WITHOUT ROWID;
    CREATE TABLE checkpoints (
        id TEXT PRIMARY KEY,             -- {unix_ms}_{4 hex}
        session TEXT NOT NULL REFERENCES sessions(id),
        plugin TEXT NOT NULL,            -- the plugin that asked for it
        parent_id TEXT,                  -- the session's previous checkpoint
        turn_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,     -- unix ms
        trigger TEXT NOT NULL,           -- JSON: {kind: token-percent | message-count, value}
        tokens_at_checkpoint INTEGER NOT NULL,
        message_count_at_checkpoint INTEGER NOT NULL,
        summary TEXT NOT NULL,
        topics TEXT NOT NULL,            -- JSON array of strings
        key_decisions TEXT NOT NULL,     -- JSON array of strings
        open_questions TEXT NOT NULL     -- JSON array of strings
    );
    CREATE INDEX checkpoints_session ON checkpoints(session, created_at);",
    // 4: which component owns each plugin name's data (see `crate::identity`): a scope is
    // bound to the component that first stored under it, not to whoever claims the name.
    "CREATE TABLE plugin_identities (
        name TEXT PRIMARY KEY,           -- the plugin name that scopes its data
        identity TEXT NOT NULL,          -- embedded:<name> | sha256:<hex of the component file>
        recorded_at INTEGER NOT NULL     -- unix ms
    ) WITHOUT ROWID;",
    // 5: an observation's content in a file of its own beside the database (see
    // `contents.rs`), not in `observation_chunks`, which keeps the entries written before.
    "ALTER TABLE observations ADD COLUMN content_in_file INTEGER NOT NULL DEFAULT 0;",
    // 6: each session's log of plugin failures and refusals (see `events.rs`): diagnostics
    // for the viewer, never read by a plugin, bounded per session.
    "CREATE TABLE plugin_events (
        session TEXT NOT NULL REFERENCES sessions(id),
        plugin TEXT NOT NULL,
        hook TEXT NOT NULL,
        kind TEXT NOT NULL,
        message TEXT NOT NULL,
        at_ms INTEGER NOT NULL           -- unix ms
    );
    CREATE INDEX plugin_events_session ON plugin_events(session);",
    // 7: which project a session belongs to, and each plugin's search index of a project (the
    // contract's `index` import; see `index.rs`). A scope (project and plugin) is a small
    // integer, so the per-document rows and indexes do not repeat its text; it also keeps the
    // scope's usage for its quota (a sum over a large project would cost every write). The
    // documents hold their text once; the full-text index over them is FTS5 with external
    // content and no positions (`detail = none`: ranking is done by the host over the
    // candidates' text, so the index needs only which documents hold a word), kept in step
    // by triggers.
    "ALTER TABLE sessions ADD COLUMN project TEXT;
    CREATE INDEX sessions_project ON sessions(project);
    CREATE TABLE index_scopes (
        scope INTEGER PRIMARY KEY,
        project TEXT NOT NULL,
        plugin TEXT NOT NULL,
        documents INTEGER NOT NULL DEFAULT 0,
        bytes INTEGER NOT NULL DEFAULT 0,    -- what its documents count against the quota
        UNIQUE (project, plugin)
    );
    CREATE TABLE index_documents (
        seq INTEGER PRIMARY KEY,             -- the full-text index's rowid; newer writes higher
        scope INTEGER NOT NULL REFERENCES index_scopes(scope),
        id TEXT NOT NULL,                    -- the plugin's id
        session TEXT NOT NULL,               -- the session whose call kept it
        kind TEXT NOT NULL,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        UNIQUE (scope, id)
    );
    CREATE INDEX index_documents_recent ON index_documents(scope, at_ms);
    CREATE VIRTUAL TABLE index_text USING fts5(
        title, body, content = 'index_documents', content_rowid = 'seq',
        tokenize = 'unicode61 remove_diacritics 2', detail = 'none'
    );
    CREATE TRIGGER index_documents_insert AFTER INSERT ON index_documents BEGIN
        INSERT INTO index_text (rowid, title, body) VALUES (new.seq, new.title, new.body);
        UPDATE index_scopes SET documents = documents + 1, bytes = bytes + new.bytes WHERE scope = new.scope;
    END;
    CREATE TRIGGER index_documents_delete AFTER DELETE ON index_documents BEGIN
        INSERT INTO index_text (index_text, rowid, title, body) VALUES ('delete', old.seq, old.title, old.body);
        UPDATE index_scopes SET documents = documents - 1, bytes = bytes - old.bytes WHERE scope = old.scope;
    END;",
    // 8: the search index in less space. A document names its session by a small integer
    // (`index_sessions`; a session id is often a 36-byte UUID), its quota bytes are computed
    // from its columns instead of kept, and the full-text index keeps no column sizes
    // (`columnsize = 0`: the host ranks, FTS5 never does). The documents are copied into the
    // new table (keeping their `seq`) and the full-text index is rebuilt from them.
    "CREATE TABLE index_sessions (
        n INTEGER PRIMARY KEY,
        session TEXT NOT NULL UNIQUE
    );
    INSERT INTO index_sessions (session) SELECT DISTINCT session FROM index_documents ORDER BY session;
    DROP TRIGGER index_documents_insert;
    DROP TRIGGER index_documents_delete;
    DROP TABLE index_text;
    CREATE TABLE index_documents_v8 (
        seq INTEGER PRIMARY KEY,             -- the full-text index's rowid; newer writes higher
        scope INTEGER NOT NULL REFERENCES index_scopes(scope),
        id TEXT NOT NULL,                    -- the plugin's id
        session INTEGER NOT NULL REFERENCES index_sessions(n), -- the session whose call kept it
        kind TEXT NOT NULL,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        at_ms INTEGER NOT NULL,
        UNIQUE (scope, id)
    );
    INSERT INTO index_documents_v8 (seq, scope, id, session, kind, title, body, at_ms)
        SELECT d.seq, d.scope, d.id, n.n, d.kind, d.title, d.body, d.at_ms
        FROM index_documents d JOIN index_sessions n ON n.session = d.session ORDER BY d.seq;
    DROP TABLE index_documents;
    ALTER TABLE index_documents_v8 RENAME TO index_documents;
    CREATE INDEX index_documents_recent ON index_documents(scope, at_ms);
    CREATE VIRTUAL TABLE index_text USING fts5(
        title, body, content = 'index_documents', content_rowid = 'seq',
        tokenize = 'unicode61 remove_diacritics 2', detail = 'none', columnsize = 0
    );
    INSERT INTO index_text (index_text) VALUES ('rebuild');
    CREATE TRIGGER index_documents_insert AFTER INSERT ON index_documents BEGIN
        INSERT INTO index_text (rowid, title, body) VALUES (new.seq, new.title, new.body);
        UPDATE index_scopes SET documents = documents + 1,
            bytes = bytes + octet_length(new.id) + octet_length(new.kind) + octet_length(new.title)
                          + octet_length(new.body) + 64
        WHERE scope = new.scope;
    END;
    CREATE TRIGGER index_documents_delete AFTER DELETE ON index_documents BEGIN
        INSERT INTO index_text (index_text, rowid, title, body) VALUES ('delete', old.seq, old.title, old.body);
        UPDATE index_scopes SET documents = documents - 1,
            bytes = bytes - octet_length(old.id) - octet_length(old.kind) - octet_length(old.title)
                          - octet_length(old.body) - 64
        WHERE scope = old.scope;
    END;",
];

pub(super) fn migrate(conn: &mut Connection) -> anyhow::Result<()> {
    // A database already up to date is only read: opening it never waits for another
    // process's write lock.
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version == MIGRATIONS.len() as i64 {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let version = version.max(0) as usize;
    if version > MIGRATIONS.len() {
        bail!(
            "the database has schema version {version}, newer than this scratchpad understands ({}); \
             upgrade scratchpad",
            MIGRATIONS.len()
        );
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
    }
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database of schema 7 holding documents comes through the index's rewrite whole: each
    /// keeps its session, the full-text index finds it, and the usage the triggers keep stays
    /// the sum of what its documents count.
    #[test]
    fn the_search_index_keeps_its_documents_through_the_smaller_schema() {
        let mut conn = Connection::open_in_memory().unwrap();
        for (i, sql) in MIGRATIONS.iter().enumerate().take(7) {
            conn.execute_batch(sql).unwrap();
            conn.pragma_update(None, "user_version", (i + 1) as i64).unwrap();
        }
        conn.execute_batch(
            "INSERT INTO index_scopes (project, plugin) VALUES ('/p', 'a');
             INSERT INTO index_documents (scope, id, session, kind, title, body, at_ms, bytes) VALUES
                 (1, 'n1', 'session-one', 'note', 'Note', 'the parser drops timezones', 1, 100),
                 (1, 'n2', 'session-two', 'note', 'Note', 'crème brûlée', 2, 89);",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let found: Vec<(String, String)> = conn
            .prepare(
                "SELECT d.id, n.session FROM index_text JOIN index_documents d ON d.seq = index_text.rowid
                 JOIN index_sessions n ON n.n = d.session WHERE index_text MATCH 'timezones OR brulee' ORDER BY d.id",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(found, [("n1".into(), "session-one".into()), ("n2".into(), "session-two".into())]);
        let usage = |conn: &Connection| -> (i64, i64) {
            conn.query_row("SELECT documents, bytes FROM index_scopes", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap()
        };
        assert_eq!(usage(&conn), (2, 100 + 89));
        conn.execute("DELETE FROM index_documents WHERE id = 'n2'", []).unwrap();
        assert_eq!(usage(&conn), (1, 100), "`crème brûlée` counts its bytes, not its characters");
        conn.execute("DELETE FROM index_documents", []).unwrap();
        assert_eq!(usage(&conn), (0, 0));
    }
}
