"""The SQLite schema, as an ordered list of migrations.

Each migration is applied once, in a transaction, and bumps ``PRAGMA user_version``. Never edit a
migration that has shipped: append a new one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from engine.text.cloze import parse_cloze


def _migration_7(store: Any) -> None:
    """Constant storage per turn: texts and LLM messages stored once (see :mod:`engine.store.migrate_v7`)."""
    from engine.store.migrate_v7 import migrate

    migrate(store)


MIGRATIONS: list[str | Callable[[Any], None]] = [
    # 1: the whole initial schema.
    """
    CREATE TABLE knowledge_bases (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        config TEXT NOT NULL DEFAULT '{}'
    );
    CREATE TABLE documents (
        id INTEGER PRIMARY KEY,
        kb_id INTEGER NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        sha256 TEXT NOT NULL,
        n_chars INTEGER NOT NULL DEFAULT 0,
        meta TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        UNIQUE (kb_id, path)
    );
    CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        kb_id INTEGER NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        ord INTEGER NOT NULL,
        text TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        start_char INTEGER NOT NULL DEFAULT 0,
        end_char INTEGER NOT NULL DEFAULT 0,
        UNIQUE (document_id, ord)
    );
    CREATE INDEX chunks_kb ON chunks(kb_id);
    CREATE INDEX chunks_sha ON chunks(sha256);
    CREATE TABLE embeddings (
        model TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (model, sha256)
    );
    CREATE TABLE entities (
        id INTEGER PRIMARY KEY,
        kb_id INTEGER NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        norm TEXT NOT NULL,
        chunk_ids TEXT NOT NULL DEFAULT '[]',
        document_ids TEXT NOT NULL DEFAULT '[]',
        vector BLOB,
        UNIQUE (kb_id, norm)
    );
    CREATE TABLE entity_edges (
        kb_id INTEGER NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,
        src INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        dst INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        kind TEXT NOT NULL DEFAULT 'chunk',
        weight REAL NOT NULL DEFAULT 1.0,
        PRIMARY KEY (src, dst)
    );
    CREATE TABLE benchmarks (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        kb_id INTEGER REFERENCES knowledge_bases(id) ON DELETE SET NULL,
        source TEXT NOT NULL DEFAULT '',
        meta TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL
    );
    CREATE TABLE items (
        id INTEGER PRIMARY KEY,
        benchmark_id INTEGER NOT NULL REFERENCES benchmarks(id) ON DELETE CASCADE,
        ord INTEGER NOT NULL,
        ext_id TEXT,
        topic TEXT NOT NULL DEFAULT '',
        protocol TEXT NOT NULL,
        question TEXT NOT NULL DEFAULT '',
        turns TEXT NOT NULL DEFAULT '[]',
        reference TEXT,
        options TEXT,
        gold TEXT,
        difficulty TEXT,
        source_chunk_ids TEXT NOT NULL DEFAULT '[]',
        meta TEXT NOT NULL DEFAULT '{}',
        UNIQUE (benchmark_id, ord)
    );
    CREATE TABLE rubrics (
        id INTEGER PRIMARY KEY,
        item_id INTEGER NOT NULL UNIQUE REFERENCES items(id) ON DELETE CASCADE,
        current_version_id INTEGER
    );
    CREATE TABLE rubric_versions (
        id INTEGER PRIMARY KEY,
        rubric_id INTEGER NOT NULL REFERENCES rubrics(id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        parent_id INTEGER REFERENCES rubric_versions(id),
        author TEXT NOT NULL,
        note TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        UNIQUE (rubric_id, version)
    );
    CREATE TABLE criteria (
        id INTEGER PRIMARY KEY,
        rubric_version_id INTEGER NOT NULL REFERENCES rubric_versions(id) ON DELETE CASCADE,
        cid TEXT NOT NULL,
        ord INTEGER NOT NULL,
        text TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('point', 'deduction', 'code')),
        weight REAL NOT NULL DEFAULT 1.0,
        eval_code TEXT,
        source_chunk_ids TEXT NOT NULL DEFAULT '[]',
        raw TEXT,
        UNIQUE (rubric_version_id, cid)
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        created_at TEXT NOT NULL,
        config TEXT NOT NULL DEFAULT '{}',
        status TEXT NOT NULL DEFAULT 'running'
    );
    CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
        item_id INTEGER REFERENCES items(id) ON DELETE SET NULL,
        benchmark_id INTEGER REFERENCES benchmarks(id) ON DELETE SET NULL,
        protocol TEXT NOT NULL,
        target TEXT NOT NULL,
        kernel TEXT NOT NULL,
        judge TEXT NOT NULL DEFAULT '',
        policy TEXT NOT NULL DEFAULT '',
        policy_version TEXT NOT NULL DEFAULT '',
        seed INTEGER NOT NULL DEFAULT 0,
        config TEXT NOT NULL DEFAULT '{}',
        status TEXT NOT NULL DEFAULT 'created'
            CHECK (status IN ('created', 'running', 'paused', 'finished', 'failed', 'interrupted')),
        rubric_version_id INTEGER REFERENCES rubric_versions(id),
        score REAL,
        error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX sessions_run ON sessions(run_id);
    CREATE TABLE turns (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        question TEXT NOT NULL,
        answer TEXT,
        action TEXT NOT NULL,
        actor TEXT NOT NULL DEFAULT 'policy',
        state TEXT,
        probs TEXT,
        difficulty TEXT,
        summary TEXT,
        score REAL,
        delta REAL,
        cos REAL,
        latency_ms REAL,
        tokens_in INTEGER NOT NULL DEFAULT 0,
        tokens_out INTEGER NOT NULL DEFAULT 0,
        cost REAL NOT NULL DEFAULT 0,
        rubric_version_id INTEGER REFERENCES rubric_versions(id),
        meta TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        UNIQUE (session_id, idx)
    );
    CREATE TABLE verdicts (
        id INTEGER PRIMARY KEY,
        turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
        cid TEXT NOT NULL,
        rubric_version_id INTEGER REFERENCES rubric_versions(id),
        met INTEGER NOT NULL,
        rationale TEXT NOT NULL DEFAULT '',
        source TEXT NOT NULL CHECK (source IN ('judge', 'code', 'human', 'offline')),
        created_at TEXT NOT NULL
    );
    CREATE INDEX verdicts_turn ON verdicts(turn_id);
    CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id INTEGER REFERENCES sessions(id) ON DELETE CASCADE,
        ts REAL NOT NULL,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX events_session ON events(session_id, seq);
    CREATE TABLE llm_calls (
        id INTEGER PRIMARY KEY,
        cache_key TEXT NOT NULL,
        role TEXT NOT NULL,
        base_url TEXT NOT NULL,
        model TEXT NOT NULL,
        request TEXT NOT NULL,
        response TEXT,
        tokens_in INTEGER NOT NULL DEFAULT 0,
        tokens_out INTEGER NOT NULL DEFAULT 0,
        latency_ms REAL NOT NULL DEFAULT 0,
        cost REAL NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 1,
        retries TEXT NOT NULL DEFAULT '[]',
        cached INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        session_id INTEGER,
        created_at TEXT NOT NULL
    );
    CREATE INDEX llm_calls_key ON llm_calls(cache_key);
    CREATE TABLE metrics (
        id INTEGER PRIMARY KEY,
        scope TEXT NOT NULL,
        scope_id TEXT NOT NULL,
        name TEXT NOT NULL,
        value REAL,
        meta TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        UNIQUE (scope, scope_id, name)
    );
    """,
    # 2: per-answer verdicts, the runner's process id (to tell a dead "running" session).
    """
    ALTER TABLE verdicts ADD COLUMN in_answer INTEGER;
    ALTER TABLE sessions ADD COLUMN pid INTEGER;
    """,
    # 3: gold-answer criteria (SQuAD spans, a multiple-choice option, an imported short answer),
    #    judged against the reply to the question that carries them.
    """
    ALTER TABLE criteria ADD COLUMN answers TEXT;
    ALTER TABLE criteria ADD COLUMN asks TEXT;
    CREATE TABLE verdicts_v3 (
        id INTEGER PRIMARY KEY,
        turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
        cid TEXT NOT NULL,
        rubric_version_id INTEGER REFERENCES rubric_versions(id),
        met INTEGER NOT NULL,
        rationale TEXT NOT NULL DEFAULT '',
        source TEXT NOT NULL CHECK (source IN ('judge', 'code', 'human', 'offline', 'gold')),
        created_at TEXT NOT NULL,
        in_answer INTEGER
    );
    INSERT INTO verdicts_v3 (id, turn_id, cid, rubric_version_id, met, rationale, source, created_at, in_answer)
        SELECT id, turn_id, cid, rubric_version_id, met, rationale, source, created_at, in_answer FROM verdicts;
    DROP TABLE verdicts;
    ALTER TABLE verdicts_v3 RENAME TO verdicts;
    CREATE INDEX verdicts_turn ON verdicts(turn_id);
    """,
    # 4: JudgeAgent's graded protocol: one row per question asked (base, extension, validation) with
    #    its difficulty, correctness and the running difficulty track after it.
    """
    CREATE TABLE graded_steps (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
        phase TEXT NOT NULL CHECK (phase IN ('base', 'extension', 'validation')),
        item_id INTEGER REFERENCES items(id),
        difficulty TEXT NOT NULL,
        labelled INTEGER NOT NULL DEFAULT 0,
        gold TEXT NOT NULL DEFAULT '[]',
        correct INTEGER,
        gain REAL,
        total REAL,
        count INTEGER,
        average REAL,
        next_difficulty TEXT,
        path TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (turn_id)
    );
    CREATE INDEX graded_steps_session ON graded_steps(session_id);
    """,
    # 5: single ownership of runs and sessions (engine/store/lease.py): who drives one, and when it
    #    last showed life.
    """
    CREATE TABLE leases (
        scope TEXT NOT NULL CHECK (scope IN ('run', 'session')),
        ident INTEGER NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        token TEXT NOT NULL,
        acquired_at REAL NOT NULL,
        heartbeat_at REAL NOT NULL,
        PRIMARY KEY (scope, ident)
    );
    """,
    # 6: a session the evaluator stopped is ``stopped`` (resumable), not finished. SQLite cannot
    #    change a CHECK in place: the table is rebuilt (foreign keys are off while migrations run).
    """
    CREATE TABLE sessions_v4 (
        id INTEGER PRIMARY KEY,
        run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
        item_id INTEGER REFERENCES items(id) ON DELETE SET NULL,
        benchmark_id INTEGER REFERENCES benchmarks(id) ON DELETE SET NULL,
        protocol TEXT NOT NULL,
        target TEXT NOT NULL,
        kernel TEXT NOT NULL,
        judge TEXT NOT NULL DEFAULT '',
        policy TEXT NOT NULL DEFAULT '',
        policy_version TEXT NOT NULL DEFAULT '',
        seed INTEGER NOT NULL DEFAULT 0,
        config TEXT NOT NULL DEFAULT '{}',
        status TEXT NOT NULL DEFAULT 'created'
            CHECK (status IN ('created', 'running', 'paused', 'finished', 'failed', 'interrupted', 'stopped')),
        rubric_version_id INTEGER REFERENCES rubric_versions(id),
        score REAL,
        error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        pid INTEGER
    );
    INSERT INTO sessions_v4 (id, run_id, item_id, benchmark_id, protocol, target, kernel, judge, policy,
                             policy_version, seed, config, status, rubric_version_id, score, error, created_at,
                             updated_at, pid)
        SELECT id, run_id, item_id, benchmark_id, protocol, target, kernel, judge, policy, policy_version, seed,
               config, status, rubric_version_id, score, error, created_at, updated_at, pid FROM sessions;
    DROP TABLE sessions;
    ALTER TABLE sessions_v4 RENAME TO sessions;
    CREATE INDEX sessions_run ON sessions(run_id);
    """,
    # 7: each text once (``texts``: whole, or a delta on another text), LLM requests as paths of a
    #    message prefix tree (``llm_messages``; ``llm_calls.request`` becomes ``messages_id`` + ``params``),
    #    turn summaries in ``texts`` (``turns.summary_text``), verdicts events carrying the summary's
    #    change and metrics events without the per-turn score list. Moves the data (Python).
    _migration_7,
]


def _stats_terms(row: str) -> dict[str, str]:
    """What one turn row (``NEW`` or ``OLD``) adds to its session's ``session_stats`` row."""
    follow = f"{row}.action = 'follow-up' AND {row}.delta IS NOT NULL"
    challenge = f"{row}.action = 'challenge' AND {row}.delta IS NOT NULL"
    return {
        "answered": f"CASE WHEN {row}.answer IS NOT NULL THEN 1 ELSE 0 END",
        "follow_ups": f"CASE WHEN {follow} THEN 1 ELSE 0 END",
        "follow_sum": f"CASE WHEN {follow} THEN {row}.delta ELSE 0.0 END",
        "challenges": f"CASE WHEN {challenge} THEN 1 ELSE 0 END",
        "plus_n": f"CASE WHEN {challenge} AND {row}.delta > 0 THEN 1 ELSE 0 END",
        "plus_sum": f"CASE WHEN {challenge} AND {row}.delta > 0 THEN {row}.delta ELSE 0.0 END",
        "minus_n": f"CASE WHEN {challenge} AND {row}.delta < 0 THEN 1 ELSE 0 END",
        "minus_sum": f"CASE WHEN {challenge} AND {row}.delta < 0 THEN -{row}.delta ELSE 0.0 END",
        "tokens_in": f"COALESCE({row}.tokens_in, 0)",
        "tokens_out": f"COALESCE({row}.tokens_out, 0)",
        "cost": f"COALESCE({row}.cost, 0.0)",
    }


