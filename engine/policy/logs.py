"""Logged adaptive sessions read back from a store: what calibration and the real-engine evaluation use.

A session is kept when its protocol is ``adaptive``, its status ``finished`` or ``interrupted`` and it
has at least two answered, scored turns. Per turn ``t`` it gives the score ``s_t``, ``Δs_t`` (the
logged one, else ``s_t − s_{t−1}``; NaN at ``t = 0``), ``cos_t`` (NaN when not logged), the action
that produced the turn (index into ``features.ACTIONS``; −1 at ``t = 0`` and for an evaluator's own
question) and whether the policy chose it (``turns.actor = 'policy'``) rather than a human.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.policy.features import ACTIONS
from engine.store import Store


@dataclass
class LoggedSession:
    """One logged session, turn by turn (arrays of length ``len(scores)``)."""

    scores: np.ndarray
    deltas: np.ndarray
    cos: np.ndarray
    actions: np.ndarray
    """Producing action per turn: 0 follow-up, 1 challenge, −1 at t = 0 or for any other question."""
    by_policy: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    """True where the policy chose the turn's action (False at t = 0 and for human choices)."""
    session_id: int = 0
    target: str = ""
    policy: str = ""
    policy_version: str = ""
    turns: int = 0
    """T the session was configured with (its number of turns when the config does not say)."""
    criteria: int = 0
    """Scored criteria (point and code kinds) of the session's rubric version; 0 when unknown."""
    windowed: bool | None = None
    """Whether the item asks one criterion per question (an activated static item: its meta lists
    ``followups``); None when the session has no item."""


def open_store(path: str | Path) -> Store:
    """Open an existing store file (or data home folder) for reading sessions.

    Raises:
        FileNotFoundError: nothing at ``path``; the message names it and what to pass instead.
    """
    p = Path(path)
    if not (p.is_file() or (p.is_dir() and (p / "viva.db").is_file())):
        raise FileNotFoundError(f"{p}: no viva store there; pass the viva.db file of a data home "
                                "(or the home folder) that holds logged sessions")
    return Store(p)


def store_files(path: str | Path) -> list[Path]:
    """The store files at ``path``: a ``viva.db`` file, a data home holding one, or a folder of data
    homes (what ``bench/validity.py --keep DIR`` leaves: one home per source).

    Raises:
        FileNotFoundError: none there; the message names ``path`` and what to pass instead.
    """
    p = Path(path)
    if p.is_file():
        return [p]
    if (p / "viva.db").is_file():
        return [p / "viva.db"]
    found = sorted(q / "viva.db" for q in p.iterdir() if (q / "viva.db").is_file()) if p.is_dir() else []
    if not found:
        raise FileNotFoundError(f"{p}: no viva store there; pass the viva.db file of a data home, the home "
                                "folder, or a folder of homes (bench/validity.py --keep DIR)")
    return found


def load_store_sessions(path: str | Path, policy_versions: Iterable[str] | None = None
                        ) -> dict[str, list[LoggedSession]]:
    """:func:`load_sessions` over every store at ``path`` (:func:`store_files`), merged by target.

    Raises:
        FileNotFoundError: no store at ``path``.
    """
    out: dict[str, list[LoggedSession]] = {}
    for file in store_files(path):
        store = open_store(file)
        try:
            for target, group in load_sessions(store, policy_versions=policy_versions).items():
                out.setdefault(target, []).extend(group)
        finally:
            store.close()
    return out


def load_sessions(store: Store, policy_versions: Iterable[str] | None = None,
                  policies: Iterable[str] | None = None) -> dict[str, list[LoggedSession]]:
    """Logged adaptive sessions grouped by target (see the module docstring for which ones).

    Args:
        store: the store.
        policy_versions: keep only sessions run with one of these ``sessions.policy_version`` values.
        policies: keep only sessions run with one of these ``sessions.policy`` names.
    """
    rows = store.query(
        "SELECT s.id AS session, s.target, s.policy, s.policy_version, s.config, s.rubric_version_id, "
        "i.meta AS item_meta, s.item_id, t.idx, t.action, t.actor, t.score, t.delta, t.cos "
        "FROM sessions s JOIN turns t ON t.session_id = s.id LEFT JOIN items i ON i.id = s.item_id "
        "WHERE s.protocol = 'adaptive' AND s.status IN ('finished', 'interrupted') "
        "AND t.answer IS NOT NULL AND t.score IS NOT NULL ORDER BY s.id, t.idx"
    )
    versions = None if policy_versions is None else set(policy_versions)
    names = None if policies is None else set(policies)
    grouped: dict[int, list[dict]] = {}
    for r in rows:
        if versions is not None and r["policy_version"] not in versions:
            continue
        if names is not None and r["policy"] not in names:
            continue
        grouped.setdefault(r["session"], []).append(r)
    sizes = {r["rubric_version_id"]: r["n"] for r in store.query(
        "SELECT rubric_version_id, COUNT(*) AS n FROM criteria WHERE kind != 'deduction' GROUP BY rubric_version_id")}
    out: dict[str, list[LoggedSession]] = {}
    for sid, turns in grouped.items():
        if len(turns) < 2:
            continue
        scores = np.array([t["score"] for t in turns], dtype=np.float64)
        deltas = np.array([np.nan if t["delta"] is None else t["delta"] for t in turns], dtype=np.float64)
        deltas[1:] = np.where(np.isnan(deltas[1:]), np.diff(scores), deltas[1:])
        deltas[0] = np.nan
        cos = np.array([np.nan if t["cos"] is None else t["cos"] for t in turns], dtype=np.float64)
        actions = np.array([ACTIONS.index(t["action"]) if (i and t["action"] in ACTIONS) else -1
                            for i, t in enumerate(turns)], dtype=np.int64)
        by_policy = np.array([bool(i) and t["actor"] == "policy" and t["action"] in ACTIONS
                              for i, t in enumerate(turns)], dtype=bool)
        first = turns[0]
        out.setdefault(first["target"], []).append(LoggedSession(
            scores, deltas, cos, actions, by_policy, int(sid), first["target"], first["policy"] or "",
            first["policy_version"] or "", _configured_turns(first["config"], len(turns)),
            int(sizes.get(first["rubric_version_id"], 0)), _windowed(first["item_meta"], first["item_id"])))
    return out


def _windowed(meta: str | None, item_id: int | None) -> bool | None:
    if item_id is None or meta is None:
        return None
    try:
        return bool(json.loads(meta).get("followups"))
    except (ValueError, AttributeError):
        return None


def _configured_turns(config: str | None, fallback: int) -> int:
    try:
        value = json.loads(config or "{}").get("turns")
    except (ValueError, AttributeError):
        value = None
    return int(value) if isinstance(value, int) and value >= 2 else fallback
