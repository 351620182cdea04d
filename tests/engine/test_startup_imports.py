"""Start-up stays light: importing the engine's facade, and listing sessions from the command line,
load none of the heavy packages (the LLM client, the embedder's runtime, numpy, the configuration's
validation machinery, the app's toolkit). Each check runs in a fresh interpreter and reads its
``sys.modules``; a control shows the check reports a heavy import when there is one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench.app import populate
from engine.bench.items import add_item, create_benchmark
from engine.store import Store

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("openai", "httpx", "onnxruntime", "tokenizers", "numpy", "pydantic", "yaml", "textual", "sqlite_utils")
"""Top-level packages that made ``viva sessions`` take seconds (each costs 0.05-0.6 s to import)."""

CHECK = r"""
import json, sys
exec(sys.argv[1])
heavy = json.loads(sys.argv[2])
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(heavy))))
"""


def heavy_imports(code: str, cwd: Path) -> list[str]:
    """The heavy packages present in ``sys.modules`` after running ``code`` in a new interpreter."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("VIVA_HOME", None)
    out = subprocess.run([sys.executable, "-c", CHECK, code, json.dumps(HEAVY)], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_viva(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``viva ARGS`` in a new process (the console script's code: ``python -m tui``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("VIVA_HOME", None)
    return subprocess.run([sys.executable, "-m", "tui", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=60)


def test_the_check_sees_a_heavy_import(tmp_path):
    assert heavy_imports("import numpy", tmp_path) == ["numpy"]
    assert "numpy" in heavy_imports("import engine.knowledge.embed", tmp_path)


def test_importing_the_facade_loads_nothing_heavy(tmp_path):
    assert heavy_imports("import engine.api", tmp_path) == []


def test_the_heavy_names_of_the_facade_are_still_there(tmp_path):
    code = ("import engine.api as api\n"
            "assert issubclass(api.LLMError, Exception) and api.EmbedderError in api.USER_ERRORS\n"
            "assert api.RunRequest.__module__ == 'engine.interview.run' and callable(api.search)\n"
            "assert set(api.__all__) <= set(dir(api))\n"
            "import engine.llm.client as c, engine.knowledge.embed as e\n"
            "assert api.LLMError is c.LLMError and api.EmbedderError is e.EmbedderError\n")
    assert "numpy" in heavy_imports(code, tmp_path)  # a name that needs numpy brings it, on first use


def test_viva_sessions_lists_rows_without_heavy_imports(tmp_path):
    home = tmp_path / "home"
    store = Store(home / "viva.db")
    with store.transaction():
        item = add_item(store, create_benchmark(store, "flu", "jsonl"), 0, protocol="adaptive",
                        topic="influenza", question="Why?", reference="So.")
    ids = populate(store, 60, item, seed=3)
    store.close()
    code = ("import contextlib, io\n"
            "from tui.cli import main\n"
            "buf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):\n"
            f"    main(['--home', {str(home)!r}, 'sessions', '--limit', '5'], standalone_mode=False)\n"
            "import re\n"  # the id column: a piped table is whole, so an id may also be part of a time
            "shown = sorted(int(i) for i in re.findall(r'^\\S (\\d+) ', buf.getvalue(), re.M))\n"
            f"assert shown == {sorted(ids[-5:])!r}, buf.getvalue()\n")
    assert heavy_imports(code, tmp_path) == []
    # The engine's user errors still print one line with their exit code (looked up only then).
    for args, code, message in ((["bench", "show", "nosuch"], 1, "Error: no benchmark named 'nosuch'"),
                                (["--config", str(tmp_path / "none.yaml"), "sessions"], 2, "config file not found")):
        out = run_viva(["--home", str(home), *args], tmp_path)
        assert out.returncode == code and message in out.stderr, out.stderr

def test_a_config_file_is_still_read_and_checked_at_once(tmp_path):
    (tmp_path / "viva.yaml").write_text("interview:\n  turns: 0\n")
    out = run_viva(["--home", str(tmp_path / "h"), "sessions"], tmp_path)
    assert out.returncode == 2 and "viva.yaml" in out.stderr and "interview.turns" in out.stderr


def test_the_embedder_cache_dir_reaches_the_embedder_whether_it_is_imported_before_or_after(tmp_path):
    after = ("import sys\nfrom engine.runtime import Runtime\n"
             f"rt = Runtime.create({str(tmp_path / 'a')!r})\n"
             "assert 'engine.knowledge.embed' not in sys.modules\n"
             "import engine.knowledge.embed as e\nassert e._CACHE_DIR == rt.home / 'cache', e._CACHE_DIR\n")
    before = ("import engine.knowledge.embed as e\nfrom engine.runtime import Runtime\n"
              f"rt = Runtime.create({str(tmp_path / 'b')!r})\nassert e._CACHE_DIR == rt.home / 'cache', e._CACHE_DIR\n")
    assert "numpy" in heavy_imports(after, tmp_path) and "numpy" in heavy_imports(before, tmp_path)