_STATS_UPDATE_OF = "session_id, answer, action, delta, tokens_in, tokens_out, cost"
"""The ``turns`` columns whose update changes a ``session_stats`` row (migration 8's terms)."""


def _stats_triggers(terms: Callable[[str], dict[str, str]], update_of: str) -> str:
    """The triggers that keep ``session_stats`` equal to ``SUM(terms)`` over each session's turns."""
    new, old = terms("NEW"), terms("OLD")
    add = ", ".join(f"{c} = {c} + ({t})" for c, t in new.items())
    sub = ", ".join(f"{c} = {c} - ({t})" for c, t in old.items())
    change = ", ".join(f"{c} = {c} + ({new[c]}) - ({old[c]})" for c in new)
    return f"""CREATE TRIGGER session_stats_insert AFTER INSERT ON turns BEGIN
        INSERT INTO session_stats (session_id) VALUES (NEW.session_id) ON CONFLICT (session_id) DO NOTHING;
        UPDATE session_stats SET {add} WHERE session_id = NEW.session_id;
    END;
    CREATE TRIGGER session_stats_update AFTER UPDATE OF {update_of}
        ON turns WHEN OLD.session_id = NEW.session_id BEGIN
        UPDATE session_stats SET {change} WHERE session_id = NEW.session_id;
    END;
    CREATE TRIGGER session_stats_move AFTER UPDATE OF session_id ON turns WHEN OLD.session_id != NEW.session_id BEGIN
        UPDATE session_stats SET {sub} WHERE session_id = OLD.session_id;
        INSERT INTO session_stats (session_id) VALUES (NEW.session_id) ON CONFLICT (session_id) DO NOTHING;
        UPDATE session_stats SET {add} WHERE session_id = NEW.session_id;
    END;
    CREATE TRIGGER session_stats_delete AFTER DELETE ON turns BEGIN
        UPDATE session_stats SET {sub} WHERE session_id = OLD.session_id;
    END;
"""


