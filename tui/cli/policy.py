"""``viva policy``: train, evaluate and calibrate the questioning policy.

Heavy imports (numpy, onnx, onnxruntime) happen inside the commands so ``viva --help`` stays fast.
"""

from __future__ import annotations

import json
import math
import sys

import click


@click.group()
def policy() -> None:
    """The questioning policy: follow-up or challenge, decided turn by turn (ONNX)."""


@policy.command("train")
@click.option("--steps", type=click.IntRange(min=1), default=None,
              help="Decisions to simulate (default 400000, the shipped model's).")
@click.option("--seed", type=int, default=None, help="Random seed (default 0, the shipped model's).")
@click.option("--out", type=click.Path(dir_okay=False), default="policy.onnx", show_default=True,
              help="Where to write the model; its card goes to the same name with .json. "
                   "Use models/policy.onnx to regenerate the shipped model.")
@click.option("--reward", type=click.Choice(["outcome", "evidence", "measure"]), default=None,
              help="Reward definition (default: the shipped model's, see models/POLICY.md).")
@click.option("--tau", type=float, default=None, help="Reward threshold τ (default 0.1).")
@click.option("--lam", type=float, default=None, help="Weight λ of the follow-up's 1 − cos (outcome, evidence).")
@click.option("--mu", type=float, default=None, help="measure: weight μ of what a challenge tests.")
@click.option("--cost", type=float, default=None, help="measure: price c of a challenge.")
@click.option("--beta", type=float, default=None, help="measure: weight β of the strategic-rate term.")
@click.option("--unit", type=click.Choice(["claim", "trial", "retrial", "stake"]), default=None,
              help="measure: what a challenge's test counts.")
@click.option("--rates", type=click.Choice(["both", "eir", "fdr"]), default=None,
              help="measure: which states the rate term counts.")
@click.option("--targets", "targets_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Train on targets fitted by `viva policy calibrate` instead of the uniform ranges.")
def train_cmd(steps: int | None, seed: int | None, out: str, reward: str | None, tau: float | None,
              lam: float | None, mu: float | None, cost: float | None, beta: float | None, unit: str | None,
              rates: str | None, targets_file: str | None) -> None:
    """Train the policy with PPO on the session simulator, export it to ONNX and evaluate it.

    Without reward options it trains the shipped model's reward: with the default seed and steps,
    `--out models/policy.onnx` regenerates the shipped file."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from engine.api import DEFAULT_SEED, DEFAULT_STEPS, PPOConfig, RewardSpec, train_and_export
    from tui.cli.console import SafeConsole as Console

    spec = RewardSpec.shipped() if reward is None else RewardSpec(reward)
    given = {"tau": tau, "lam": lam, "mu": mu, "cost": cost, "beta": beta, "unit": unit, "rates": rates}
    fields = {**spec.as_dict(), **{k: v for k, v in given.items() if v is not None}}
    try:
        spec = RewardSpec(**fields)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    config = PPOConfig(steps=steps or DEFAULT_STEPS, seed=DEFAULT_SEED if seed is None else seed, reward=spec.kind,
                       tau=spec.tau, lam=spec.lam, mu=spec.mu, cost=spec.cost, beta=spec.beta, unit=spec.unit,
                       rates=spec.rates)
    sampler = None
    if targets_file:
        from engine.api import fitted_sampler, load_fitted_targets

        try:
            sampler = fitted_sampler(load_fitted_targets(targets_file))
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
    console = Console(stderr=True)
    columns = (TextColumn("[bold]training"), BarColumn(), MofNCompleteColumn(),
               TextColumn("steps  mean return {task.fields[ret]}"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("train", total=config.steps, ret="   -  ")

        def on_update(update) -> None:
            progress.update(task, completed=min(update.steps, config.steps), ret=f"{update.mean_return:6.3f}")

        shipped = train_and_export(config, out, sampler=sampler, calibration=targets_file, on_update=on_update)
    click.echo(f"trained {shipped.result.steps} steps (seed {config.seed}) in {shipped.result.seconds:.1f} s")
    click.echo(f"model: {shipped.path}  sha256 {shipped.sha256}")
    click.echo(f"card:  {shipped.path.with_suffix('.json')}")
    if shipped.comparison:
        c = shipped.comparison
        click.echo(f"compared with the file it replaced ({c['previous_sha256'][:12]}): "
                   f"bit-identical {'yes' if c['bit_identical'] else 'no'}, same actions on "
                   f"{c['same_actions']}/{c['states']} evaluation states, max |Δp| {c['max_prob_diff']:.2e}")
    click.echo("")
    click.echo(shipped.table)


@policy.command("eval")
@click.option("--model", "model_path", type=click.Path(dir_okay=False), default=None,
              help="The .onnx model to evaluate (default: the shipped models/policy.onnx).")
@click.option("--store", "store_path", type=click.Path(exists=True), default=None,
              help="A viva.db, a viva home or a folder of homes (bench/validity.py --keep DIR) whose "
                   "real-engine sessions to evaluate too.")
@click.option("--truth", type=click.Path(exists=True, dir_okay=False), default=None,
              help='JSON {"target": {"knowledge": k, "instability": u}} of the targets in --store '
                   "(default: read from target names k<k>_u<u>_<style>, the validity benchmark's).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def eval_cmd(model_path: str | None, store_path: str | None, truth: str | None, as_json: bool) -> None:
    """Evaluate a policy against the baselines on held-out and shifted simulated targets (and on
    logged real-engine sessions with --store): a common yardstick, FDR, EIR, challenge share,
    ρ(k, Score), ρ(1−σ, R−)."""
    from engine.api import PolicyError, eval_report

    try:
        report = eval_report(model_path, store_path, truth)
    except (PolicyError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2, allow_nan=False))
        return
    click.echo(report.text())


@policy.command("calibrate")
@click.option("--out", type=click.Path(dir_okay=False), default="policy-targets.json", show_default=True,
              help="Where to write the fitted targets (input of `viva policy train --targets`).")
@click.option("--min-sessions", type=click.IntRange(min=1), default=5, show_default=True,
              help="Fit only targets with at least this many logged adaptive sessions.")
@click.pass_context
def calibrate_cmd(ctx: click.Context, out: str, min_sessions: int) -> None:
    """Fit simulator parameters per target from the sessions logged in the store."""
    from engine.api import calibrate_from_store, save_fits
    from tui.cli.context import get_runtime

    fits = calibrate_from_store(get_runtime(ctx).store, min_sessions)
    if not fits:
        click.echo(f"no target has {min_sessions} or more finished adaptive sessions; nothing to fit", err=True)
        sys.exit(1)
    save_fits(fits, out)
    click.echo(f"{'target':<30}{'sessions':>9}{'k':>7}{'sigma':>7}{'w':>7}{'v':>7}{'loss':>9}")
    for f in fits:
        p = f.params
        click.echo(f"{f.target[:29]:<30}{f.sessions:>9}{p.knowledge:>7.2f}{p.stability:>7.2f}"
                   f"{p.wrongness:>7.2f}{p.verbosity:>7.2f}{f.loss:>9.4f}")
    click.echo(f"wrote {out}")


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
