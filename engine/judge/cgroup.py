"""One memory cap for all of an eval_code item's processes: a cgroup where viva can create one.

RLIMIT_AS bounds each process, not their sum: 8 children of 420 MB each took 3.6 GB (issue 35). A
memory cgroup bounds the sum. :func:`find_parent` looks, once per process, for a place where viva
may create one:

- cgroup v2: the unified hierarchy with the ``memory`` controller, under viva's own cgroup (the
  controller must be enabled in its ``cgroup.subtree_control``, as systemd does for a delegated
  user slice) or, as root, at the hierarchy's root;
- cgroup v1: the ``memory`` hierarchy, under viva's own cgroup (containers often have only this).

:class:`ItemCgroup` makes ``viva-eval-<pid>-<random>`` there with ``memory.max`` (v2) or
``memory.limit_in_bytes`` (v1) and swap off, the sandbox is started inside it (through
:func:`enter_command`, so every process the code forks is in it from its first instruction), and
afterwards it says whether the kernel's OOM killer acted in it (the "memory limit" reason) and is
removed. A folder left by a killed viva is removed by :func:`sweep` at the next start.

Where none can be made (no cgroup file system, not writable: a normal user without a delegated
slice, or a read-only ``/sys/fs/cgroup``), the caller uses the fallback of
:func:`engine.judge.sandbox.memory_plan`.
"""

from __future__ import annotations

import functools
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from engine.store.lease import pid_alive

PREFIX = "viva-eval-"
_NAME = re.compile(rf"{PREFIX}(\d+)-[0-9a-f]+")


@dataclass(frozen=True)
class Parent:
    """Where viva creates its cgroups: ``version`` 1 or 2 and the folder."""

    version: int
    path: Path


def _mounts() -> list[tuple[str, str, str]]:
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
            rows = [line.split() for line in f]
    except OSError:
        return []
    return [(r[1], r[2], r[3]) for r in rows if len(r) >= 4]


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per hierarchy: ``""`` for v2, each controller's name for v1."""
    found: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) == 3:
                    for controller in (parts[1].split(",") if parts[1] else [""]):
                        found[controller] = parts[2]
    except OSError:
        pass
    return found


def _writable_child(parent: Path, version: int) -> bool:
    """Try to make (and remove) a cgroup below ``parent`` with a memory limit file."""
    probe = parent / f"{PREFIX}probe-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        limit = probe / ("memory.max" if version == 2 else "memory.limit_in_bytes")
        if not limit.exists():
            return False
        limit.write_text(str(256 * 1024 * 1024))
        return True
    except OSError:
        return False
    finally:
        try:
            probe.rmdir()
        except OSError:
            pass


@functools.lru_cache(maxsize=1)
def find_parent() -> Parent | None:
    """Where viva may create a memory cgroup (probed once per process), or None."""
    if not os.path.isdir("/proc/self"):
        return None
    own = _own_paths()
    candidates: list[Parent] = []
    for mountpoint, fstype, options in _mounts():
        if fstype == "cgroup2":
            try:
                controllers = Path(mountpoint, "cgroup.controllers").read_text().split()
            except OSError:
                continue
            if "memory" not in controllers:
                continue
            mine = Path(mountpoint + own.get("", "/"))
            candidates += [Parent(2, mine), Parent(2, Path(mountpoint))]
        elif fstype == "cgroup" and "memory" in options.split(","):
            mine = Path(mountpoint + own.get("memory", "/"))
            candidates += [Parent(1, mine), Parent(1, Path(mountpoint))]
    seen: set[Path] = set()
    for c in candidates:
        if c.path in seen or not c.path.is_dir():
            continue
        seen.add(c.path)
        if _writable_child(c.path, c.version):
            return c
    return None


class ItemCgroup:
    """The cgroup of one eval_code run (see the module docstring); a context manager."""

    def __init__(self, parent: Parent, limit_mb: int):
        self.parent = parent
        self.limit = limit_mb * 1024 * 1024
        self.path = parent.path / f"{PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        self.path.mkdir(mode=0o755)
        try:
            if parent.version == 2:
                (self.path / "memory.max").write_text(str(self.limit))
                self._try_write("memory.swap.max", "0")
                self._try_write("memory.oom.group", "1")  # an OOM kills the whole item, not one child
            else:
                (self.path / "memory.limit_in_bytes").write_text(str(self.limit))
                self._try_write("memory.memsw.limit_in_bytes", str(self.limit))
        except OSError:
            self.remove()
            raise

    def _try_write(self, name: str, value: str) -> None:
        try:
            (self.path / name).write_text(value)
        except OSError:
            pass

    @property
    def procs(self) -> str:
        """The file a process writes its pid to, to join this cgroup."""
        return str(self.path / "cgroup.procs")

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process here for the memory limit."""
        try:
            if self.parent.version == 2:
                text = (self.path / "memory.events").read_text()
                m = re.search(r"^oom_kill (\d+)", text, re.M)
                return bool(m and int(m.group(1)) > 0)
            text = (self.path / "memory.oom_control").read_text()
            m = re.search(r"^oom_kill (\d+)", text, re.M)
            if m is not None:
                return int(m.group(1)) > 0
            return int((self.path / "memory.failcnt").read_text().strip() or 0) > 0
        except (OSError, ValueError):
            return False

    def remove(self, wait: float = 2.0) -> None:
        """Remove the cgroup once its processes are gone (they were killed; the kernel may take a moment)."""
        until = time.monotonic() + wait
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() >= until:
                    return  # left for sweep() at the next start
                time.sleep(0.01)

    def __enter__(self) -> ItemCgroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def enter_command(procs: str) -> list[str]:
    """A command prefix that moves itself into the cgroup whose ``cgroup.procs`` is ``procs``, then
    runs the rest of the command line (``exec``), so nothing it starts is ever outside the cgroup."""
    return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', procs]


    return True


def sweep() -> int:
    """Remove the cgroups a killed viva left (``viva-eval-<pid>-…`` of a pid that is gone); how many."""
    parent = find_parent()
    if parent is None:
        return 0
    removed = 0
    try:
        names = os.listdir(parent.path)
    except OSError:
        return 0
    for name in names:
        m = _NAME.fullmatch(name)
        if not m or pid_alive(int(m.group(1))):
            continue
        path = parent.path / name
        until = time.monotonic() + 2.0
        while True:  # what a killed run left may still be dying: kill it, then remove the cgroup
            try:
                for pid in (path / "cgroup.procs").read_text().split():
                    try:
                        os.kill(int(pid), 9)
                    except (OSError, ValueError):
                        pass
                path.rmdir()
                removed += 1
                break
            except OSError:
                if time.monotonic() >= until:
                    break
                time.sleep(0.02)
    return removed