def _stats_migration() -> str:
    """Migration 8 (see its comment in ``MIGRATIONS``)."""
    new = _stats_terms("NEW")
    backfill = ", ".join(f"SUM({t})" for t in _stats_terms("turns").values())
    return f"""
    CREATE TABLE session_stats (
        session_id INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        answered INTEGER NOT NULL DEFAULT 0,
        follow_ups INTEGER NOT NULL DEFAULT 0,
        follow_sum REAL NOT NULL DEFAULT 0,
        challenges INTEGER NOT NULL DEFAULT 0,
        plus_n INTEGER NOT NULL DEFAULT 0,
        plus_sum REAL NOT NULL DEFAULT 0,
        minus_n INTEGER NOT NULL DEFAULT 0,
        minus_sum REAL NOT NULL DEFAULT 0,
        tokens_in INTEGER NOT NULL DEFAULT 0,
        tokens_out INTEGER NOT NULL DEFAULT 0,
        cost REAL NOT NULL DEFAULT 0
    );
    INSERT INTO session_stats (session_id, {", ".join(new)})
        SELECT session_id, {backfill} FROM turns GROUP BY session_id;
    {_stats_triggers(_stats_terms, _STATS_UPDATE_OF)}    CREATE INDEX sessions_status ON sessions(status);
    CREATE INDEX sessions_item ON sessions(item_id, id);
    CREATE INDEX verdicts_human ON verdicts(turn_id) WHERE source = 'human';
    """


