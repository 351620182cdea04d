"""The free-text judge against human labels: REALSumm's (fact, summary, is it stated) rows.

Usage (from the repository root)::

    python bench/criterion_check.py                      # the test half, ../shared/data/realsumm
    python bench/criterion_check.py --half dev           # the half thresholds are fitted on
    python bench/criterion_check.py --half all --json
    python bench/criterion_check.py FILE --by system     # any JSONL of criterion, answer, human rows

Rows: ``criterion`` (one fact), ``answer`` (a text that may state it), ``human`` (true when people
judged that it does), optional ``question`` and any grouping field (``--by``, default ``system``) and
``example`` (the article: the unit of the dev/test split).

Protocol. The articles are split in two halves by a seeded hash of ``example`` (``SEED``): *dev* and
*test*. Two scorers are compared:

- **overlap**: the share of the criterion's content stems (:func:`engine.text.tokens.content_stems`)
  that occur anywhere in the answer, with the threshold that maximises Cohen's κ on the dev half
  (the word-overlap baseline of issue 22);
- **judge**: :func:`engine.judge.freetext.judge_fact`: ``met`` at its shipped threshold, and its
  sweepable ``support`` for the AUC and for the same dev-fitted threshold (``judge@fit``).

For each, on the chosen half: n, the human base rate, accuracy, κ, precision and recall of "stated",
and the AUC of the score (ties count one half); the same per ``--by`` group and by bins of the
per-answer base rate (the share of an answer's criteria that people marked stated: how lenient a
threshold is where few facts are stated). The AUC needs no threshold; κ at a threshold fitted on the
other half is the figure that says how well the threshold holds.

Prints figures; asserts nothing. The machine may be shared: the timing line is indicative only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # before bench/, whose engine.py would shadow the package

# ../shared/data beside the repository (a git worktree sits one level deeper)
DATA = next((p / "shared" / "data" / "realsumm" / "realsumm_scu.jsonl" for p in (ROOT.parent, ROOT.parent.parent)
             if (p / "shared" / "data" / "realsumm" / "realsumm_scu.jsonl").exists()),
            ROOT.parent / "shared" / "data" / "realsumm" / "realsumm_scu.jsonl")
SEED = "viva-criterion-check/1"
BINS = [(0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01)]


def half_of(example: Any) -> str:
    """``dev`` or ``test``: a seeded hash of the article id (every row of an article in one half)."""
    digest = hashlib.sha256(f"{SEED}:{example}".encode()).digest()
    return "dev" if digest[0] % 2 == 0 else "test"


def load_rows(path: Path) -> list[dict[str, Any]]:
    """The file's rows; a row without ``criterion``/``answer``/``human`` is an error naming its line."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SystemExit(f"{path}:{n}: not JSON ({exc.msg}); each line must be one JSON object") from exc
            missing = [k for k in ("criterion", "answer", "human") if k not in row]
            if missing or not isinstance(row["human"], bool):
                raise SystemExit(f"{path}:{n}: needs criterion, answer and a true/false human (missing: {missing})")
            row["half"] = half_of(row.get("example", n))
            rows.append(row)
    return rows


# -- metrics ------------------------------------------------------------------------------------

def metrics(pred: Sequence[bool], human: Sequence[bool]) -> dict[str, float]:
    """n, base rate, accuracy, Cohen's κ, precision and recall of "stated" (NaN where undefined)."""
    n = len(human)
    tp = sum(p and h for p, h in zip(pred, human, strict=True))
    fp = sum(p and not h for p, h in zip(pred, human, strict=True))
    fn = sum(h and not p for p, h in zip(pred, human, strict=True))
    tn = n - tp - fp - fn
    nan = float("nan")
    if not n:
        return {"n": 0, "base": nan, "acc": nan, "kappa": nan, "prec": nan, "rec": nan}
    acc = (tp + tn) / n
    pe = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / (n * n)
    kappa = (acc - pe) / (1 - pe) if pe < 1 else nan
    return {"n": n, "base": (tp + fn) / n, "acc": acc, "kappa": kappa,
            "prec": tp / (tp + fp) if tp + fp else nan, "rec": tp / (tp + fn) if tp + fn else nan}


