"""The questioning policy from the command line: compare rewards, train, evaluate, calibrate.

    python bench/policy.py compare [--steps 400000] [--seed 0] [--only NAME ...] [--json FILE]
    python bench/policy.py compare --merge A.json B.json ... [--json FILE]
    python bench/policy.py train --seed 0 --steps 400000 --reward measure --mu 1 --beta 0.05 \\
        --out models/policy.onnx
    python bench/policy.py eval [--model FILE] [--store DIR [--truth truth.json]] [--json]
    python bench/policy.py calibrate --store viva.db --out policy-targets.json
    python bench/policy.py frontier [--set held-out]

``compare`` trains every candidate reward of ``engine/policy/compare.py`` with the same seed and
steps, prints one table per evaluation set (validation, held-out, shifted) and the reward the
validation set selects. ``frontier`` evaluates fixed rules that buy FDR directly (the rules with
FDR = EIR = 1 that differ only where the rates do not count, and "challenge a stagnant state with
probability p"): how much ρ(k, Score) a given FDR costs, whatever the reward. ``train`` is ``viva policy train`` with every reward option; ``eval`` is
``viva policy eval`` with the real-engine rows of a store. Training is CPU-bound on one core:
prefix with ``nice`` on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.policy.reward import BETA, COST, KINDS, LAMBDA, MU, RATES, TAU, UNITS  # noqa: E402


def _compare(args: argparse.Namespace) -> int:
    from engine.policy.compare import compare

    def progress(result) -> None:
        row = result.rows["validation"]
        print(f"  {result.name}: {result.seconds:.0f} s; validation rho(k,Score) {row.score_rho:.3f}, "
              f"rho(1-s,R-) {row.instability_rho:.3f}, FDR {row.fdr:.3f}, EIR {row.eir:.3f}",
              file=sys.stderr, flush=True)

    if args.merge:
        from engine.policy.compare import merge

        parts = [json.loads(Path(f).read_text(encoding="utf-8")) for f in args.merge]
        result = merge(parts)
        command = "; ".join([part.get("command") or f"python bench/policy.py compare --steps {part['steps']} "
                             f"--seed {part['seed']} --only {' '.join(part['candidates'])} --json {f}"
                             for part, f in zip(parts, args.merge, strict=True)]
                            + [f"python bench/policy.py compare --merge {' '.join(args.merge)}"])
    else:
        result = compare(args.steps, args.seed, args.only or None, on_result=progress)
        command = (f"python bench/policy.py compare --steps {args.steps} --seed {args.seed}"
                   + (f" --only {' '.join(args.only)}" if args.only else ""))
    print(result.text())
    if args.json:
        payload = {**result.as_dict(), "command": command}
        Path(args.json).write_text(json.dumps(payload, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    return 0


def _train(args: argparse.Namespace) -> int:
    from engine.policy.pipeline import train_and_export
    from engine.policy.ppo import PPOConfig

    config = PPOConfig(steps=args.steps, seed=args.seed, reward=args.reward, tau=args.tau, lam=args.lam,
                       mu=args.mu, cost=args.cost, beta=args.beta, unit=args.unit, rates=args.rates)
    sampler = None
    if args.targets:
        from engine.policy.calibrate import fitted_sampler, load_fitted_targets

        sampler = fitted_sampler(load_fitted_targets(args.targets))
    selection = None
    if args.selection:
        data = json.loads(Path(args.selection).read_text(encoding="utf-8"))
        selection = {"command": data.get("command") or f"python bench/policy.py compare --steps {data['steps']} "
                                                        f"--seed {data['seed']}",
                     **data.get("selection", {}), "table": data.get("table")}
    shipped = train_and_export(config, args.out, sampler=sampler, calibration=args.targets, selection=selection)
    print(f"trained {shipped.result.steps} steps (seed {config.seed}) in {shipped.result.seconds:.1f} s")
    print(f"model: {shipped.path}  sha256 {shipped.sha256}")
    if shipped.comparison:
        c = shipped.comparison
        print(f"compared with the file it replaced ({c['previous_sha256'][:12]}): bit-identical "
              f"{'yes' if c['bit_identical'] else 'no'}, same actions on {c['same_actions']}/{c['states']} states")
    print(shipped.table)
    return 0


def _eval(args: argparse.Namespace) -> int:
    from engine.policy.pipeline import eval_report

    report = eval_report(args.model, args.store, args.truth)
    print(json.dumps(report.as_dict(), indent=2, allow_nan=False) if args.json else report.text())
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from engine.policy.calibrate import calibrate_store, save_fits

    fits = calibrate_store(args.store, args.min_sessions)
    if not fits:
        print(f"{args.store}: no target has {args.min_sessions} or more finished adaptive sessions; nothing to fit",
              file=sys.stderr)
        return 1
    save_fits(fits, args.out)
    for f in fits:
        print(f"{f.target[:40]:<41}{f.sessions:>5} sessions  " + "  ".join(
            f"{k} {v:.2f}" for k, v in f.params.as_dict().items()) + f"  loss {f.loss:.4f}")
    print(f"wrote {args.out}")
    return 0


def frontier_policies() -> list:
    """Fixed rules that trade measurement for FDR (see the module docstring): every rule with
    FDR = EIR = 1 is the threshold rule except after turn 0 and in the band 0 < Δs <= τ, where the rates
    do not count (four choices); and "follow up, but challenge a stagnant state (Δs <= 0) with
    probability p", for some p, and with p = 1 only after a follow-up."""
    import numpy as np

    from engine.policy.features import DELTA, PREV_FOLLOW_UP, PREV_NONE
    from engine.policy.policies import Policy

    class Rule(Policy):
        """Challenge with probability ``p_first`` after turn 0, ``p_stagnant`` when Δs <= 0 (only after a
        follow-up when ``after_follow_up``), ``p_band`` when 0 < Δs <= τ, never when Δs > τ."""

        def __init__(self, name: str, p_first: float, p_stagnant: float, p_band: float,
                     after_follow_up: bool = False):
            self.name = self.version = name
            self.p = (p_first, p_stagnant, p_band)
            self.after_follow_up = after_follow_up

        def probs(self, states: np.ndarray) -> np.ndarray:
            s = np.asarray(states, dtype=np.float32)
            first = s[:, PREV_NONE] > 0.5
            stagnant = ~first & (s[:, DELTA] <= 0)
            if self.after_follow_up:
                stagnant &= s[:, PREV_FOLLOW_UP] > 0.5
            band = ~first & (s[:, DELTA] > 0) & (s[:, DELTA] <= TAU)
            p = np.where(first, self.p[0], np.where(stagnant, self.p[1], np.where(band, self.p[2], 0.0)))
            return np.stack([1.0 - p, p], axis=1).astype(np.float32)

    rules = [Rule(f"rates=1 t0:{'ch' if a else 'fu'} band:{'ch' if b else 'fu'}", a, 1.0, b)
             for a in (0.0, 1.0) for b in (0.0, 1.0)]
    rules += [Rule(f"stagnant p={p:g}", 0.0, p, 0.0) for p in (0.1, 0.25, 0.5)]
    rules.append(Rule("stagnant after follow-up", 0.0, 1.0, 0.0, after_follow_up=True))
    return rules