# 8: per-session aggregates kept by the store (the session list's answered turns, the leaderboard's
#    Dynamism sums, tokens and cost), maintained by triggers on ``turns`` whichever code writes them,
#    so listing and ranking 10,000 sessions reads one row per session instead of every turn; and the
#    indexes the session list, compare picker and agreement figures filter on. Generated from
#    :func:`_stats_terms`: like every migration, never change it once shipped; append a new one.
MIGRATIONS.append(_stats_migration())

# 9: calls whose server reported no token counts (llama-cpp-python sends no ``usage`` in streams): their
#    ``tokens_in``/``tokens_out`` are 0 because they are unknown, not because nothing was spent; the figures
#    built on them say "unknown" instead of a number (issue 23).
MIGRATIONS.append("ALTER TABLE llm_calls ADD COLUMN usage_unknown INTEGER NOT NULL DEFAULT 0;")

# 10: ``not_examined``, a final status of its own (issue 23): a session that ended with no answered turn (the
#     examiner stopped before asking, every question was unusable) examined nothing; it is neither
#     ``finished`` (no measurement) nor resumable. The CHECK is widened by rebuilding the table (as in 6), and
#     a ``finished`` session with no answered turn on record is relabelled, with a ``session.finished`` event
#     saying so, so that the event fold and the row agree (engine.interview.runner: the rule).
MIGRATIONS.append("""
CREATE TABLE sessions_v10 (
    id INTEGER PRIMARY KEY,
    run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
    item_id INTEGER REFERENCES items(id) ON DELETE SET NULL,
    benchmark_id INTEGER REFERENCES benchmarks(id) ON DELETE SET NULL,
    protocol TEXT NOT NULL,
    target TEXT NOT NULL,
    kernel TEXT NOT NULL,
    judge TEXT NOT NULL DEFAULT '',
    policy TEXT NOT NULL DEFAULT '',
    policy_version TEXT NOT NULL DEFAULT '',
    seed INTEGER NOT NULL DEFAULT 0,
    config TEXT NOT NULL DEFAULT '{}',
    status TEXT NOT NULL DEFAULT 'created'
        CHECK (status IN ('created', 'running', 'paused', 'finished', 'failed', 'interrupted', 'stopped',
                          'not_examined')),
    rubric_version_id INTEGER REFERENCES rubric_versions(id),
    score REAL,
    error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    pid INTEGER
);
INSERT INTO sessions_v10 (id, run_id, item_id, benchmark_id, protocol, target, kernel, judge, policy,
                          policy_version, seed, config, status, rubric_version_id, score, error, created_at,
                          updated_at, pid)
    SELECT id, run_id, item_id, benchmark_id, protocol, target, kernel, judge, policy, policy_version, seed,
           config, status, rubric_version_id, score, error, created_at, updated_at, pid FROM sessions;
DROP TABLE sessions;
ALTER TABLE sessions_v10 RENAME TO sessions;
CREATE INDEX sessions_run ON sessions(run_id);
CREATE INDEX sessions_status ON sessions(status);
CREATE INDEX sessions_item ON sessions(item_id, id);
CREATE TEMP TABLE unexamined AS SELECT id FROM sessions s WHERE s.status = 'finished'
    AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id AND t.answer IS NOT NULL);
INSERT INTO events (session_id, ts, kind, payload)
    SELECT id, (julianday('now') - 2440587.5) * 86400.0, 'session.finished',
           json_object('metrics', json('{}'), 'reason', 'no question was answered (relabelled by schema 10)',
                       'score', NULL, 'status', 'not_examined') FROM unexamined ORDER BY id;
UPDATE sessions SET status = 'not_examined', score = NULL WHERE id IN (SELECT id FROM unexamined);
DROP TABLE unexamined;
""")

