"""Compare the sessions of two viva databases turn by turn (prints differences; exit 1 when any).

For a change that must not move any figure (a faster judge, a cache): run the same sessions on the
code before and after (e.g. ``bench/validity.py ... --keep DIR`` once on each checkout) and compare
the stores. Sessions are matched by id (a run plans them in a deterministic order) and must have the
same target, item and status; every turn must have the same question, answer, action, actor, policy
state and probabilities, score, Δ, cos_t (exact floats) and running summary; every verdict the same
met, in_answer, source and rationale. Timing, token and date columns are not compared.

Run: ``python bench/compare_sessions.py BEFORE/viva.db AFTER/viva.db [--show 5]`` (a data home's
folder works too).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SESSION_COLUMNS = ("target", "item_id", "protocol", "kernel", "policy", "seed", "status", "score")
TURN_COLUMNS = ("question", "answer", "action", "actor", "state", "probs", "score", "delta", "cos", "summary")
VERDICT_COLUMNS = ("met", "in_answer", "source", "rationale")


def snapshot(path: Path) -> dict[tuple, dict[str, Any]]:
    """Every compared value of a database, keyed by (session id,) / (session id, turn idx) /
    (session id, turn idx, criterion id, rubric version)."""
    from engine.store import Store
    from engine.store.texts import fill_summaries

    store = Store(path)
    out: dict[tuple, dict[str, Any]] = {}
    for s in store.query("SELECT * FROM sessions ORDER BY id"):
        out[(s["id"],)] = {c: s[c] for c in SESSION_COLUMNS}
    turns = fill_summaries(store, store.query("SELECT * FROM turns ORDER BY session_id, idx"))
    for t in turns:
        out[(t["session_id"], t["idx"])] = {c: t[c] for c in TURN_COLUMNS}
    for v in store.query("SELECT v.*, t.session_id, t.idx FROM verdicts v JOIN turns t ON t.id = v.turn_id "
                         "ORDER BY t.session_id, t.idx, v.cid, v.id"):
        out[(v["session_id"], v["idx"], v["cid"], v["rubric_version_id"], v["id"])] = {
            c: v[c] for c in VERDICT_COLUMNS}
    store.conn.close()
    return out


def _normalise(snap: dict[tuple, dict[str, Any]]) -> dict[tuple, dict[str, Any]]:
    # verdict row ids differ between databases: number each key's verdicts in order instead
    out: dict[tuple, dict[str, Any]] = {}
    seen: dict[tuple, int] = {}
    for key, row in snap.items():
        if len(key) == 5:
            base = key[:4]
            seen[base] = seen.get(base, 0) + 1
            key = (*base, seen[base])
        out[key] = row
    return out


def compare(a: Path, b: Path, show: int = 5) -> int:
    """Print the differences between two databases' sessions; returns their number."""
    left, right = _normalise(snapshot(a)), _normalise(snapshot(b))
    kinds = {1: "sessions", 2: "turns", 5: "verdicts"}
    diffs: list[str] = []
    for key in sorted(set(left) | set(right), key=lambda k: tuple(str(x) for x in k)):
        x, y = left.get(key), right.get(key)
        if x is None or y is None:
            diffs.append(f"{key}: only in {'the second' if x is None else 'the first'}")
        elif x != y:
            cols = [c for c in x if x[c] != y[c]]
            diffs.append(f"{key}: " + "; ".join(f"{c}: {x[c]!r} != {y[c]!r}" for c in cols))
    counts = {name: sum(1 for k in left if len(k) == n) for n, name in kinds.items()}
    print(f"{a} vs {b}: " + ", ".join(f"{v} {k}" for k, v in counts.items()) + f"; {len(diffs)} differences")
    for line in diffs[:show]:
        print("  " + line[:400])
    return len(diffs)


def main() -> None:
    """Command line: two databases (or data homes), exit status 1 when they differ."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("first", type=Path)
    ap.add_argument("second", type=Path)
    ap.add_argument("--show", type=int, default=5, help="differences printed (default 5)")
    args = ap.parse_args()
    paths = [p / "viva.db" if p.is_dir() else p for p in (args.first, args.second)]
    for p in paths:
        if not p.is_file():
            raise SystemExit(f"{p}: no such database (give a viva.db or a data home holding one)")
    sys.exit(1 if compare(*paths, show=args.show) else 0)


if __name__ == "__main__":
    main()
