"""Judge–human agreement over reviewed verdicts of real sessions: the latest review wins, κ per
kind and per benchmark, and confirmations count as agreement."""

from __future__ import annotations

import pytest

from engine.config import Config
from engine.interview import control
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
from engine.metrics.sessions import agreement
from engine.runtime import Runtime
from tests.engine.interview_fixtures import make_bench, script_target_only


async def test_agreement_and_kappa_from_reviews(home, fake_openai):
    rt = Runtime(home=home, config=Config())
    script_target_only(fake_openai)
    make_bench(rt.store)
    run_id = plan_run(rt, RunRequest(bench="oxy", targets=[f"openai:t@{fake_openai.base_url}"], kernel="offline",
                                     policy="always-follow-up", turns=2))
    await execute_run(rt, run_id)
    sid = run_sessions(rt, run_id)[0]
    verdicts = {v["cid"]: bool(v["met"]) for v in rt.store.query(
        "SELECT v.cid, v.met FROM verdicts v JOIN turns t ON t.id = v.turn_id WHERE t.session_id = ? AND t.idx = 0",
        (sid,))}
    assert agreement(rt.store)["reviewed"] == 0 and agreement(rt.store)["agreement"] is None
    # c1 confirmed; c2 overridden then confirmed back (the latest review wins); c3 and c4 overridden
    control.override_verdict(rt.store, sid, 0, "c1", verdicts["c1"], "confirmed")
    control.override_verdict(rt.store, sid, 0, "c2", not verdicts["c2"], "no")
    control.override_verdict(rt.store, sid, 0, "c2", verdicts["c2"], "on second look, yes")
    control.override_verdict(rt.store, sid, 0, "c3", not verdicts["c3"], "no")
    control.override_verdict(rt.store, sid, 0, "c4", not verdicts["c4"], "no")
    a = agreement(rt.store, [sid])
    assert (a["reviewed"], a["agreed"]) == (4, 2) and a["agreement"] == pytest.approx(0.5)
    pairs = [(verdicts[c], verdicts[c] if c in ("c1", "c2") else not verdicts[c]) for c in ("c1", "c2", "c3", "c4")]
    from engine.metrics.agreement import agreement as pair_agreement

    assert a["overall"] == pair_agreement(pairs).as_dict()
    assert set(a["by_kind"]) == {"point", "deduction"} and a["by_kind"]["deduction"]["n"] == 1
    assert a["by_benchmark"]["oxy"]["n"] == 4
    rt.close()
