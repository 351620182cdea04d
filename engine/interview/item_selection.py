"""Adaptive item selection: ``viva run --items adaptive [--budget N] [--se S]`` (issue 28).

On a calibrated benchmark (``viva bench calibrate``, :mod:`engine.bench.calibrate`), each target is
examined one item at a time:

1. its ability starts at the calibration's prior (0, standard error 1);
2. the next item is one of the :data:`engine.metrics.irt.TOP_K` items with the most Fisher information at
   the current ability (an item's information is the sum of its scored units': they are taken as
   independent given the ability), drawn with a generator seeded by the run's seed and the target's
   position, so items are not all over-exposed and a run is reproducible;
3. the item runs as an ordinary session (its own run, through :func:`engine.interview.run.plan_run` and
   :func:`~engine.interview.run.execute_run`, so it is stored, shown and resumable like any other);
4. its units' responses (the rules of :mod:`engine.bench.calibrate`) update the EAP ability and its SE;
   With ``common`` = K, every K-th item (the K-th, 2K-th...) is instead the first item not yet asked of
   an order of the calibrated items shared by every target: a permutation drawn with the run's seed
   alone (the same for every target of the run, and for any run with the same seed). Such items sample
   the whole bank and are common to the targets compared; ``bench/efficiency.py`` measured K = 3
   against pure information on NQ301 (docs/calibration.md);
5. it stops when the SE is at most ``se``, when ``budget`` items were asked, or when no calibrated item is
   left. A failed session's item counts against the budget and gives no response.

The result per target: the trace (item, session, responses, ability and SE after it), the final
ability, SE, 95% interval, and the expected Score on the full benchmark (stored scores of the items
asked in this examination, the ability's expected Score for the others).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from engine.bench.calibrate import Unit, expected_item_scores, get_calibration, response_matrix
from engine.bench.model import BenchError
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
from engine.metrics import irt
from engine.runtime import Runtime

StepCallback = Callable[[str, dict[str, Any]], None]


async def run_adaptive_items(runtime: Runtime, request: RunRequest, budget: int | None = None, se: float | None = None,
                             on_step: StepCallback | None = None, common: int | None = None) -> dict[str, Any]:
    """Examine every target of ``request`` adaptively (module docstring); ``request.items`` must be None.

    Raises:
        BenchError: the benchmark is not calibrated, or ``budget`` / ``se`` / ``common`` is not positive.
    """
    store = runtime.store
    if request.items:
        raise BenchError("--items adaptive chooses the items itself: give no item ids")
    if budget is not None and budget < 1:
        raise BenchError(f"--budget must be at least 1, got {budget}")
    if se is not None and se <= 0:
        raise BenchError(f"--se must be positive, got {se}")
    if common is not None and common < 1:
        raise BenchError(f"--common must be at least 1, got {common}")
    calibration = get_calibration(store, request.bench)
    if calibration is None:
        raise BenchError(f"benchmark {request.bench!r} is not calibrated (for the rubrics in force): "
                         f"run `viva bench calibrate {request.bench}` first")
    entries = [u for u in calibration["units"] if "b" in u]
    units = [Unit(u["item_id"], u["cid"], u["kind"], u["weight"], u["version_id"]) for u in entries]
    a = np.array([u["a"] for u in entries])
    b = np.array([u["b"] for u in entries])
    items = sorted({u.item_id for u in units})
    of_item = {item: np.array([k for k, u in enumerate(units) if u.item_id == item]) for item in items}
    limit = min(budget or len(items), len(items))
    seed = request.seed or 0
    shared = [items[k] for k in np.random.default_rng([seed, 1, 1]).permutation(len(items))]
    out: dict[str, Any] = {"bench": request.bench, "model": calibration["model"], "budget": limit, "se": se,
                           "seed": seed, "items": len(items), "common": common, "targets": {}}
    for position, target in enumerate(request.targets):
        rng = np.random.default_rng([seed, position])
        responses = np.full(len(units), np.nan)
        asked: list[int] = []
        scores: dict[int, float] = {}
        theta, sd = irt.ability(responses, a, b)
        steps: list[dict[str, Any]] = []
        stopped = "items"
        while True:
            if se is not None and sd <= se:
                stopped = "se"
                break
            if len(asked) >= limit:
                stopped = "budget" if limit < len(items) else "items"
                break
            if common and (len(asked) + 1) % common == 0:
                item, chosen = next(i for i in shared if i not in asked), "common"
            else:
                info = irt.information(theta, a, b)
                per_item = np.array([info[of_item[item]].sum() for item in items])
                available = np.array([item not in asked for item in items])
                item, chosen = items[irt.pick(per_item, available, rng)], "information"
            asked.append(item)
            run_id = plan_run(runtime, replace(request, targets=[target], items=[item]))
            errors = await execute_run(runtime, run_id)
            session = run_sessions(runtime, run_id)[0]
            step: dict[str, Any] = {"item": item, "chosen": chosen, "session": session, "error": errors.get(session)}
            if not step["error"]:
                _targets, matrix, _used, item_scores = response_matrix(store, [units[k] for k in of_item[item]])
                if target in _targets:
                    row = matrix[_targets.index(target)]
                    responses[of_item[item]] = row
                    step["right"] = [None if np.isnan(x) else int(x) for x in row]
                    if item in item_scores[target]:
                        scores[item] = item_scores[target][item]
            theta, sd = irt.ability(responses, a, b)
            step.update(ability=round(theta, 4), se=round(sd, 4))
            steps.append(step)
            if on_step is not None:
                on_step(target, step)
        expected = expected_item_scores(irt.posterior(responses, a, b), entries)
        per_item_score = [scores.get(item, expected.get(item)) for item in items]
        known = [s for s in per_item_score if s is not None]
        out["targets"][target] = {
            "steps": steps, "asked": len(asked), "stopped": stopped, "ability": round(theta, 4), "se": round(sd, 4),
            "low": round(theta - 1.96 * sd, 4), "high": round(theta + 1.96 * sd, 4),
            "expected_score": round(sum(known) / len(known), 2) if known else None}
    return out
