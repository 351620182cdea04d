"""Interventions: the evaluator steps into a session.

A running session is steered through ``control.*`` events that its runner applies at the next step
boundary (so the app, or another terminal, can steer a session running in another process, and a
request survives a restart): pause, resume, force the next action, inject the next question, stop,
switch to a new rubric version. Overriding a verdict needs no runner: it is its own verdict row
(the judge's stays on record) and the scores are recomputed at once.
"""

from __future__ import annotations

from typing import Any

from engine import events as ev
from engine.store import Store

ACTIONS = ("follow-up", "challenge", "end")


class ControlError(ValueError):
    """An intervention that does not apply (unknown session, turn or criterion; bad action)."""


def _session(store: Store, session_id: int) -> dict[str, Any]:
    row = store.one("SELECT * FROM sessions WHERE id = ?", (session_id,))
    if row is None:
        raise ControlError(f"session {session_id} does not exist")
    return row


STEERING = ("pause", "resume", "force", "inject", "stop")
"""The requests that steer the interview itself: refused once the session has ended for good."""


def refusal(status: str | None, kind: str) -> str | None:
    """Why a ``control.<kind>`` request cannot apply to a session in ``status`` (None: it can).

    A session that ended for good (``finished``, ``not_examined``) asks no further question, so a
    written question, a forced action, a pause or a stop would be stored and never applied: they
    are refused instead. A rubric switch still applies (it re-scores stored answers).
    """
    if kind in STEERING and status in ev.FINAL:
        what = {"inject": "a written question", "force": "a forced action", "pause": "a pause",
                "resume": "a resume", "stop": "a stop"}[kind]
        return f"the session has {'finished' if status == 'finished' else 'ended (not examined)'}: " \
               f"{what} would never be applied"
    return None


def request(store: Store, session_id: int, kind: str, **payload: Any) -> int:
    """Append a ``control.<kind>`` event for the session's runner; returns its sequence number.

    The check and the write are one transaction, so a request that arrives after the session
    finished is refused (:class:`ControlError`), never stored.
    """
    with store.transaction():
        row = _session(store, session_id)
        why = refusal(row.get("status"), kind)
        if why is not None:
            raise ControlError(f"session {session_id}: {why}")
        return store.append_event(session_id, ev.CONTROL_PREFIX + kind, payload)


def pause(store: Store, session_id: int) -> int:
    """Ask the runner to pause at its next step boundary; returns the control event's sequence number."""
    return request(store, session_id, "pause")


def resume(store: Store, session_id: int) -> int:
    """Ask a paused runner to carry on; returns the control event's sequence number."""
    return request(store, session_id, "resume")


def stop(store: Store, session_id: int) -> int:
    """Ask the runner to stop the session now: a target answer in flight is cut (its partial text is
    kept), the session becomes ``stopped`` and can be resumed; returns the control event's sequence
    number.
    """
    return request(store, session_id, "stop")


def force(store: Store, session_id: int, action: str) -> int:
    """Force the next action: ``follow-up``, ``challenge`` or ``end`` (end after the current turn)."""
    if action not in ACTIONS:
        raise ControlError(f"unknown action {action!r}; choose one of {', '.join(ACTIONS)}")
    return request(store, session_id, "force", action=action)


def inject(store: Store, session_id: int, question: str) -> int:
    """Ask the evaluator's own question next (recorded with actor ``human``)."""
    if not question.strip():
        raise ControlError("the injected question is empty")
    return request(store, session_id, "inject", question=question.strip())


def switch_rubric(store: Store, session_id: int, version_id: int) -> int:
    """Tell a running session to re-score its stored answers under a new rubric version."""
    return request(store, session_id, "rubric", version_id=version_id)


def override_verdict(store: Store, session_id: int, turn_idx: int, cid: str, met: bool,
                     note: str = "", who: str = "human") -> dict[str, Any]:
    """Override one verdict of a turn; see :func:`engine.interview.overrides.override_verdict`."""
    from engine.interview.overrides import override_verdict as _override
    from engine.interview.session import SessionError

    try:
        return _override(store, session_id, turn_idx, cid, met, note, who)
    except SessionError as exc:
        raise ControlError(str(exc)) from None


def preview_override(store: Store, session_id: int, turn_idx: int, cid: str, met: bool) -> dict[str, Any]:
    """What an override would change, not written; see :func:`engine.interview.overrides.preview_override`."""
    from engine.interview.overrides import preview_override as _preview
    from engine.interview.session import SessionError

    try:
        return _preview(store, session_id, turn_idx, cid, met)
    except SessionError as exc:
        raise ControlError(str(exc)) from None


def undo_override(store: Store, session_id: int, turn_idx: int, cid: str, who: str = "human") -> dict[str, Any]:
    """Take back the latest override of a verdict; see :func:`engine.interview.overrides.undo_override`."""
    from engine.interview.overrides import undo_override as _undo
    from engine.interview.session import SessionError

    try:
        return _undo(store, session_id, turn_idx, cid, who)
    except SessionError as exc:
        raise ControlError(str(exc)) from None


def overrides(store: Store, session_id: int | None = None, run_id: int | None = None) -> list[dict[str, Any]]:
    """The overrides, confirmations and undos of one session or of every session of a run, oldest
    first (:func:`engine.interview.overrides.list_overrides`)."""
    from engine.interview.overrides import list_overrides

    if (session_id is None) == (run_id is None):
        raise ControlError("name one session or one run")
    if session_id is not None:
        _session(store, session_id)
        return list_overrides(store, [session_id])
    if store.one("SELECT id FROM runs WHERE id = ?", (run_id,)) is None:
        raise ControlError(f"run {run_id} does not exist")
    ids = [r["id"] for r in store.query("SELECT id FROM sessions WHERE run_id = ? ORDER BY id", (run_id,))]
    return list_overrides(store, ids)


