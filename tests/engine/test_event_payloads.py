"""Event payloads are stored as ``dataclasses.asdict`` would give them, and stay independent of the object."""

from __future__ import annotations

import inspect
from dataclasses import asdict

import engine.events as ev


def test_every_payload_stores_what_asdict_gives():
    verdicts = [{"cid": "c1", "met": True, "rationale": "named", "source": "judge"}]
    sample = ev.Verdicts(3, 2, 0.5, -0.25, 0.91, None, False, verdicts, 0.4, [{"cid": "c1", "text": "x"}],
                         summary_delta=None)
    assert sample.as_dict() == asdict(sample)
    started = ev.TurnStarted(4, "Are you sure?", "challenge", "policy", [0.25, 0.75])
    assert started.as_dict() == asdict(started)
    checked = 0
    for cls in vars(ev).values():
        if inspect.isclass(cls) and issubclass(cls, ev.Payload) and cls.as_dict is ev.Payload.as_dict:
            obj = cls()
            assert obj.as_dict() == asdict(obj), cls.__name__
            checked += 1
    assert checked >= 20


def test_stored_form_is_a_copy():
    verdicts = [{"cid": "c1", "rationale": "sk-secret"}]
    payload = ev.Verdicts(1, 1, 1.0, None, None, None, False, verdicts)
    stored = payload.as_dict()
    stored["verdicts"][0]["rationale"] = "[redacted]"
    stored["verdicts"].append({})
    assert payload.verdicts == [{"cid": "c1", "rationale": "sk-secret"}]
