"""The LLM entity extractor against the real local OpenAI-compatible fake server."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

from engine.knowledge.entities import LLMEntityExtractor
from engine.knowledge.graph import build_graph
from engine.knowledge.kb import build_kb
from engine.llm import LLMClient
from engine.store import Store

FIXTURES = Path(__file__).parent / "fixtures" / "kb"
_TEXT = re.compile(r"^Text (\d+): (.*?)(?=\n\nText \d+: |\Z)", re.MULTILINE | re.DOTALL)


def label(body: dict) -> str:
    """A scripted kernel: every capitalised word of each numbered text is an entity."""
    prompt = next(m["content"] for m in body["messages"] if "Text list:" in m["content"])
    texts = _TEXT.findall(prompt.split("Text list:\n", 1)[1])
    data = [{"index": int(n), "entity_list": [{"entity_text": w, "entity_type": "NAME"}
                                              for w in dict.fromkeys(re.findall(r"\b[A-Z][a-z]+\b", t))]}
            for n, t in texts]
    return json.dumps({"labeled_data": data})


def _kb(tmp_path):
    src = tmp_path / "graph"
    shutil.copytree(FIXTURES / "graph", src)
    home = tmp_path / "home"
    store = Store(home / "viva.db")
    build_kb(store, home, "g", [src], chunk_chars=60, overlap=0)
    return store


def test_llm_extractor_batches_chunks_and_builds_the_graph(tmp_path, fake_openai, endpoint):
    store = _kb(tmp_path)
    fake_openai.default = label
    client = LLMClient(store, endpoint, role="kernel")
    stats = build_graph(store, "g", extractor=LLMEntityExtractor(client, batch_size=2))
    assert fake_openai.count() == 3  # 5 chunks, 2 per call
    first = fake_openai.chat_requests()[0]
    assert "labeled_data" in first.text and "Text 1: " in first.text and "Text 3: " not in first.text
    names = {r["name"] for r in store.query("SELECT name FROM entities")}
    assert names == {"Marie", "Curie", "Paris", "Pierre", "Polonium", "The", "Great", "Wall", "China", "Ming"}
    assert stats.extractor == "llm:fake-model" and stats.entities == 10

    # Rebuilding asks nothing new: the client's cache answers.
    build_graph(store, "g", extractor=LLMEntityExtractor(LLMClient(store, endpoint, role="kernel"), batch_size=2))
    assert fake_openai.count() == 3
    store.close()


def test_a_reply_missing_a_text_is_re_asked(tmp_path, fake_openai, endpoint):
    store = _kb(tmp_path)
    incomplete = json.dumps({"labeled_data": [{"index": 1, "entity_list": [{"entity_text": "Marie Curie"}]}]})
    fake_openai.push(incomplete)
    fake_openai.default = label
    extractor = LLMEntityExtractor(LLMClient(store, endpoint, role="kernel"), batch_size=5)
    entities = asyncio.run(extractor.extract(["Marie Curie lived in Paris.", "Pierre Curie too."]))
    assert entities == [["Marie", "Curie", "Paris"], ["Pierre", "Curie"]]
    requests = fake_openai.chat_requests()
    assert len(requests) == 2 and "no element for text(s) [2]" in requests[1].text
    store.close()


def test_cli_graph_uses_the_configured_kernel_unless_offline(tmp_path, fake_openai):
    from click.testing import CliRunner

    from tui.cli import main

    store = _kb(tmp_path)
    store.close()
    fake_openai.default = label
    config = tmp_path / "viva.yaml"
    config.write_text(f"kernel:\n  base_url: {fake_openai.base_url}\n  model: fake-model\n  timeout: 5\n",
                      encoding="utf-8")
    root = ["--home", str(tmp_path / "home"), "--config", str(config)]
    graph = ["kb", "graph", "g", "--json"]
    result = CliRunner().invoke(main, [*root, *graph, "--batch-size", "5"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["extractor"] == "llm:fake-model" and fake_openai.count() == 1
    result = CliRunner().invoke(main, [*root, *graph, "--offline"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["extractor"] == "offline" and fake_openai.count() == 1

    fake_openai.default = {"status": 400, "message": "model not found"}
    result = CliRunner().invoke(main, [*root, "--no-cache", *graph, "--batch-size", "4"])
    assert result.exit_code == 1 and "Error: " in result.output and "fake-model" in result.output
