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
- **adaptive by θ**: the same run, ranked by its EAP ability instead of the expected accuracy (a
  ranking only: no accuracy error); **adaptive+common by θ** likewise;
- **adaptive+common**: as adaptive, but every :data:`COMMON_EVERY`-th item (the 3rd, 6th...) is the
  first not yet asked of the seed's common order below (``viva run --items adaptive --common 3``);
- **stratified+IRT**: the items sorted by calibrated difficulty and cut into k equal strata, one
  item drawn from each (the seed's generator), estimated as the adaptive one is;
- **random**: a random subset of the same size, estimated by its share right (what a run on a sample
  of the items reports today). One order of all the items per seed (the seed's generator), shared by
  every system: a system's subset is the first k items of that order it answered, so the systems are
  compared on common items, as a fixed sample of a benchmark is used for every model;
- **random+IRT**: the same random subset, estimated as the adaptive one is (separates what the
  selection gains from what the estimator gains).

With the study, :func:`ceiling` measures how far the full-bank ranking can be recovered from part of
the bank with no model at all (random subsets' plain share right, split halves, a bootstrap of the
bank), and ``--models`` compares Rasch and 2PL by held-out log-loss (:func:`model_comparison`,
:func:`threshold_study`).

A system is only asked items it answered (DPR answered 292, EMDR2 274; the others 300 or 301); its true
accuracy is its share right over the items it answered. For each budget, method and seed, the 12
estimates give a ranking: Kendall's tau-b against the ranking by true accuracy (tau-b: two systems tie
there) and the mean absolute error of the accuracy estimates. The table gives the mean and standard
deviation of both over the seeds (``--seeds``, default 100: seeds 0..99). Deterministic for the seeds.

The second matrix (``--engine MEDQA_JSONL``): the 12 targets of known ability of
``bench/efficiency_targets.py`` (abilities -1.5 to 1.5; each question has a hidden difficulty) are
examined by the real engine (offline kernel, the ``graded`` protocol of a MedQA import) on every item;
their responses are read back from the store by the calibration's own rules
(:func:`engine.bench.calibrate.response_matrix`), and the same study runs on that matrix.

Run: ``python bench/efficiency.py [--data PATH | --engine MEDQA_JSONL] [--seeds 100] [--json]``, or
``python bench/efficiency.py --data PATH --models`` for the Rasch/2PL comparison.
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
METHODS = ("adaptive", "adaptive by θ", "adaptive+common", "adaptive+common by θ", "stratified+IRT", "random",
           "random+IRT")
RANK_ONLY = ("adaptive by θ", "adaptive+common by θ")
"""Methods whose estimate is an ability, not an accuracy: a ranking (tau) but no accuracy error."""
COMMON_EVERY = 3
"""adaptive+common: every third item is the next of the seed's common order (the other two, the most
informative)."""


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


def examine(responses: np.ndarray, a: np.ndarray, b: np.ndarray, sizes: list[int], seed: int,
            common: np.ndarray | None = None) -> dict[str, dict[int, float]]:
    """One held-out system at every budget in ``sizes`` with one seed: estimates by method and size.

    ``responses`` holds only the items the system answered; ``common``: the seed's order of those items,
    shared by every system (the ``random`` subsets are its first k, ``adaptive+common`` takes from it);
    None: a permutation from the seed. The runs to each size share their prefix (the adaptive run to 99
    items asks at 15 what the run to 15 asks), so one run per seed serves all sizes.
    """
    n = len(responses)
    out: dict[str, dict[int, float]] = {m: {} for m in METHODS}
    order = np.random.default_rng([seed, 2]).permutation(n) if common is None else np.asarray(common)
    for method, every in (("adaptive", 0), ("adaptive+common", COMMON_EVERY)):
        rng = np.random.default_rng([seed, 1])
        asked = np.full(n, np.nan)
        available = np.ones(n, bool)
        theta = 0.0
        shared = iter(order)
        for k in range(1, max(sizes) + 1):
            if every and k % every == 0:
                item = next(i for i in shared if available[i])
            else:
                item = irt.next_item(theta, a, b, available, rng)
            available[item] = False
            asked[item] = responses[item]
            theta, _se = irt.ability(asked, a, b)
            if k in sizes:
                out[method][k] = irt.expected_accuracy(asked, a, b)
                out[f"{method} by θ"][k] = theta
    by_difficulty = np.argsort(b, kind="stable")
    for k in sizes:
        subset = np.full(n, np.nan)
        subset[order[:k]] = responses[order[:k]]
        out["random"][k] = float(np.nanmean(subset))
        out["random+IRT"][k] = irt.expected_accuracy(subset, a, b)
        strata = np.linspace(0, n, k + 1).round().astype(int)
        draw = np.random.default_rng([seed, 3, k])
        chosen = [by_difficulty[lo + draw.integers(hi - lo)] for lo, hi in zip(strata[:-1], strata[1:], strict=True)]
        stratified = np.full(n, np.nan)
        stratified[chosen] = responses[chosen]
        out["stratified+IRT"][k] = irt.expected_accuracy(stratified, a, b)
    return out


def run(path: str | Path = DATA, seeds: int = 100, budgets: tuple[float, ...] = BUDGETS) -> dict[str, Any]:
    """The leave-one-system-out study (module docstring) on the NQ301-style file at ``path``."""
    systems, questions, matrix = load_matrix(path)
    return {"data": str(path), **study(systems, matrix, seeds, budgets), "ceiling": ceiling(matrix, seeds)}


def study(systems: list[str], matrix: np.ndarray, seeds: int = 100,
          budgets: tuple[float, ...] = BUDGETS) -> dict[str, Any]:
    """The leave-one-system-out study on a systems x items matrix (1/0, NaN: not answered)."""
    sizes = [max(1, round(f * matrix.shape[1])) for f in budgets]
    truth = np.array([np.nanmean(row) for row in matrix])
    estimates: dict[tuple[str, int, int], np.ndarray] = defaultdict(lambda: np.full(len(systems), np.nan))
    models = set()
    for h in range(len(systems)):
        others = np.delete(matrix, h, axis=0)
        keep = ~np.isnan(others).all(axis=0)  # items no other system answered cannot be calibrated
        calibration = irt.calibrate(others[:, keep], model="auto")
        models.add(calibration.model)
        answered = ~np.isnan(matrix[h][keep])
        a, b, responses = calibration.a[answered], calibration.b[answered], matrix[h][keep][answered]
        position = np.cumsum(answered) - 1  # an item's index among the system's answered ones
        for seed in range(seeds):
            everyone = np.random.default_rng([seed, 2]).permutation(matrix.shape[1])  # over all items
            kept = np.flatnonzero(keep)
            common = [position[j] for j in (np.searchsorted(kept, everyone[np.isin(everyone, kept)]))
                      if answered[j]]
            for method, by_size in examine(responses, a, b, sizes, seed, np.array(common)).items():
                for k, value in by_size.items():
                    estimates[(method, k, seed)][h] = value
    table = []
    for f, k in zip(budgets, sizes, strict=True):
        for method in METHODS:
            taus = [kendall_tau_b(estimates[(method, k, s)], truth) for s in range(seeds)]
            errors = [float(np.abs(estimates[(method, k, s)] - truth).mean()) for s in range(seeds)]
            table.append({"budget": f, "items": k, "method": method,
                          "tau_mean": statistics.fmean(taus), "tau_sd": statistics.pstdev(taus),
                          **({"mae_mean": None, "mae_sd": None} if method in RANK_ONLY else
                             {"mae_mean": statistics.fmean(errors), "mae_sd": statistics.pstdev(errors)})})
    return {"systems": systems, "questions": int(matrix.shape[1]), "seeds": seeds, "model": sorted(models),
            "true_accuracy": dict(zip(systems, truth.round(4).tolist(), strict=True)), "table": table}


def ceiling(matrix: np.ndarray, seeds: int = 100, budgets: tuple[float, ...] = (*BUDGETS, 0.5)) -> dict[str, Any]:
    """How far the full-bank ranking can be recovered from part of the bank at all, with no model: the
    true correctness on the items (no IRT, plain share right), mean and SD over the seeds.

    - ``subsets``: per budget, a random subset of the items with each system's share right on it,
      ``common`` (one subset for every system, as a fixed sample of a benchmark is used: the design that
      favours a ranking most) and ``own`` (each system its own subset, as adaptive selection asks each
      target different items): Kendall tau-b against the full-bank accuracies and the accuracy MAE.
    - ``split_half``: the items cut at random into two halves; tau-b between the rankings on the halves.
    - ``bootstrap``: the items resampled with replacement (as many as the bank has); tau-b between that
      ranking and the full bank's: how firmly the bank's own items fix its ranking.
    """
    n_sys, n = matrix.shape
    truth = np.array([np.nanmean(row) for row in matrix])

    def acc(items: np.ndarray) -> np.ndarray:
        sub = matrix[:, items]
        seen = ~np.isnan(sub)
        with np.errstate(invalid="ignore"):
            return np.where(seen, sub, 0.0).sum(1) / seen.sum(1)

    def summary(values: list[float]) -> dict[str, float]:
        return {"mean": statistics.fmean(values), "sd": statistics.pstdev(values)}

    subsets = []
    for f in budgets:
        k = max(1, round(f * n))
        found: dict[str, dict[str, list[float]]] = {d: {"tau": [], "mae": []} for d in ("common", "own")}
        for seed in range(seeds):
            order = np.random.default_rng([seed, 2]).permutation(n)
            own = np.array([acc(np.random.default_rng([seed, 4, j]).permutation(n)[:k])[j] for j in range(n_sys)])
            for design, est in (("common", acc(order[:k])), ("own", own)):
                found[design]["tau"].append(kendall_tau_b(est, truth))
                found[design]["mae"].append(float(np.abs(est - truth).mean()))
        subsets.append({"budget": f, "items": k, **{d: {m: summary(v) for m, v in found[d].items()} for d in found}})
    halves, boot = [], []
    for seed in range(seeds):
        order = np.random.default_rng([seed, 5]).permutation(n)
        halves.append(kendall_tau_b(acc(order[: n // 2]), acc(order[n // 2:])))
        boot.append(kendall_tau_b(acc(np.random.default_rng([seed, 6]).integers(0, n, n)), truth))
    return {"subsets": subsets, "split_half": summary(halves), "bootstrap": summary(boot)}


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    """Mean negative log-likelihood (nats) of 1/0 outcomes ``y`` under probabilities ``p``."""
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def model_comparison(matrix: np.ndarray, seeds: int = 20) -> dict[str, Any]:
    """Rasch against 2PL on a matrix, by held-out prediction: each system in turn is held out, the items
    are calibrated on the others with each model, and for each seed the held-out system's items are cut
    at random into halves: its ability (EAP) from one half predicts the other half (log-loss, nats per
    response; and the share predicted right at P > 0.5). Mean and SD over systems x seeds."""
    out: dict[str, dict[str, list[float]]] = {m: {"log_loss": [], "accuracy": []} for m in irt.MODELS}
    for h in range(matrix.shape[0]):
        others = np.delete(matrix, h, axis=0)
        keep = ~np.isnan(others).all(axis=0)
        fits = {m: irt.calibrate(others[:, keep], model=m) for m in irt.MODELS}
        row = matrix[h][keep]
        answered = np.flatnonzero(~np.isnan(row))
        for seed in range(seeds):
            order = np.random.default_rng([seed, 7, h]).permutation(answered)
            fit_on, test_on = order[: len(order) // 2], order[len(order) // 2:]
            seen = np.full(len(row), np.nan)
            seen[fit_on] = row[fit_on]
            for m, fit in fits.items():
                post = irt.posterior(seen, fit.a, fit.b)
                p = post @ irt.p_correct(irt.GRID, fit.a[test_on], fit.b[test_on])
                out[m]["log_loss"].append(log_loss(p, row[test_on]))
                out[m]["accuracy"].append(float(((p > 0.5) == (row[test_on] == 1)).mean()))
    return {m: {k: {"mean": statistics.fmean(v), "sd": statistics.pstdev(v)} for k, v in figs.items()}
            for m, figs in out.items()}


def threshold_study(targets: tuple[int, ...] = (11, 20, 30, 50, 100), items: int = 301, spread: float = 0.5,
                    seeds: int = 10) -> list[dict[str, Any]]:
    """Where 2PL starts to predict better than Rasch, on simulated 2PL responses: discriminations
    ``a ~ logNormal(0, spread^2)``, difficulties ``b ~ N(0, 1)``, abilities ``N(0, 1)``; the items are
    calibrated on ``n`` targets with each model, and 200 new targets are predicted as in
    :func:`model_comparison` (ability from half their items, log-loss on the other half). Per ``n``:
    each model's mean held-out log-loss over the seeds, and how often 2PL was the better."""
    rows = []
    for n in targets:
        losses: dict[str, list[float]] = {m: [] for m in irt.MODELS}
        for seed in range(seeds):
            rng = np.random.default_rng([seed, 8, n])
            a, b = np.exp(rng.normal(0, spread, items)), rng.normal(0, 1, items)
            train = (rng.random((n, items)) < irt.p_correct(rng.normal(0, 1, n), a, b)).astype(float)
            test = (rng.random((200, items)) < irt.p_correct(rng.normal(0, 1, 200), a, b)).astype(float)
            fits = {m: irt.calibrate(train, model=m) for m in irt.MODELS}
            half = rng.permutation(items)
            fit_on, test_on = half[: items // 2], half[items // 2:]
            for m, fit in fits.items():
                seen = np.full((200, items), np.nan)
                seen[:, fit_on] = test[:, fit_on]
                post = irt._posteriors(np.nan_to_num(seen), (~np.isnan(seen)).astype(float), fit.a, fit.b)
                p = post @ irt.p_correct(irt.GRID, fit.a[test_on], fit.b[test_on])
                losses[m].append(log_loss(p, test[:, test_on]))
        better = sum(t < r for r, t in zip(losses["rasch"], losses["2pl"], strict=True))
        rows.append({"targets": n, "items": items, "spread": spread, "seeds": seeds,
                     "rasch": statistics.fmean(losses["rasch"]), "2pl": statistics.fmean(losses["2pl"]),
                     "2pl_better": better})
    return rows


def engine_matrix(key: str | Path, home: str | Path) -> tuple[list[str], np.ndarray, dict[str, Any]]:
    """The second matrix: the targets of known ability of ``bench/efficiency_targets.py`` examined by
    the real engine (offline kernel, graded protocol) on the MedQA-style file ``key``, imported into a
    new data home ``home``; the responses read from the store by :mod:`engine.bench.calibrate`'s rules.
    Returns (targets, matrix, facts: the known abilities and how the engine's figures follow them)."""
    import asyncio
    import os

    from bench import efficiency_targets as able
    from engine.bench.calibrate import benchmark_units, response_matrix
    from engine.bench.importers import run_import
    from engine.interview.run import RunRequest, execute_run, plan_run
    from engine.runtime import Runtime

    os.environ[able.KEY_ENV] = str(key)
    runtime = Runtime(home=Path(home))
    run_import(runtime.store, runtime.home, "medqa", key, "medqa")
    run_id = plan_run(runtime, RunRequest(bench="medqa", targets=able.TARGETS, kernel="offline", policy="threshold",
                                          turns=1, seed=0))
    errors = asyncio.run(execute_run(runtime, run_id))
    failed = {s: e for s, e in errors.items() if e}
    if failed:
        raise SystemExit(f"{len(failed)} session(s) failed, e.g. {next(iter(failed.items()))}")
    _bench, _fingerprint, units = benchmark_units(runtime.store, "medqa")
    targets, matrix, _sessions, _scores = response_matrix(runtime.store, units)
    runtime.store.close()
    ability = {t: able.ABILITIES[able.TARGETS.index(t)] for t in targets}
    accuracy = np.nanmean(matrix, axis=1)
    facts = {"abilities": ability, "answered": int((~np.isnan(matrix)).sum()),
             "tau_ability_accuracy": kendall_tau_b(np.array([ability[t] for t in targets]), accuracy)}
    return targets, matrix, facts


def format_table(result: dict[str, Any]) -> str:
    """The table as text."""
    lines = [f"{len(result['systems'])} systems x {result['questions']} questions, each held out in turn "
             f"(calibration: {', '.join(result['model'])} on the other {len(result['systems']) - 1}); "
             f"mean ± sd over {result['seeds']} seeds",
             f"{'budget':>7} {'items':>5}  {'method':<20} {'Kendall tau-b':>16} {'accuracy MAE':>16}"]
    if "tau_ability_accuracy" in result:
        lines.insert(1, f"the engine's matrix: {result['answered']} responses read from the store; Kendall tau-b of the "
                        f"known abilities against the full-bank accuracies {result['tau_ability_accuracy']:.3f}")
    for row in result["table"]:
        mae = "–" if row["mae_mean"] is None else f"{row['mae_mean']:>8.4f} ± {row['mae_sd']:.4f}"
        lines.append(f"{row['budget']:>7.0%} {row['items']:>5}  {row['method']:<20} "
                     f"{row['tau_mean']:>8.3f} ± {row['tau_sd']:.3f}   {mae:>17}")
    if "ceiling" in result:
        c = result["ceiling"]
        lines += ["", "ceiling, no model (true correctness, plain share right on the items):",
                  f"{'budget':>7} {'items':>5}  {'subset':<20} {'Kendall tau-b':>16} {'accuracy MAE':>16}"]
        for row in c["subsets"]:
            for design in ("common", "own"):
                t, e = row[design]["tau"], row[design]["mae"]
                lines.append(f"{row['budget']:>7.0%} {row['items']:>5}  {design:<20} {t['mean']:>8.3f} ± {t['sd']:.3f}"
                             f"   {e['mean']:>8.4f} ± {e['sd']:.4f}")
        lines.append(f"split-half (two random halves) tau-b {c['split_half']['mean']:.3f} ± {c['split_half']['sd']:.3f}; "
                     f"bootstrap of the whole bank against it {c['bootstrap']['mean']:.3f} ± {c['bootstrap']['sd']:.3f}")
    return "\n".join(lines)


def format_models(comparison: dict[str, Any], threshold: list[dict[str, Any]]) -> str:
    """The Rasch/2PL comparison as text."""
    lines = ["held-out prediction (ability from half a held-out system's items, the other half predicted):"]
    for m, figs in comparison.items():
        lines.append(f"  {m:<6} log-loss {figs['log_loss']['mean']:.4f} ± {figs['log_loss']['sd']:.4f}   "
                     f"predicted right {figs['accuracy']['mean']:.3f} ± {figs['accuracy']['sd']:.3f}")
    if threshold:
        lines.append(f"simulated 2PL items (log a ~ N(0, {threshold[0]['spread']}²)), {threshold[0]['items']} items, "
                     f"held-out log-loss of 200 new targets; {threshold[0]['seeds']} seeds:")
        for row in threshold:
            lines.append(f"  {row['targets']:>4} calibration targets: rasch {row['rasch']:.4f}  2pl {row['2pl']:.4f}  "
                         f"2pl better in {row['2pl_better']}/{row['seeds']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Command line: see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--engine", metavar="MEDQA_JSONL",
                        help="the second matrix instead: targets of known ability (bench/efficiency_targets.py) "
                             "examined by the real engine on this MedQA-style file")
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--models", action="store_true",
                        help="instead: Rasch against 2PL by held-out log-loss on the matrix (20 seeds), and where "
                             "2PL starts to pay on simulated items (10 seeds)")
    parser.add_argument("--spread", type=float, default=0.5,
                        help="--models: the SD of log a of the simulated items (default 0.5)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.models:
        if not Path(args.data).is_file():
            raise SystemExit(f"{args.data}: not found (the NQ301 matrix lives in shared/data/nq301/)")
        comparison = model_comparison(load_matrix(args.data)[2])
        threshold = threshold_study(spread=args.spread)
        print(json.dumps({"data": args.data, "comparison": comparison, "threshold": threshold}, indent=1)
              if args.json else format_models(comparison, threshold))
        return
    if args.engine:
        import tempfile

        if not Path(args.engine).is_file():
            raise SystemExit(f"{args.engine}: not found")
        with tempfile.TemporaryDirectory() as home:
            systems, matrix, facts = engine_matrix(args.engine, home)
        result = {"data": args.engine, **facts, **study(systems, matrix, args.seeds),
                  "ceiling": ceiling(matrix, args.seeds)}
    else:
        if not Path(args.data).is_file():
            raise SystemExit(f"{args.data}: not found (the NQ301 matrix lives in shared/data/nq301/)")
        result = run(args.data, args.seeds)
    print(json.dumps(result, indent=1) if args.json else format_table(result))


if __name__ == "__main__":
    main()
