"""Shared fixtures: a temp data home, a store, and the real local OpenAI-compatible fake server."""

from __future__ import annotations

import pytest

from engine.config import ModelConfig
from engine.store import Store
from tests.fakes.openai_server import FakeOpenAI


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh data home; VIVA_HOME points at it so CLI invocations use it too."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("VIVA_HOME", str(path))
    return path


@pytest.fixture
def store(home):
    s = Store(home / "viva.db")
    yield s
    s.close()


@pytest.fixture
def fake_openai():
    """A real HTTP server on 127.0.0.1 (random port) answering from a script. The context sizes the client
    knew or learned are forgotten after it (a later server may get the same port)."""
    from engine.llm.client import forget_contexts

    with FakeOpenAI() as server:
        yield server
    forget_contexts()


@pytest.fixture
def endpoint(fake_openai):
    """A model config pointing at the fake server, with quick retries."""
    return ModelConfig(base_url=fake_openai.base_url, model="fake-model", timeout=5.0, max_retries=3,
                       price_in=1.0, price_out=2.0)
