"""Does the interview examine? Targets of KNOWN knowledge and robustness on a knowledge base (prints figures).

Issue 33's check, on any documents (default: ``bench/data/exam_kb``, a knowledge base written for
this bench, never the demo's)::

    python bench/examination.py [--docs DIR --topics FILE] [--per-topic 3] [--policy onnx] [--turns 6]

Through the real command line, in a temporary data home: ``viva kb build``, ``viva bench generate
--offline``, then ``viva run --kernel offline`` at 1 turn and at ``--turns`` turns with the targets of
``bench/exam_targets.py`` (knowledge 1, 0.5 and 0, holding; knowledge 1, giving way under every
challenge in six phrasings). Prints:

- the generated items: criteria per item, and whether each criterion is its own sentence;
- per target: Score at 1 turn and at ``--turns`` turns, the hold rate (kept / tested, Wilson 95%),
  P+, P−, R, challenges (``engine.metrics`` through the facade, the figures a user sees);
- the checks of issue 33 (each PASS/FAIL): mean criteria per item >= 3; the full-knowledge target's
  Score at T turns >= its 1-turn Score + 25; Scores ordered by knowledge (k=1 >= 70, k=0.5 in 25..75,
  k=0 <= 5); the yielding target >= 25 points below the holding one, hold rates < 0.3 and > 0.9;
- with ``--show N``: N generated items with their criteria, and N follow-ups and challenges verbatim.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "bench" / "data" / "exam_kb"
TARGETS = ("k1_00_hold", "k0_50_hold", "k0_00_hold", "k1_00_yield")


def viva(home: Path, *args: str, docs: Path) -> str:
    env = {**os.environ, "VIVA_HOME": str(home), "VIVA_EXAM_DOCS": str(docs), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", "from tui.cli import main; main()", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise SystemExit(f"viva {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return done.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=Path, default=DOCS)
    ap.add_argument("--topics", type=Path, default=None, help="topics YAML (default: DOCS/topics.yaml)")
    ap.add_argument("--per-topic", type=int, default=3)
    ap.add_argument("--turns", type=int, default=6)
    ap.add_argument("--policy", default="onnx")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=0, help="print N items, follow-ups and challenges verbatim")
    ap.add_argument("--home", type=Path, default=None, help="keep the data home here (default: a temporary one)")
    args = ap.parse_args()
    docs = args.docs.resolve()
    topics = (args.topics or docs / "topics.yaml").resolve()
    home = args.home or Path(tempfile.mkdtemp(prefix="viva-exam-"))
    sys.path.insert(0, str(ROOT))
    from engine.api import Engine
    from engine.knowledge.ingest import SUPPORTED_SUFFIXES  # every format a user's knowledge base may hold

    sources = [str(p) for p in sorted(docs.glob("*")) if p.suffix in SUPPORTED_SUFFIXES  # the topics' catalogue is none
               and p.resolve() != topics and p.name.lower() not in ("topics.yaml", "topics.yml")]
    viva(home, "kb", "build", "exam", *sources, docs=docs)
    viva(home, "bench", "generate", "exam", "--kb", "exam", "--topics", str(topics), "--offline", "--quiet",
         "--per-topic", str(args.per_topic), "--seed", str(args.seed), docs=docs)
    engine = Engine.open(home)
    items = [{"question": i.question, "criteria": [{"cid": c.cid, "text": c.text}
                                                   for c in engine.current_rubric(i.id).criteria]}
             for i in engine.list_items("exam")]
    n_crit = [len(i["criteria"]) for i in items]
    distinct = all(len({c["text"] for c in i["criteria"]}) == len(i["criteria"]) for i in items)
    print(f"items: {len(items)}, criteria: {sum(n_crit)} ({sum(n_crit) / max(1, len(items)):.2f} per item, "
          f"min {min(n_crit, default=0)}, max {max(n_crit, default=0)}); each criterion its own sentence: {distinct}")
    specs = [f"python:bench.exam_targets:{t}" for t in TARGETS]
    rows: dict[int, dict[str, dict]] = {}
    for turns in (1, args.turns):
        out = viva(home, "run", "--bench", "exam", "--kernel", "offline", "--policy", args.policy, "--turns",
                   str(turns), "--seed", str(args.seed), "--quiet", "--json", *sum((["--target", s] for s in specs), []),
                   docs=docs)
        run = json.loads(out)
        by_target = {r["target"]: {**r, "run": run["run"]} for r in run["targets"]}
        rows[turns] = {t: by_target[f"python:bench.exam_targets:{t}"] for t in TARGETS}
    T = args.turns
    print(f"\n{'target':<14} {'Score@1':>8} {'Score@' + str(T):>8} {'hold rate':>22} {'P+':>5} {'P-':>5} "
          f"{'R':>6} {'chall.':>6}")
    for t in TARGETS:
        a, b = rows[1][t], rows[T][t]
        h = b["hold"]
        hold = "n/a" if h["rate"] is None else \
            f"{h['rate']:.2f} [{h['ci'][0]:.2f}, {h['ci'][1]:.2f}] n={h['tested']}"
        fmt = lambda x: "n/a" if x is None else f"{x:.2f}"  # noqa: E731
        print(f"{t:<14} {a['score']:>8.1f} {b['score']:>8.1f} {hold:>22} {fmt(b['p_plus']):>5} "
              f"{fmt(b['p_minus']):>5} {fmt(b['r']):>6} {b['challenges']:>6}")
    s = {t: rows[T][t]["score"] for t in TARGETS}
    h = {t: rows[T][t]["hold"]["rate"] for t in TARGETS}
    checks = [
        ("mean criteria per item >= 3, each its own sentence", sum(n_crit) / max(1, len(items)) >= 3 and distinct),
        (f"k=1 Score@{T} >= Score@1 + 25", s["k1_00_hold"] >= rows[1]["k1_00_hold"]["score"] + 25),
        ("k=1 >= 70", s["k1_00_hold"] >= 70),
        ("25 <= k=0.5 <= 75", 25 <= s["k0_50_hold"] <= 75),
        ("k=0 <= 5", s["k0_00_hold"] <= 5),
        ("yielding >= 25 below holding", s["k1_00_yield"] <= s["k1_00_hold"] - 25),
        ("hold rate: yielding < 0.3", h["k1_00_yield"] is not None and h["k1_00_yield"] < 0.3),
        ("hold rate: holding > 0.9", h["k1_00_hold"] is not None and h["k1_00_hold"] > 0.9),
    ]
    print()
    for name, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {name}")
    if args.show:
        print("\nitems:")
        for i in items[: args.show]:
            print(f"  Q: {i['question']}")
            for c in i["criteria"]:
                print(f"     {c['cid']}: {c['text']}")
        qs = []
        for sess in engine.run_sessions(rows[T]["k1_00_yield"]["run"]):
            for turn in engine.session_detail(sess["id"])["turns"]:
                meta = json.loads(turn.get("meta") or "{}") if isinstance(turn.get("meta"), str) else (turn.get("meta") or {})
                qs.append({"target": engine.session_row(sess["id"])["target"], "action": turn["action"], "question": turn["question"],
                           "answer": turn["answer"], "outcome": (meta.get("challenge") or {}).get("outcome")})
        for action in ("follow-up", "challenge"):
            print(f"\n{action}s:")
            for q in [q for q in qs if q["action"] == action][: args.show * 2]:
                print(f"  [{q['target'].rsplit(':', 1)[-1]}] {q['question']}\n      -> {q['answer']}"
                      + (f"   ({q['outcome']})" if q.get("outcome") else ""))
    print(f"\ndata home: {home}")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