def _frontier(args: argparse.Namespace) -> int:
    from engine.policy.evaluate import (
        LEGEND,
        evaluate_policy,
        format_table,
        heldout_set,
        shifted_set,
        validation_set,
    )

    eval_set = {"held-out": heldout_set, "shifted": shifted_set, "validation": validation_set}[args.set]()
    rows = [evaluate_policy(p, eval_set=eval_set) for p in frontier_policies()]
    print(LEGEND)
    print(format_table(rows, title=eval_set.describe()))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the subcommand."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("compare", help="train and compare every candidate reward")
    p.add_argument("--steps", type=int, default=400_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", nargs="*", help="candidate names (default: all)")
    p.add_argument("--json", help="write the comparison as JSON to this file")
    p.add_argument("--merge", nargs="+", help="instead of training: merge these `compare --json` files "
                   "(same seed and steps) into one comparison and select again")
    p.set_defaults(run=_compare)

    p = sub.add_parser("train", help="train one reward, export ONNX, write the card")
    p.add_argument("--steps", type=int, default=400_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--reward", choices=KINDS, default="outcome")
    p.add_argument("--tau", type=float, default=TAU)
    p.add_argument("--lam", type=float, default=LAMBDA)
    p.add_argument("--mu", type=float, default=MU)
    p.add_argument("--cost", type=float, default=COST)
    p.add_argument("--beta", type=float, default=BETA)
    p.add_argument("--unit", choices=UNITS, default="claim")
    p.add_argument("--rates", choices=RATES, default="both")
    p.add_argument("--targets", help="fitted targets from `calibrate` (default: uniform ranges)")
    p.add_argument("--selection", help="a `compare --json` file whose selection goes into the card")
    p.add_argument("--out", default="policy.onnx")
    p.set_defaults(run=_train)

    p = sub.add_parser("eval", help="evaluate a model (simulated sets, and logged sessions)")
    p.add_argument("--model", default=None, help="the .onnx (default: models/policy.onnx)")
    p.add_argument("--store", default=None,
                   help="viva.db, data home or folder of homes (bench/validity.py --keep) with logged sessions")
    p.add_argument("--truth", default=None, help='JSON {"target": {"knowledge": k, "instability": u}} '
                   "(default: from target names k<k>_u<u>_<style>)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=_eval)

    p = sub.add_parser("calibrate", help="fit simulator targets from the sessions of a store")
    p.add_argument("--store", required=True)
    p.add_argument("--out", default="policy-targets.json")
    p.add_argument("--min-sessions", type=int, default=5)
    p.set_defaults(run=_calibrate)

    p = sub.add_parser("frontier", help="fixed rules that buy FDR: what it costs in measurement")
    p.add_argument("--set", choices=("held-out", "shifted", "validation"), default="held-out")
    p.set_defaults(run=_frontier)

    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
