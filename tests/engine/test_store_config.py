"""Config validation, store schema and the cross-process event log."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from engine.config import Config, ConfigError, load_config
from engine.store import Store
from engine.store.schema import SCHEMA_VERSION


def test_defaults_need_no_file(tmp_path):
    cfg = load_config(cwd=tmp_path)
    assert cfg == Config() and cfg.kernel is None and cfg.interview.turns == 6


def test_valid_file(tmp_path):
    path = tmp_path / "viva.yaml"
    path.write_text(textwrap.dedent("""
        kernel: {base_url: "https://api.openai.com/v1", model: gpt-4o, api_key_env: OPENAI_API_KEY,
                 price_in: 2.5, price_out: 10}
        targets:
          llama: {base_url: "http://127.0.0.1:8080/v1", model: llama, max_concurrency: 2}
        interview: {turns: 4}
    """))
    cfg = load_config(cwd=tmp_path)
    assert cfg.kernel.model == "gpt-4o" and cfg.targets["llama"].max_concurrency == 2
    assert cfg.interview.turns == 4 and cfg.retrieval.rrf_k == 60


def test_bad_value_names_file_and_key_path(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("targets:\n  llama:\n    max_concurrency: lots\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert str(path) in message and "targets.llama.max_concurrency" in message and "integer" in message


def test_unknown_key_and_bad_yaml(tmp_path):
    path = tmp_path / "viva.yaml"
    path.write_text("interview:\n  turnz: 3\n")
    with pytest.raises(ConfigError, match=r"interview\.turnz: Extra inputs"):
        load_config(path)
    path.write_text("interview: [unclosed\n")
    with pytest.raises(ConfigError, match=r"viva\.yaml:\d+: not valid YAML"):
        load_config(path)


def test_schema_version_and_foreign_keys(tmp_path):
    store = Store(tmp_path / "v.db")
    assert store.schema_version == SCHEMA_VERSION
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    import sqlite3

    with pytest.raises(sqlite3.IntegrityError):
        store.insert("turns", {"session_id": 999, "idx": 0, "question": "q", "action": "initial",
                               "created_at": "x"})
    store.close()
    again = Store(tmp_path / "v.db")  # reopening does not re-run migrations
    assert again.schema_version == SCHEMA_VERSION


def test_transaction_rolls_back_everything(tmp_path):
    store = Store(tmp_path / "v.db")
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.insert("knowledge_bases", {"name": "a", "created_at": "t"})
            store.insert("knowledge_bases", {"name": "b", "created_at": "t"})
            raise RuntimeError("interrupted")
    assert store.query("SELECT * FROM knowledge_bases") == []


def test_newer_schema_is_refused(tmp_path):
    store = Store(tmp_path / "v.db")
    store.conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 5}")
    store.close()
    from engine.store import StoreError

    with pytest.raises(StoreError, match="newer than this viva"):
        Store(tmp_path / "v.db")


WRITER = """
import sys, time
from engine.store import Store
store = Store(sys.argv[1])
for i in range(40):
    store.append_event(None, "tick", {"i": i})
    time.sleep(0.005)
"""


async def test_events_from_another_process_arrive_in_order(tmp_path):
    path = tmp_path / "v.db"
    store = Store(path)
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)])
    seen: list[int] = []
    seqs: list[int] = []
    import asyncio

    async def follow():
        async for event in store.subscribe(after=0, interval=0.01):
            seen.append(event.payload["i"])
            seqs.append(event.seq)
            if len(seen) == 40:
                return

    await asyncio.wait_for(follow(), timeout=60)
    assert proc.wait(timeout=30) == 0
    assert seen == list(range(40)) and seqs == sorted(seqs)
    assert [e.payload["i"] for e in store.events(after=seqs[9])][:3] == [10, 11, 12]


def test_insert_many_is_one_statement_a_chunk_and_redacts(store, monkeypatch):
    """A turn's verdicts are one INSERT (was one execution per row); more rows than one statement may bind
    go in chunks of MAX_VARIABLES bound values; text is redacted as by insert()."""
    from engine.store import db

    monkeypatch.setenv("VIVA_TEST_SECRET_KEY", "sk-proj-4f9Qz8LmX2vB7nK1pR5tY3wA")
    store.conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, b TEXT)")
    seen: list[str] = []
    store.conn.set_trace_callback(seen.append)
    store.insert_many("t", [{"a": i, "b": f"row {i}"} for i in range(4)])
    inserts = [s for s in seen if s.lstrip().upper().startswith("INSERT")]
    assert len(inserts) == 1
    seen.clear()
    n = db.MAX_VARIABLES // 2 + 7  # one chunk of two columns and 7 rows more
    store.insert_many("t", [{"a": i, "b": "x"} for i in range(n)])
    assert len([s for s in seen if s.lstrip().upper().startswith("INSERT")]) == 2
    store.conn.set_trace_callback(None)
    assert store.one("SELECT COUNT(*) AS n FROM t")["n"] == 4 + n
    assert [r["a"] for r in store.query("SELECT a FROM t ORDER BY id LIMIT 4")] == [0, 1, 2, 3]
    store.insert_many("t", [{"a": -1, "b": "key sk-proj-4f9Qz8LmX2vB7nK1pR5tY3wA here"}])
    assert "sk-proj-4f9Qz8LmX2vB7nK1pR5tY3wA" not in store.one("SELECT b FROM t WHERE a = -1")["b"]
