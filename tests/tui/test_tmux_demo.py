"""The installed ``viva demo`` in a real terminal (tmux): the live screen shows its three regions on
the reference target's session first (the demo runs 4 items for 3 targets: 12 sessions), and ctrl+q quits
cleanly, leaving the sessions finished or recorded as interrupted (resumable), and no model server.

Skipped when tmux or the installed ``viva`` console script is missing.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

VIVA = shutil.which("viva") or str(Path(sys.executable).with_name("viva"))

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None or not Path(VIVA).exists(),
                                reason="needs tmux and the installed viva console script")


def capture(session: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout


def wait_screen(session: str, needles: list[str], timeout: float) -> str:
    """Poll the pane until every needle is on it (a hang guard; no timing is asserted)."""
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = capture(session)
        if all(n in screen for n in needles):
            return screen
        time.sleep(0.5)
    raise AssertionError(f"never saw {needles} on the screen; last screen:\n{screen}")


def test_viva_demo_shows_the_three_regions_and_quits(tmp_path):
    session = f"viva-demo-test-{os.getpid()}"
    home = tmp_path / "home"
    command = f"cd {tmp_path} && {VIVA} --home {home} demo; echo VIVA-EXITED $?; sleep 60"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "40", command], check=True)
    try:
        screen = wait_screen(session, ["Interview", "Rubric checklist", "Metrics", "session 1"], timeout=300)
        assert "kernel offline" in screen and "target kb:demo" in screen and "session 1 of 12" in screen
        lines = screen.splitlines()
        regions = next(line for line in lines if "Interview" in line and "Rubric checklist" in line)
        assert regions.index("Interview") < regions.index("Rubric checklist"), "interview left, checklist right"
        assert any("Metrics" in line for line in lines[lines.index(regions) + 1:]), "metrics below the checklist"
        subprocess.run(["tmux", "send-keys", "-t", session, "C-q"], check=True)
        wait_screen(session, ["VIVA-EXITED 0"], timeout=120)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    with sqlite3.connect(home / "viva.db") as db:
        statuses = [r[0] for r in db.execute("SELECT status FROM sessions ORDER BY id")]
    assert len(statuses) == 12 and set(statuses) <= {"finished", "interrupted", "created"}
    run = home / "run"
    assert not run.exists() or not list(run.glob("llama-server-*.json")), "a model server outlived viva"
