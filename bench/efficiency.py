"""Calibrated items and adaptive selection against random subsets, on a real response matrix (issue 28).

The matrix: ``../shared/data/nq301/nq301_judged.jsonl``, the human judgements of the answers of 12
open-domain QA systems to 301 Natural Questions (Kamalloo et al., ACL 2023; see shared/data/SOURCES.md).
Each system in turn is held out: the items are calibrated (:func:`engine.metrics.irt.calibrate`,
``model="auto"``: Rasch, since 11 targets are fewer than ``MIN_TARGETS_2PL``) on the other 11 systems'
responses, and the held-out system is examined at budgets of 5%, 10%, 20% and 33% of the 301 items:

- **adaptive**: from ability 0, the next item is :func:`engine.metrics.irt.next_item` (the most
  informative at the current EAP ability, drawn among the 5 best with the seed's generator); the
  estimate is :func:`engine.metrics.irt.expected_accuracy` (asked items as answered, the others by
  their probability over the ability's posterior);
- **random**: a random subset of the same size (the seed's generator), estimated by its share right
  (what a run on a sample of the items reports today);
- **random+IRT**: the same random subset, estimated as the adaptive one is (separates what the
  selection gains from what the estimator gains).

A system is only asked items it answered (DPR answered 292, EMDR2 274; the others 300 or 301); its true
accuracy is its share right over the items it answered. For each budget, method and seed, the 12
estimates give a ranking: Kendall's tau-b against the ranking by true accuracy (tau-b: two systems tie
there) and the mean absolute error of the accuracy estimates. The table gives the mean and standard
deviation of both over the seeds (``--seeds``, default 100: seeds 0..99). Deterministic for the seeds.

Run: ``python bench/efficiency.py [--data PATH] [--seeds 100] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # before bench/, whose engine.py would shadow the package

from engine.metrics import irt  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "nq301" / "nq301_judged.jsonl"
BUDGETS = (0.05, 0.10, 0.20, 0.33)
METHODS = ("adaptive", "random", "random+IRT")


def load_matrix(path: str | Path = DATA) -> tuple[list[str], list[str], np.ndarray]:
    """(systems, questions, responses [systems, questions] of 1/0, NaN where a system has no answer)."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                rows.append((row["model"], row["question"], row["human"]))
            except (json.JSONDecodeError, KeyError) as exc:
                raise SystemExit(f"{path}:{n}: not a judged answer ({exc})") from None
    systems = sorted({m for m, _, _ in rows})
    questions = sorted({q for _, q, _ in rows})
    s_idx = {s: i for i, s in enumerate(systems)}
    q_idx = {q: i for i, q in enumerate(questions)}
    matrix = np.full((len(systems), len(questions)), np.nan)
    for model, question, human in rows:
        if human is not None:
            matrix[s_idx[model], q_idx[question]] = 1.0 if human else 0.0
    return systems, questions, matrix


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b of two rankings (ties allowed), by counting pairs: (concordant - discordant) /
    sqrt((pairs - ties in x) (pairs - ties in y)). NaN when either ranking is all ties."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    i, j = np.triu_indices(len(x), k=1)
    dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    n0 = len(i)
    tx, ty = int((dx == 0).sum()), int((dy == 0).sum())
    denom = np.sqrt(float(n0 - tx) * float(n0 - ty))
    return float((dx * dy).sum() / denom) if denom else float("nan")


def examine(responses: np.ndarray, a: np.ndarray, b: np.ndarray, sizes: list[int], seed: int) -> dict[str, dict[int, float]]:
    """One held-out system at every budget in ``sizes`` with one seed: estimates by method and size.

    ``responses`` holds only the items the system answered; the runs to each size share their prefix
    (the adaptive run to 99 items asks at 15 what the run to 15 asks), so one run per seed serves all sizes.
    """
    n = len(responses)
    out: dict[str, dict[int, float]] = {m: {} for m in METHODS}
    rng = np.random.default_rng([seed, 1])
    asked = np.full(n, np.nan)
    available = np.ones(n, bool)
    theta = 0.0
    for k in range(1, max(sizes) + 1):
        item = irt.next_item(theta, a, b, available, rng)
        available[item] = False
        asked[item] = responses[item]
        theta, _se = irt.ability(asked, a, b)
        if k in sizes:
            out["adaptive"][k] = irt.expected_accuracy(asked, a, b)
    order = np.random.default_rng([seed, 2]).permutation(n)
    for k in sizes:
        subset = np.full(n, np.nan)
        subset[order[:k]] = responses[order[:k]]
        out["random"][k] = float(np.nanmean(subset))
        out["random+IRT"][k] = irt.expected_accuracy(subset, a, b)
    return out


def run(path: str | Path = DATA, seeds: int = 100, budgets: tuple[float, ...] = BUDGETS) -> dict[str, Any]:
    """The leave-one-system-out study (module docstring); returns the table and what it was run on."""
    systems, questions, matrix = load_matrix(path)
    sizes = [round(f * len(questions)) for f in budgets]
    truth = np.array([np.nanmean(row) for row in matrix])
    estimates: dict[tuple[str, int, int], np.ndarray] = defaultdict(lambda: np.full(len(systems), np.nan))
    models = set()
    for h in range(len(systems)):
        others = np.delete(matrix, h, axis=0)
        calibration = irt.calibrate(others, model="auto")
        models.add(calibration.model)
        answered = ~np.isnan(matrix[h])
        a, b, responses = calibration.a[answered], calibration.b[answered], matrix[h][answered]
        for seed in range(seeds):
            for method, by_size in examine(responses, a, b, sizes, seed).items():
                for k, value in by_size.items():
                    estimates[(method, k, seed)][h] = value
    table = []
    for f, k in zip(budgets, sizes, strict=True):
        for method in METHODS:
            taus = [kendall_tau_b(estimates[(method, k, s)], truth) for s in range(seeds)]
            errors = [float(np.abs(estimates[(method, k, s)] - truth).mean()) for s in range(seeds)]
            table.append({"budget": f, "items": k, "method": method,
                          "tau_mean": statistics.fmean(taus), "tau_sd": statistics.pstdev(taus),
                          "mae_mean": statistics.fmean(errors), "mae_sd": statistics.pstdev(errors)})
    return {"data": str(path), "systems": systems, "questions": len(questions), "seeds": seeds,
            "model": sorted(models), "true_accuracy": dict(zip(systems, truth.round(4).tolist(), strict=True)),
            "table": table}


def format_table(result: dict[str, Any]) -> str:
    """The table as text."""
    lines = [f"{len(result['systems'])} systems x {result['questions']} questions, each held out in turn "
             f"(calibration: {', '.join(result['model'])} on the other {len(result['systems']) - 1}); "
             f"mean ± sd over {result['seeds']} seeds",
             f"{'budget':>7} {'items':>5}  {'method':<11} {'Kendall tau-b':>16} {'accuracy MAE':>16}"]
    for row in result["table"]:
        lines.append(f"{row['budget']:>7.0%} {row['items']:>5}  {row['method']:<11} "
                     f"{row['tau_mean']:>8.3f} ± {row['tau_sd']:.3f}   {row['mae_mean']:>8.4f} ± {row['mae_sd']:.4f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not Path(args.data).is_file():
        raise SystemExit(f"{args.data}: not found (the NQ301 matrix lives in shared/data/nq301/)")
    result = run(args.data, args.seeds)
    print(json.dumps(result, indent=1) if args.json else format_table(result))


if __name__ == "__main__":
    main()
