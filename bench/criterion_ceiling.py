"""How far word matching can go on REALSumm: the criterion judge against the best a scorer built from this
machine's parts could reach.

Usage (from the repository root; about 12 minutes on two cores)::

    python bench/criterion_ceiling.py            # ../shared/data/realsumm/realsumm_scu.jsonl
    python bench/criterion_ceiling.py --limit 20 # the first 20 articles: a quick look

Issue 22 asks the offline criterion judge for Cohen's κ >= 0.60 against REALSumm's human labels. This
script measures what stands between the judge and that goal, on the same dev/test split of the articles
as ``bench/criterion_check.py`` (its :func:`half_of`). Each scorer gives a number per (fact, summary) row:

- **overlap**: the share of the fact's content stems found in the summary (the issue's baseline);
- **judge**: :func:`engine.judge.freetext.FreeTextJudge`'s ``support`` (its uncapped best score);
- **align**: a BERTScore-style recall with the shipped encoder's contextual word pieces
  (:meth:`engine.knowledge.embed.Embedder.token_vectors`): each content word of the fact takes its best
  cosine with any piece of the summary, averaged with :func:`engine.judge.freetext.word_weight`; and
  **align/sent**, the best sentence's recall. This is the one paraphrase signal the machine has beyond
  the judge's own word vectors: no entailment (NLI) model ships with viva's dependencies;
- **combined**: a logistic regression on all four scores, fitted on the dev half (five weights).

For each scorer, on the test half: κ at the threshold fitted on dev (the honest figure), κ at the best
threshold chosen on the test half itself (an upper bound no fitting protocol can beat), and the AUC.

Prints figures; asserts nothing. The machine may be shared: the timing line is indicative only.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # before bench/, whose engine.py would shadow the package
sys.path.insert(1, str(ROOT / "bench"))

from criterion_check import DATA, auc, fit_threshold, judge_scores, load_rows, metrics, overlap_scores  # noqa: E402


def align_scores(rows: Sequence[dict]) -> tuple[list[float], list[float]]:
    """(whole-summary, best-sentence) BERTScore-style recall of each row's fact (see the docstring)."""
    from engine.judge.freetext import word_weight
    from engine.knowledge.embed import get_embedder
    from engine.text.lexicon import STOPWORDS
    from engine.text.sentences import split_sentences

    embedder = get_embedder()
    sentences = {r["answer"]: split_sentences(r["answer"]) or [r["answer"]] for r in rows}
    texts = sorted({r["criterion"] for r in rows} | set(sentences) | {s for ss in sentences.values() for s in ss})
    vectors = dict(zip(texts, embedder.token_vectors(texts), strict=True))

    def fact_words(pieces: list[str]) -> list[tuple[str, list[int]]]:
        words: list[list] = []
        for k, p in enumerate(pieces):
            if p.startswith("##") and words:
                words[-1][0] += p[2:]
                words[-1][1].append(k)
            else:
                words.append([p, [k]])
        return [(w, ks) for w, ks in words if w.isalnum() and w not in STOPWORDS]

    def recall(fact: str, target: str) -> float:
        pieces, fv = vectors[fact]
        tv = vectors[target][1]
        words = fact_words(pieces)
        if not words or not len(tv):
            return 0.0
        best = (fv @ tv.T).max(axis=1)
        weights = np.array([word_weight(w) for w, _ in words])
        return float((weights * np.array([best[ks].mean() for _, ks in words])).sum() / weights.sum())

    whole = [recall(r["criterion"], r["answer"]) for r in rows]
    sent = [max(recall(r["criterion"], s) for s in sentences[r["answer"]]) for r in rows]
    return whole, sent


def logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, steps: int = 50) -> np.ndarray:
    """Weights (intercept first) of an L2-regularised logistic regression, by Newton's method."""
    x = np.c_[np.ones(len(x)), x]
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-x @ w))
        grad = x.T @ (p - y) + l2 * w
        hess = (x.T * (p * (1 - p))) @ x + l2 * np.eye(len(w))
        w -= np.linalg.solve(hess, grad)
    return w


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", type=Path, default=DATA)
    ap.add_argument("--limit", type=int, default=0, help="only the first N articles (a quick look)")
    args = ap.parse_args(argv)
    if not args.file.exists():
        raise SystemExit(f"{args.file}: not found; pass the REALSumm file (realsumm_scu.jsonl)")
    rows = load_rows(args.file)
    if args.limit:
        keep = set(sorted({r.get("example") for r in rows}, key=str)[: args.limit])
        rows = [r for r in rows if r.get("example") in keep]
    start = time.perf_counter()
    scores = {"overlap": overlap_scores(rows), "judge": judge_scores(rows)[1]}
    scores["align"], scores["align/sent"] = align_scores(rows)
    human = np.array([r["human"] for r in rows], dtype=float)
    dev = np.array([r["half"] == "dev" for r in rows])
    x = np.array([scores[k] for k in ("overlap", "judge", "align", "align/sent")]).T
    mu, sd = x[dev].mean(axis=0), x[dev].std(axis=0) + 1e-9
    w = logistic((x[dev] - mu) / sd, human[dev])
    scores["combined"] = list(np.c_[np.ones(len(x)), (x - mu) / sd] @ w)
    test = ~dev
    h_test = [bool(h) for h in human[test]]
    print(f"{args.file.name}: {len(rows)} rows, test half {int(test.sum())} (base rate {human[test].mean():.3f}); "
          f"{time.perf_counter() - start:.0f} s")
    print(f"{'scorer':12} {'kappa@dev-fit':>14} {'kappa@best':>11} {'auc':>6}")
    for name, s in scores.items():
        s = np.asarray(s, dtype=float)
        t_dev = fit_threshold(list(s[dev]), [bool(h) for h in human[dev]])
        k_dev = metrics(list(s[test] >= t_dev), h_test)["kappa"]
        t_best = fit_threshold(list(s[test]), h_test)
        k_best = metrics(list(s[test] >= t_best), h_test)["kappa"]
        print(f"{name:12} {k_dev:14.3f} {k_best:11.3f} {auc(list(s[test]), h_test):6.3f}")
    print("combined weights (standardised overlap, judge, align, align/sent): "
          + ", ".join(f"{v:+.2f}" for v in w[1:]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