def auc(scores: Sequence[float], human: Sequence[bool]) -> float:
    """Area under the ROC curve (Mann-Whitney; a tie counts one half); NaN with one class only."""
    pairs = sorted(zip(scores, human, strict=True))
    pos = sum(human)
    neg = len(human) - pos
    if not pos or not neg:
        return float("nan")
    rank_sum, i = 0.0, 0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        mid = (i + j + 1) / 2  # ranks i+1..j, averaged
        rank_sum += mid * sum(1 for _, h in pairs[i:j] if h)
        i = j
    return (rank_sum - pos * (pos + 1) / 2) / (pos * neg)


def fit_threshold(scores: Sequence[float], human: Sequence[bool]) -> float:
    """The threshold (``score >= t`` is "stated") that maximises κ; ties: the middle of the best ones.

    The cuts are the lowest score, the midpoints between neighbouring distinct scores and just above the
    highest; every cut's confusion matrix comes from suffix sums over the sorted distinct scores.
    """
    import numpy as np

    if not len(scores):
        return 0.5
    values, where = np.unique(np.asarray(scores, dtype=float), return_inverse=True)
    h = np.asarray(human, dtype=bool)
    pos = np.bincount(where, weights=h, minlength=len(values))
    neg = np.bincount(where, weights=~h, minlength=len(values))
    # cut j (0..U) predicts "stated" for the distinct scores j.. (cut U: none)
    tp = np.r_[np.cumsum(pos[::-1])[::-1], 0.0]
    fp = np.r_[np.cumsum(neg[::-1])[::-1], 0.0]
    n, p_all = float(len(h)), float(h.sum())
    fn, tn = p_all - tp, (n - p_all) - fp
    acc = (tp + tn) / n
    pe = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / (n * n)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(pe < 1, (acc - pe) / (1 - pe), np.nan)
    if np.all(np.isnan(kappa)):
        return 0.5
    best = np.nanmax(kappa)
    kept = np.flatnonzero(np.abs(kappa - best) <= 1e-12)
    cuts = np.r_[values[0], (values[:-1] + values[1:]) / 2, values[-1] + 1e-9]
    return float(cuts[kept[len(kept) // 2]])


# -- scorers ------------------------------------------------------------------------------------

def overlap_scores(rows: Sequence[dict[str, Any]]) -> list[float]:
    """Share of the criterion's unique content stems found anywhere in the answer."""
    from engine.text.tokens import content_stems

    out = []
    answers: dict[str, set[str]] = {}
    for r in rows:
        said = answers.get(r["answer"])
        if said is None:
            said = answers[r["answer"]] = set(content_stems(r["answer"]))
        stems = set(content_stems(r["criterion"]))
        out.append(len(stems & said) / len(stems) if stems else 0.0)
    return out


def judge_scores(rows: Sequence[dict[str, Any]]) -> tuple[list[bool], list[float], float, float]:
    """(met, support) per row from the free-text judge, its threshold, and seconds per answer.

    Rows sharing an answer and question are judged together (one embedding batch), as an
    interview's turn judges all its criteria at once.
    """
    from engine.judge.freetext import FreeTextJudge

    judge = FreeTextJudge()
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        groups[(r["answer"], r.get("question", ""))].append(i)
    met: list[bool] = [False] * len(rows)
    support: list[float] = [0.0] * len(rows)
    start = time.perf_counter()
    for (answer, question), idx in groups.items():
        verdicts = judge.judge_many([rows[i]["criterion"] for i in idx], answer, question)
        for i, v in zip(idx, verdicts, strict=True):
            met[i], support[i] = v.met, v.support
    spent = (time.perf_counter() - start) / max(1, len(groups))
    return met, support, judge.threshold, spent


# -- report -------------------------------------------------------------------------------------

def _block(rows: Sequence[dict[str, Any]], preds: dict[str, list[bool]], scores: dict[str, list[float]],
           keep: Callable[[dict[str, Any]], bool]) -> dict[str, dict[str, float]]:
    idx = [i for i, r in enumerate(rows) if keep(r)]
    human = [rows[i]["human"] for i in idx]
    out = {}
    for name, pred in preds.items():
        m = metrics([pred[i] for i in idx], human)
        score = scores.get(name.split("@")[0])
        m["auc"] = auc([score[i] for i in idx], human) if score is not None else float("nan")
        out[name] = m
    return out


def report(rows: Sequence[dict[str, Any]], half: str, by: str) -> dict[str, Any]:
    """Every figure of the module docstring, as a dict (``--json`` prints it)."""
    dev = [i for i, r in enumerate(rows) if r["half"] == "dev"]
    human = [r["human"] for r in rows]
    over = overlap_scores(rows)
    t_over = fit_threshold([over[i] for i in dev], [human[i] for i in dev])
    met, support, t_judge, spent = judge_scores(rows)
    t_fit = fit_threshold([support[i] for i in dev], [human[i] for i in dev])
    preds = {"overlap@fit": [s >= t_over for s in over], "judge": met, "judge@fit": [s >= t_fit for s in support]}
    scores = {"overlap": over, "judge": support}
    in_half = (lambda r: True) if half == "all" else (lambda r: r["half"] == half)
    base_of: dict[Any, float] = {}
    per_answer: dict[Any, list[bool]] = defaultdict(list)
    for r in rows:
        per_answer[(r.get("example"), r["answer"])].append(r["human"])
    for key, hs in per_answer.items():
        base_of[key] = sum(hs) / len(hs)
    out: dict[str, Any] = {
        "half": half, "thresholds": {"overlap@fit": t_over, "judge": t_judge, "judge@fit": t_fit},
        "seconds_per_answer": spent, "overall": _block(rows, preds, scores, in_half),
        "groups": {}, "bins": {}}
    for g in sorted({str(r.get(by, "")) for r in rows}):
        out["groups"][g] = _block(rows, preds, scores, lambda r, g=g: in_half(r) and str(r.get(by, "")) == g)
    for lo, hi in BINS:
        name = f"{lo:.1f}-{min(hi, 1.0):.1f}"
        out["bins"][name] = _block(rows, preds, scores, lambda r, lo=lo, hi=hi: in_half(r)
                                   and lo <= base_of[(r.get("example"), r["answer"])] < hi)
    return out


def _fmt(v: float) -> str:
    return "   -  " if v != v else f"{v:6.3f}"


def print_report(rep: dict[str, Any], by: str) -> None:
    th = rep["thresholds"]
    print(f"half: {rep['half']}   thresholds: overlap@fit {th['overlap@fit']:.3f} (fitted on dev), judge "
          f"{th['judge']:.3f} (shipped), judge@fit {th['judge@fit']:.3f} (fitted on dev)")
    print(f"judge time: {rep['seconds_per_answer'] * 1000:.1f} ms per answer (all its criteria; shared machine)")
    head = f"{'':34} {'scorer':11} {'n':>6} {'base':>6} {'acc':>6} {'kappa':>6} {'prec':>6} {'rec':>6} {'auc':>6}"

    def rows_of(title: str, block: dict[str, dict[str, float]]) -> None:
        for k, (name, m) in enumerate(block.items()):
            label = title if k == 0 else ""
            print(f"{label[:34]:34} {name:11} {m['n']:6d} " + " ".join(
                _fmt(m[x]) for x in ("base", "acc", "kappa", "prec", "rec", "auc")))

    print(head)
    rows_of("overall", rep["overall"])
    print(f"\nper {by}")
    print(head)
    for g, block in rep["groups"].items():
        rows_of(g, block)
    print("\nby the per-answer base rate (share of its criteria people marked stated)")
    print(head)
    for b, block in rep["bins"].items():
        rows_of(f"base {b}", block)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", type=Path, default=DATA)
    ap.add_argument("--half", choices=("dev", "test", "all"), default="test")
    ap.add_argument("--by", default="system", help="the field to group by (default: system)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N articles (a quick look)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if not args.file.exists():
        raise SystemExit(f"{args.file}: not found; pass the REALSumm file (realsumm_scu.jsonl) or another JSONL")
    rows = load_rows(args.file)
    if args.limit:
        keep = sorted({r.get("example") for r in rows}, key=str)[: args.limit]
        rows = [r for r in rows if r.get("example") in set(keep)]
    rep = report(rows, args.half, args.by)
    if args.json:
        print(json.dumps(rep, indent=1))
    else:
        print_report(rep, args.by)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