# 11: what each LLM call was for (``llm_calls.purpose``: ``answer``, ``judge``, ``challenge question``,
#     ``judge repair``...; empty for calls recorded before), so a turn's and a run's calls are counted by
#     purpose (bench/engine.py, the run report; docs/turn-cost.md); a session's calls found by index (the run
#     report's count by purpose, and each turn's metrics asking for calls without token counts, which read
#     every call of the home before: a turn's cost grew with the home).
MIGRATIONS.append("""
ALTER TABLE llm_calls ADD COLUMN purpose TEXT NOT NULL DEFAULT '';
CREATE INDEX llm_calls_session ON llm_calls(session_id);
""")



def _migration_12(store: Any) -> None:
    """Migration 12 (see its comment in ``MIGRATIONS``)."""
    conn = store.conn
    conn.execute("ALTER TABLE criteria ADD COLUMN cloze TEXT")
    rows = conn.execute("SELECT id, text FROM criteria WHERE text LIKE '%missing part of:%'").fetchall()
    for row_id, text in rows:
        cloze = parse_cloze(text)
        if cloze is not None:  # the JSON engine.store.db.dumps writes
            conn.execute("UPDATE criteria SET cloze = ? WHERE id = ?",
                         (json.dumps(cloze.to_dict(), ensure_ascii=False, sort_keys=True), row_id))