def evaluator_name(configured: str | None) -> str:
    """Who signs an override: the configured evaluator name, else the OS user, else ``human``."""
    if configured and configured.strip():
        return configured.strip()
    import getpass

    try:
        return getpass.getuser() or "human"
    except Exception:  # no user name in the environment or the password database
        return "human"


class ControlInbox:
    """The runner's side: reads a session's ``control.*`` events and applies them once each.

    Pause, resume, stop, end and rubric switches are acknowledged (an ``intervention`` event) when
    read; a forced action or an injected question waits in :attr:`steer` and is acknowledged with
    the turn it shapes. A control already acknowledged (before a restart) is never applied again.
    """

    def __init__(self, session: Any):
        from engine.interview.protocols.base import Steer

        self.session = session
        self.steer = Steer()
        self.paused = False
        self.stop = False
        self.end_after = False
        self.rubric_version: int | None = None
        self.consumed: set[int] = set()
        self._loaded = False
        self._floor = 0  # controls at or below this sequence number are all consumed
        self._scanned = 0  # events up to this sequence number have been read
        self._known: dict[int, dict[str, Any]] = {}  # control events read and above the floor

    def _rows(self, after: int) -> list[dict[str, Any]]:
        """The session's control events with ``seq > after``, in order.

        Only events written since the last read are scanned (the read also returns the session's
        newest event, whatever its kind, as the new scan horizon): a seq is assigned under the
        write lock, so an event committed later always has a higher seq than every event a read
        saw. Control rows already read are kept (they never change), so a poll costs O(new events),
        not O(the session's events) as a long session's stop watcher otherwise would.
        """
        sid = self.session.sid
        fresh = self.session.store.query(
            "SELECT seq, kind, payload FROM events WHERE session_id = ? AND seq > ? AND (kind LIKE 'control.%' "
            "OR seq = (SELECT MAX(seq) FROM events WHERE session_id = ?)) ORDER BY seq", (sid, self._scanned, sid))
        for row in fresh:
            if row["kind"].startswith("control."):
                self._known[row["seq"]] = row
            self._scanned = max(self._scanned, row["seq"])
        return [row for seq, row in sorted(self._known.items()) if seq > after]

    def _load_consumed(self) -> None:
        if self._loaded:
            return
        from engine.store import loads

        for e in self.session.store.query(
                "SELECT payload FROM events WHERE session_id = ? AND kind = 'intervention'", (self.session.sid,)):
            seq = loads(e["payload"], {}).get("control_seq")
            if seq is not None:
                self.consumed.add(int(seq))
        self._loaded = True

    def has_pending(self, kind: str) -> bool:
        """True when a ``control.<kind>`` event is written but not yet applied."""
        self._load_consumed()
        return any(r["seq"] not in self.consumed and r["kind"] == f"control.{kind}" for r in self._rows(self._floor))

    def _ack(self, seq: int, kind: str, extra: dict[str, Any] | None = None) -> None:
        self.consumed.add(seq)
        self.session.emit(ev.Intervention(seq, kind, dict(extra or {})))

    def poll(self) -> None:
        """Read control events written since the last poll and apply them."""
        from engine.store import loads

        self._load_consumed()
        rows = self._rows(self._floor)
        steer = self.steer
        for row in rows:
            seq = row["seq"]
            if seq in self.consumed:
                continue
            kind = row["kind"].split(".", 1)[1]
            payload = loads(row["payload"], {})
            if kind == "force":
                action = payload.get("action")
                if action == "end":
                    self.end_after = True
                    self._ack(seq, kind, {"action": "end"})
                else:
                    if steer.forced_seq is not None:  # a second forced action replaces the first (said so)
                        self._ack(steer.forced_seq, kind, {"action": steer.forced, "replaced_by": seq})
                    steer.forced, steer.forced_seq = action, seq  # acknowledged with the turn it shapes
                    self.consumed.add(seq)
            elif kind == "inject":
                if steer.injected_seq is not None:  # a second written question replaces the first
                    self._ack(steer.injected_seq, kind, {"replaced_by": seq})
                steer.injected, steer.injected_seq = payload.get("question", ""), seq
                self.consumed.add(seq)
            elif kind == "pause":
                self.paused = True
                self._ack(seq, kind)
                self.session.set_status("paused")
                self.session.emit(ev.SessionPaused())
            elif kind == "resume":
                if self.paused:
                    self.paused = False
                    self.session.set_status("running")
                    self.session.emit(ev.SESSION_RESUMED, {"by": "human"})
                self._ack(seq, kind)
            elif kind == "stop":
                self.stop = True
                self._ack(seq, kind)
            elif kind == "rubric":
                self.rubric_version = int(payload["version_id"])
                self._ack(seq, kind, {"version_id": self.rubric_version})
            else:
                self._ack(seq, kind, {"ignored": True})
        pending = [r["seq"] for r in rows if r["seq"] not in self.consumed]
        if rows:
            self._floor = (min(pending) - 1) if pending else rows[-1]["seq"]
            self._known = {seq: row for seq, row in self._known.items() if seq > self._floor}
