"""Issue 26 (hardening, round 2): each attack and fault, for real, as root and as a normal user.

The "normal user" runs are the same attack started under ``setpriv`` as uid 65534 with the
system's ``/usr/bin/python3`` (the venv's interpreter lives under ``/root``, which another uid cannot
enter on this machine); they are skipped, with the reason, where this process is not root (then the
run itself is the normal user's) or the machine has no ``setpriv`` or system Python 3.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from engine.judge import sandbox
from engine.judge.sandbox import WorkDirError, copy_case_data, prepare_work_dir, run_eval_code
from engine.store import Store

ROOT = Path(__file__).resolve().parents[2]
HISTORY = [{"role": "agent", "content": "done"}]
IS_ROOT = os.geteuid() == 0
needs_bwrap = pytest.mark.skipif(not sandbox.sandbox_available(), reason=f"no sandbox: {sandbox.sandbox_problem()}")
SYSTEM_PY = "/usr/bin/python3"
as_user_possible = IS_ROOT and shutil.which("setpriv") is not None and os.path.exists(SYSTEM_PY)
needs_user = pytest.mark.skipif(not as_user_possible, reason="not root (this run is already a normal user's), "
                                                             "or no setpriv / system python3 to become one")
USER = 65534

AS_USER = r'''
import json, sys
from engine.judge.sandbox import run_eval_code
spec = json.loads(sys.argv[1])
r = run_eval_code(spec["code"], [{"role": "agent", "content": "x"}], workdir=spec["workdir"])
print(json.dumps({"hit": r.hit, "reason": r.reason, "isolated": r.isolated}))
'''


def user_dir() -> Path:
    """A fresh folder the normal user owns, mode 0700."""
    d = Path(tempfile.mkdtemp(prefix="viva-h2-"))
    os.chown(d, USER, USER)
    return d


def run_as_user(code: str, workdir: Path) -> dict:
    """viva's side (run_eval_code) started as uid 65534; the attack runs in its sandbox."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8", "HOME": str(workdir)}
    proc = subprocess.run(["setpriv", f"--reuid={USER}", f"--regid={USER}", "--clear-groups", SYSTEM_PY, "-c",
                           AS_USER, json.dumps({"code": code, "workdir": str(workdir)})],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-800:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- 1. the sandbox as root -------------------------------------------------------------------------
SYSCTL_ATTACK = r'''
import os
opened = []
for p in ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches", "/proc/sysrq-trigger"):
    try:
        with open(p, "w") as f:
            f.write("|/tmp/x.sh" if "core" in p else "1")
        opened.append(p)
    except OSError:
        pass
assert not opened, f"writable: {opened}"
'''


def core_pattern() -> str:
    return Path("/proc/sys/kernel/core_pattern").read_text()


@needs_bwrap
def test_proc_sys_is_read_only_as_root(tmp_path):
    before = core_pattern()
    r = run_eval_code(SYSCTL_ATTACK, HISTORY)
    assert r.isolated and r.hit, r.reason
    assert core_pattern() == before


@needs_bwrap
@needs_user
def test_proc_sys_is_read_only_as_a_normal_user():
    before = core_pattern()
    wd = user_dir()
    try:
        r = run_as_user(SYSCTL_ATTACK, wd)
    finally:
        shutil.rmtree(wd)
    assert r["isolated"] and r["hit"], r["reason"]
    assert core_pattern() == before


PRIVILEGE_CHECK = r'''
import os
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
caps = {k: int(status[k].strip(), 16) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}
assert os.getuid() != 0 and os.geteuid() != 0 and os.getgid() != 0, (os.getuid(), os.getgid())
assert not any(caps.values()), caps
assert status["NoNewPrivs"].strip() == "1"
for line in open("/proc/self/mountinfo"):
    fields = line.split()
    if "rw" in fields[5].split(","):
        assert "nosuid" in fields[5].split(","), line
'''


@needs_bwrap
@pytest.mark.skipif(not IS_ROOT, reason="checks what viva does when it runs as root")
def test_code_runs_unprivileged_when_viva_is_root():
    r = run_eval_code(PRIVILEGE_CHECK, HISTORY)
    assert r.isolated and r.hit, r.reason


SETUID_ATTACK = r'''
import os, shutil
shutil.copy("/usr/bin/id", "id")
os.chmod("id", 0o4755)
os.mkdir("d")
os.chmod("d", 0o2777)
os.chmod(".", 0o777)
assert os.stat("id").st_mode & 0o4000
'''


def _check_setuid_left_nothing(wd: Path) -> None:
    # Since issue 35 the code works in a tmpfs copy of the workdir: the setuid copy, the setgid folder
    # and the chmod of the folder never reach the host at all.
    assert not (wd / "id").exists() and not (wd / "d").exists(), os.listdir(wd)
    assert stat.S_IMODE(os.stat(wd).st_mode) == 0o700


@needs_bwrap
def test_setuid_copy_is_stripped_as_root(tmp_path):
    wd = tmp_path / "work"
    wd.mkdir()
    r = run_eval_code(SETUID_ATTACK, HISTORY, workdir=wd)
    assert r.isolated and r.hit, r.reason
    _check_setuid_left_nothing(wd)
    if IS_ROOT:
        assert os.stat(wd).st_uid == 0  # given back to viva's user, not left to nobody


@needs_bwrap
@needs_user
def test_setuid_copy_is_stripped_as_a_normal_user():
    wd = user_dir()
    try:
        r = run_as_user(SETUID_ATTACK, wd)
        assert r["isolated"] and r["hit"], r["reason"]
        _check_setuid_left_nothing(wd)
    finally:
        shutil.rmtree(wd)


# -- 2. private work directories --------------------------------------------------------------------
def _case(tmp_path: Path) -> Path:
    data = tmp_path / "case"
    (data / "sub").mkdir(parents=True)
    (data / "data.txt").write_text("case data")
    (data / "sub" / "more.txt").write_text("more")
    return data


def test_work_dirs_are_private_random_and_kept(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    data = _case(tmp_path)
    wd = prepare_work_dir(data, home, 7)
    assert wd.parent.parent == home / "work" and wd.parent.name.startswith("session-7-")
    for level in (home / "work", wd.parent, wd):
        assert stat.S_IMODE(os.lstat(level).st_mode) == 0o700
    assert (wd / "data.txt").read_text() == "case data" and (wd / "sub" / "more.txt").read_text() == "more"
    assert prepare_work_dir(data, home, 7) == wd  # a resume finds the same directory
    (tmp_path / "home2").mkdir()
    other = prepare_work_dir(data, tmp_path / "home2", 7)
    assert other.parent.name != wd.parent.name  # not derived from the home or the session: mkdtemp's


def test_a_planted_work_folder_is_refused(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    target = tmp_path / "victim"
    target.mkdir()
    (home / "work").symlink_to(target)
    with pytest.raises(WorkDirError, match="symbolic link"):
        prepare_work_dir(_case(tmp_path), home, 1)
    assert list(target.iterdir()) == []


def test_swapped_symlinks_never_make_viva_write_outside(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    data = _case(tmp_path)
    victim = tmp_path / "authorized_keys"
    victim.write_text("the host's own")
    wd = prepare_work_dir(data, home, 3)
    # what eval_code did in issue 26: data.txt and sub/ swapped for links out of the directory
    (wd / "data.txt").unlink()
    (wd / "data.txt").symlink_to(victim)
    shutil.rmtree(wd / "sub")
    (wd / "sub").symlink_to(tmp_path)
    assert prepare_work_dir(data, home, 3) == wd  # the marker lies beside work/, out of eval_code's reach
    fresh = prepare_work_dir(data, home, 3, fresh=True)  # re-prepared: a new directory, never patched
    assert fresh != wd and not wd.parent.exists()
    assert victim.read_text() == "the host's own" and (fresh / "data.txt").read_text() == "case data"
    assert not (fresh / "data.txt").is_symlink()


def test_copy_refuses_symlinked_case_data(tmp_path):
    data = _case(tmp_path)
    secret = tmp_path / "secret"
    secret.write_text("host secret")
    (data / "leak.txt").symlink_to(secret)
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(WorkDirError, match="symbolic link"):
        copy_case_data(data, dest)
    assert not (dest / "leak.txt").exists()


def test_importer_refuses_a_symlinked_data_file(tmp_path):
    from engine.bench.importers import run_import
    from engine.bench.importers.base import ImportFormatError

    case = tmp_path / "cases" / "c1"
    case.mkdir(parents=True)
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$hash")
    (case / "data.csv").symlink_to(secret)
    (case / "case.yaml").write_text("task_description: read data.csv\ndata_files: [data.csv]\n"
                                    "scoring_points:\n  - score_point: reads it\n    weight: 1\n")
    home = tmp_path / "home"
    store = Store(home / "viva.db")
    with pytest.raises(ImportFormatError, match="symbolic link"):
        run_import(store, home, "taskweaver", tmp_path / "cases")
    assert store.one("SELECT COUNT(*) AS n FROM benchmarks")["n"] == 0
    assert not any("root:" in p.read_text() for p in home.rglob("*.csv"))


# -- 3 (store side). stored texts are capped --------------------------------------------------------
def test_huge_texts_are_stored_capped_with_a_marker(tmp_path):
    from engine.store.caps import (
        MAX_ANSWER_CHARS,
        MAX_EVENT_STRING_CHARS,
        MAX_RATIONALE_CHARS,
        MAX_TEXT_CHARS,
    )
    from engine.store.texts import get_text, put_text

    store = Store(tmp_path)
    huge = "x" * (MAX_TEXT_CHARS + 5000)
    tid = put_text(store, huge)
    kept = get_text(store, tid)
    assert kept.startswith("x" * MAX_TEXT_CHARS) and kept.endswith("[… truncated by viva: 5000 more characters not stored]")
    seq = store.append_event(None, "test.big", {"nested": [{"text": "y" * (MAX_EVENT_STRING_CHARS + 10)}]})
    stored = store.events(seq - 1)[0].payload["nested"][0]["text"]
    assert len(stored) < MAX_EVENT_STRING_CHARS + 100 and "10 more characters" in stored
    from engine.store.db import _clean

    assert "7 more" in _clean("r" * (MAX_RATIONALE_CHARS + 7), "verdicts", "rationale")
    assert "3 more" in _clean("a" * (MAX_ANSWER_CHARS + 3), "turns", "answer")
    assert _clean("short", "verdicts", "rationale") == "short"


# -- 5. parsers with limits -------------------------------------------------------------------------
def test_deep_json_is_one_error_with_the_line(tmp_path):
    from engine.bench.importers.base import ImportFormatError, read_jsonl

    f = tmp_path / "deep.jsonl"
    f.write_text('{"question": "ok"}\n' + '{"a":' * 200_000 + "1" + "}" * 200_000 + "\n")
    with pytest.raises(ImportFormatError, match=r"line 2.*nested more than 100"):
        list(read_jsonl(f))


def test_kb_build_on_deep_json_leaves_no_hidden_row(tmp_path):
    from engine.api import KnowledgeBaseError
    from engine.knowledge.kb import build_kb

    src = tmp_path / "src"
    src.mkdir()
    (src / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    store = Store(tmp_path / "home")
    with pytest.raises(KnowledgeBaseError, match="nested more than 100"):
        build_kb(store, tmp_path / "home", "k", [src])
    assert store.query("SELECT name FROM knowledge_bases") == []


BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8))


def test_yaml_bomb_is_refused_in_viva_yaml_and_a_case(tmp_path):
    from engine.bench.importers.base import ImportFormatError
    from engine.bench.importers.taskweaver import _load_yaml
    from engine.config import ConfigError, load_config

    cfg = tmp_path / "viva.yaml"
    cfg.write_text(BOMB)
    with pytest.raises(ConfigError, match=r"viva.yaml:\d+: .*aliases are expanded"):
        load_config(cfg)
    case = tmp_path / "case.yaml"
    case.write_text(BOMB)
    with pytest.raises(ImportFormatError, match="aliases are expanded"):
        _load_yaml(case)


# -- 6. redaction on every write path ---------------------------------------------------------------
def test_rubric_edit_and_note_are_redacted(tmp_path):
    from engine import redact
    from engine.bench.items import add_item, create_benchmark
    from engine.bench.rubric import create_rubric, edit_rubric

    key = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vX7zA"
    redact.register_secret(key)
    try:
        store = Store(tmp_path)
        bid = create_benchmark(store, "b", "manual")
        iid = add_item(store, bid, 1, protocol="rubric", question="q?")
        create_rubric(store, iid, [{"cid": "c1", "text": "states the fact", "weight": 1}], author="human")
        edit_rubric(store, iid, [{"op": "add", "text": f"mentions {key}", "weight": 1}], author="human",
                    note=f"added with {key}")
        dump = "\n".join(store.conn.iterdump())
        assert key not in dump
        assert "[REDACTED]" in dump
    finally:
        redact.clear()


# -- 4. homes that are damaged, full or read-only ---------------------------------------------------
def viva(home: Path, *args: str, wrap: list[str] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("VIVA_HOME", None)
    argv = [sys.executable, "-c", "from tui.cli import main; main()", "--home", str(home), *args]
    return subprocess.run([*(wrap or []), *argv], env=env, capture_output=True, text=True, timeout=300,
                          cwd=str(home.parent))


ITEM = {"format": "viva.item/1", "protocol": "rubric", "question": "What is 2+2?",
        "rubric": [{"cid": "c1", "text": "says 4", "kind": "point", "weight": 1}]}


def one_line_error(proc: subprocess.CompletedProcess, *words: str) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr[-1500:]
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("viva: ")]  # progress
    assert proc.returncode != 0 and len(lines) == 1, proc.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def _home_with_data(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    store = Store(home / "viva.db")
    from engine.bench.items import create_benchmark

    create_benchmark(store, "b", "manual")
    store.close()
    return home


COMMANDS = [("sessions",), ("bench", "list"), ("kb", "list"), ("report", "1"), ("resume", "run:1"),
            ("run", "--bench", "b", "--target", "python:my_agent:Agent", "--kernel", "offline"),
            ("rescore", "1"), ("bench", "export", "b"), ("kb", "build", "k", "."), ("tui",), ("review", "1")]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_truncated_database_is_one_line(tmp_path, command):
    home = _home_with_data(tmp_path)
    db = home / "viva.db"
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    for extra in ("viva.db-wal", "viva.db-shm"):
        (home / extra).unlink(missing_ok=True)
    proc = viva(home, *command)
    one_line_error(proc, str(db), "damaged", "integrity_check", "restore it from a copy")


def _bwrap_view(extra: list[str]) -> list[str]:
    return ["bwrap", "--dev-bind", "/", "/", *extra, "--"]


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap to mount a read-only or a tiny home")
def test_a_read_only_home_reads_and_refuses_writes(tmp_path):
    home = _home_with_data(tmp_path)
    ro = _bwrap_view(["--ro-bind", str(home), str(home)])
    listed = viva(home, "bench", "list", wrap=ro)
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr[-1500:]
    assert "b" in listed.stdout
    assert viva(home, "sessions", wrap=ro).returncode == 0
    src = tmp_path / "q.jsonl"
    src.write_text(json.dumps(ITEM) + "\n")
    proc = viva(home, "bench", "import", "jsonl", str(src), "--name", "new", wrap=ro)
    one_line_error(proc, "read-only", "viva can read this home but not write")


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap to mount a tiny home")
def test_a_full_disk_is_one_line(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    src = tmp_path / "big.jsonl"
    with src.open("w") as f:
        for i in range(4000):
            f.write(json.dumps({**ITEM, "question": f"Question {i} " + "pad " * 200}) + "\n")
    tiny = _bwrap_view(["--size", str(400 * 1024), "--tmpfs", str(home)])
    proc = viva(home, "bench", "import", "jsonl", str(src), "--name", "big", wrap=tiny)
    one_line_error(proc, "disk full", "free some space")


def test_sqlite_errors_are_classified():
    from engine.store.faults import DAMAGED, FULL, READ_ONLY, classify

    conn = sqlite3.connect(":memory:")
    conn.close()
    assert classify(sqlite3.DatabaseError("database disk image is malformed")) == DAMAGED
    assert classify(sqlite3.OperationalError("database or disk is full")) == FULL
    assert classify(sqlite3.OperationalError("attempt to write a readonly database")) == READ_ONLY
    assert classify(OSError(28, "No space left on device")) == FULL
    assert classify(ValueError("something else")) is None