# 12: a fill-in-the-blank criterion carries its parts (``criteria.cloze``: JSON ``{"answer", "sentence"}``,
#     :class:`engine.text.cloze.Cloze`) instead of a text its readers parse. The rows written before get the
#     parts their text's wording states (:func:`engine.text.cloze.parse_cloze`, the one reading of it), so an
#     old database's items are judged and asked about as before.
MIGRATIONS.append(_migration_12)


def stats_terms(row: str) -> dict[str, str]:
    """What one turn row adds to its session's ``session_stats`` row now (migration 13): migration 8's
    terms and the judged turns (``scored``: a score on record) and the latencies' count and sum."""
    return {**_stats_terms(row),
            "scored": f"CASE WHEN {row}.score IS NOT NULL THEN 1 ELSE 0 END",
            "latency_n": f"CASE WHEN {row}.latency_ms IS NOT NULL THEN 1 ELSE 0 END",
            "latency_sum": f"COALESCE({row}.latency_ms, 0.0)"}


def _migration_13() -> str:
    """Migration 13 (see its comment in ``MIGRATIONS``)."""
    added = {c: t for c, t in stats_terms("turns").items() if c not in _stats_terms("turns")}
    columns = "\n".join(f"ALTER TABLE session_stats ADD COLUMN {c} {'REAL' if c.endswith('_sum') else 'INTEGER'} "
                        "NOT NULL DEFAULT 0;" for c in added)
    backfill = ", ".join(f"COALESCE(SUM({t}), 0)" for t in added.values())
    return f"""{columns}
UPDATE session_stats SET ({", ".join(added)}) = (SELECT {backfill} FROM turns WHERE turns.session_id = session_stats.session_id);
DROP TRIGGER session_stats_insert;
DROP TRIGGER session_stats_update;
DROP TRIGGER session_stats_move;
DROP TRIGGER session_stats_delete;
{_stats_triggers(stats_terms, _STATS_UPDATE_OF + ", score, latency_ms")}
CREATE INDEX llm_calls_unknown ON llm_calls(session_id) WHERE usage_unknown = 1;
"""


# 13: a turn's metrics event read from kept aggregates, not from every turn of its session (issue 39: a
#     turn's cost flat in the session's length): ``session_stats`` also counts the judged turns and sums the
#     latencies (its triggers recreated from :func:`stats_terms`, the earlier rows backfilled), and the calls
#     without token counts are found by a partial index.
MIGRATIONS.append(_migration_13())

SCHEMA_VERSION = len(MIGRATIONS)
