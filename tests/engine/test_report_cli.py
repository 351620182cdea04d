"""``viva rescore`` after a rubric edit from the command line (stored answers, the target never asked
again) and ``viva report`` for sessions and runs, through click's CliRunner on a real store."""

from __future__ import annotations

import csv
import io
import json
import os

from click.testing import CliRunner

from engine.bench.rubric import current_rubric
from engine.metrics.scoring import turn_score
from engine.store import Store
from tests.engine.report_fixtures import make_reported_run
from tui.cli import main


def viva(home, *args: str):
    return CliRunner().invoke(main, ["--home", str(home), *args], catch_exceptions=False)


def state(home) -> dict[int, dict]:
    store = Store(home / "viva.db")
    try:
        rows = store.query("SELECT id, item_id, rubric_version_id, score FROM sessions ORDER BY id")
        return {r["id"]: r for r in rows}
    finally:
        store.close()


def targets_asked(fake) -> int:
    return sum(1 for r in fake.chat_requests() if r.body.get("stream"))


def test_rescore_a_run_after_a_cli_rubric_edit(home, fake_openai):
    run = make_reported_run(home, fake_openai)
    store = run.runtime.store
    first_item, second_item = run.items
    before = state(home)
    asked, judged = targets_asked(fake_openai), fake_openai.count()
    edit = viva(home, "bench", "rubric", "edit", str(second_item), '{"op": "reweight", "cid": "c1", "weight": 5}',
                "--note", "c1 counts more")
    assert edit.exit_code == 0, edit.output
    v2 = current_rubric(store, second_item)
    assert v2.version == 2

    result = viva(home, "rescore", f"run:{run.run_id}")
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == len(run.sessions)
    after = state(home)
    for sid in run.sessions:
        item = after[sid]["item_id"]
        assert after[sid]["rubric_version_id"] == current_rubric(store, item).id
        if before[sid]["rubric_version_id"] == after[sid]["rubric_version_id"]:
            assert f"session {sid}: already scores with rubric v2" in result.output  # session 1: re-scored before
        else:
            assert f"session {sid}: rubric v1 → v2; Score" in result.output
    # the new weights are what the stored score follows: 100 × the last turn's weighted score
    rescored = [s for s in run.sessions if after[s]["item_id"] == second_item]
    for sid in rescored:
        last = store.one("SELECT id, score FROM turns WHERE session_id = ? ORDER BY idx DESC LIMIT 1", (sid,))
        met = {r["cid"]: bool(r["met"]) for r in store.query(
            "SELECT cid, met FROM verdicts WHERE turn_id = ? AND rubric_version_id = ? ORDER BY id", (last["id"], v2.id))}
        assert last["score"] == turn_score(v2.criteria, met) and after[sid]["score"] == 100 * last["score"]
    assert targets_asked(fake_openai) == asked, "re-scoring asked the target"
    assert fake_openai.count() > judged, "re-scoring re-judged the stored answers"

    # back to version 1: the scores are the original ones again
    back = viva(home, "rescore", str(rescored[0]), "--rubric-version", "1", "--json")
    assert back.exit_code == 0, back.output
    out = json.loads(back.output)
    assert out["session"] == rescored[0] and out["sessions"][0]["done"] == "rescored"
    assert state(home)[rescored[0]]["score"] == before[rescored[0]]["score"] == out["sessions"][0]["score"]

    missing = viva(home, "rescore", str(rescored[0]), "--rubric-version", "9")
    assert missing.exit_code == 1
    assert f"item {second_item}'s rubric has no version 9 (it has 1, 2)" in missing.output
    assert state(home)[rescored[0]]["rubric_version_id"] != v2.id  # nothing changed

    # a live session takes the version at its next step: the switch is queued for its runner
    live = run.sessions[-1]
    store.update("sessions", live, {"status": "running", "pid": os.getpid()})
    queued = viva(home, "rescore", str(live), "--rubric-version", "1", "--json")
    assert json.loads(queued.output)["sessions"][0]["done"] == "queued"
    assert store.one("SELECT payload FROM events WHERE session_id = ? AND kind = 'control.rubric'", (live,))
    assert targets_asked(fake_openai) == asked
    assert viva(home, "rescore", "run:77").exit_code == 1
    assert viva(home, "rescore", "sessions").exit_code == 2
    run.runtime.close()


def test_report_command_for_sessions_and_runs(home, fake_openai):
    run = make_reported_run(home, fake_openai)
    saved = viva(home, "report", f"run:{run.run_id}", "--format", "html", "--save")
    assert saved.exit_code == 0
    path = home / "exports" / f"viva-run-{run.run_id}.html"
    assert path.exists() and f"wrote {path.resolve()}" in saved.output
    assert "<svg" in path.read_text(encoding="utf-8")
    text = viva(home, "report", str(run.sessions[0]), "--format", "csv").stdout_bytes.decode("utf-8")
    assert text.endswith("\r\n") and not text.endswith("\r\n\r\n")
    assert len(list(csv.reader(io.StringIO(text, newline="")))) == 1 + 4
    out = home / "s.csv"
    assert viva(home, "report", str(run.sessions[0]), "--format", "csv", "--out", str(out)).exit_code == 0
    assert out.read_bytes() == text.encode("utf-8")  # byte for byte: no translated or extra line ends
    doc = json.loads(viva(home, "report", f"run:{run.run_id}", "--format", "json").output)
    assert doc["format"] == "viva-run" and len(doc["leaderboard"]) == 2
    assert viva(home, "report", "99").exit_code == 1 and "session 99 does not exist" in viva(home, "report", "99").output
    assert viva(home, "report", "yesterday").exit_code == 2
    run.runtime.close()
