"""Issue 35 in the app: a target's answer holding every control sequence, reviewed in a real terminal
(tmux). The screen shows the markers; the bytes the app wrote to the terminal (recorded with
``pipe-pane``) hold none of the target's sequences. Skipped without tmux."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.store import Store
from tests.engine.interview_fixtures import make_bench
from tests.engine.test_hardening_round2_cli import env_for

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
ROOT = Path(__file__).resolve().parents[2]


def _screen(session: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout


def test_review_shows_markers_and_emits_none_of_the_targets_sequences(tmp_path):
    home = tmp_path / "home"
    store = Store(home / "viva.db")
    make_bench(store)
    store.close()
    env = env_for(tmp_path)
    ran = subprocess.run([sys.executable, "-m", "tui", "--home", str(home), "run", "--bench", "oxy", "--target",
                          "python:tests.engine.agents:HostileAgent", "--kernel", "offline", "--turns", "2", "--quiet"],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr[-2000:]
    session = f"viva-termsafe-{os.getpid()}"
    raw = tmp_path / "pane.bin"
    command = f"cd {tmp_path} && PYTHONPATH={ROOT} {sys.executable} -m tui --home {home} review 1; sleep 60"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "150", "-y", "40", command], check=True)
    try:
        subprocess.run(["tmux", "resize-window", "-t", session, "-x", "220", "-y", "50"], capture_output=True)
        subprocess.run(["tmux", "pipe-pane", "-o", "-t", session, f"cat >> {raw}"], check=True)
        deadline = time.monotonic() + 120  # a hang guard, not a timing check
        screen = ""
        while time.monotonic() < deadline:
            screen = _screen(session)
            if "␛]52;c;" in screen and "tag" in screen:
                break
            time.sleep(0.5)
        # the answer wraps anywhere in the left pane: join its lines (the right panes cut off)
        flat = "".join(line[3:].split("│")[0].strip() for line in screen.splitlines() if line.startswith("│ ▌"))
        assert "␛]52;c;ZWNobyBwd25lZA==␇␛]0;owned" in flat, screen
        assert "\\u009b31m" in flat and "\\u202eevil\\u202c" in flat and "zero\\u200bwidth" in flat, screen
        subprocess.run(["tmux", "send-keys", "-t", session, "C-q"], check=True)
        time.sleep(1)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    data = raw.read_bytes()
    assert len(data) > 1000, "nothing was recorded"
    for seq in (b"\x1b]52;c;ZWNo", b"\x1b]0;owned", b"\x1b]8;;https://evil", b"\x1b[32mScore", b"\x1bc",
                b"\xc2\x9b31m", b"\xc2\x9d0;c1", b"\xe2\x80\xae", b"\xe2\x81\xa6", b"\xe2\x80\x8b", b"\xf3\xa0\x81\x81"):
        assert seq not in data, seq
