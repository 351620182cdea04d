"""How many targets a calibration needs before its abilities mean anything (issue 36).

``viva bench calibrate`` fitted item parameters on 2 targets and reported an ability SE of 0.01. This
simulation measures, for a calibration on N targets (every target answers every item, so each item
has N responses), what the fitted abilities are worth:

- true abilities ``theta ~ N(0, 1)`` (the scale the calibration assumes), difficulties
  ``b ~ N(0, 1)``, discriminations ``a ~ lognormal(0, 0.3)``; responses drawn from the 2PL model;
- the items are calibrated with :func:`engine.metrics.irt.calibrate` (``model="auto"``: Rasch below
  ``MIN_TARGETS_2PL``), each target's EAP ability and SE taken with :func:`engine.metrics.irt.ability`
  from its own responses, exactly as ``target_abilities`` does;
- per N, over ``--reps`` seeded repetitions: the mean **reported SE**, the **actual error** (RMS of
  ability - true ability), their ratio (actual / reported: 1 is an honest SE, 5 means the interval is
  5 times too narrow), the **coverage** of the reported 95% interval (share of targets whose true
  ability lies inside it), the **rank error** (share of target pairs put in the wrong order) and the
  **difficulty error** (RMS of b - true b over the items, the responses-per-item side).

Run: ``python -m bench.calibration_minimum [--items 50] [--reps 40] [--targets 2,3,4,5,6,8,10,15,20,30]``.
Deterministic for the seeds. The figures and the minimum they justify are in docs/calibration-minimum.md.
"""

from __future__ import annotations

import argparse
from itertools import combinations

import numpy as np

from engine.metrics import irt


def simulate(n_targets: int, n_items: int, seed: int) -> dict[str, float]:
    """One calibration on ``n_targets`` simulated targets: its errors (see the module docstring)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.0, n_targets)
    b = rng.normal(0.0, 1.0, n_items)
    a = np.exp(rng.normal(0.0, 0.3, n_items))
    responses = (rng.random((n_targets, n_items)) < irt.p_correct(theta, a, b)).astype(float)
    fit = irt.calibrate(responses, model="auto")
    est = np.array([irt.ability(responses[i], fit.a, fit.b) for i in range(n_targets)])
    hat, se = est[:, 0], est[:, 1]
    pairs = list(combinations(range(n_targets), 2))
    wrong = sum(1 for i, j in pairs if (hat[i] - hat[j]) * (theta[i] - theta[j]) < 0)
    return {"se": float(se.mean()), "error": float(np.sqrt(((hat - theta) ** 2).mean())),
            "covered": float((np.abs(hat - theta) <= 1.96 * se).mean()), "rank_error": wrong / len(pairs),
            "b_error": float(np.sqrt(((fit.b - b) ** 2).mean())), "b_order": spearman(fit.b, b)}


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation (no ties in continuous draws; a tie in ``x`` gets the order of ``y``)."""
    rx = np.argsort(np.argsort(x, kind="stable"))
    ry = np.argsort(np.argsort(y, kind="stable"))
    return float(np.corrcoef(rx, ry)[0, 1])


def study(targets: list[int], n_items: int, reps: int) -> list[dict[str, float]]:
    """The mean of :func:`simulate`'s figures over ``reps`` seeds for every number of targets."""
    rows = []
    for n in targets:
        runs = [simulate(n, n_items, seed) for seed in range(reps)]
        row = {k: float(np.mean([r[k] for r in runs])) for k in runs[0]}
        row["targets"] = n
        row["ratio"] = row["error"] / row["se"] if row["se"] > 0 else float("inf")
        rows.append(row)
    return rows


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--targets", default="2,3,4,5,6,8,10,15,20,30,50")
    args = parser.parse_args()
    targets = [int(t) for t in args.targets.split(",")]
    print(f"{args.items} items, every target answers every item (responses per item = targets); "
          f"{args.reps} seeds per row")
    print(f"{'targets':>7}  {'reported SE':>11}  {'actual error':>12}  {'actual/SE':>9}  {'95% covers':>10}  "
          f"{'pairs misordered':>16}  {'b error':>7}  {'b order':>7}")
    for r in study(targets, args.items, args.reps):
        print(f"{r['targets']:>7}  {r['se']:>11.3f}  {r['error']:>12.3f}  {r['ratio']:>9.2f}  {r['covered']:>10.2f}  "
              f"{r['rank_error']:>16.3f}  {r['b_error']:>7.3f}  {r['b_order']:>7.2f}")


if __name__ == "__main__":
    main()
