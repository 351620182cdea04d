"""A real OpenAI-compatible HTTP server on 127.0.0.1 that answers from a script.

It serves ``GET /v1/models`` and ``POST /v1/chat/completions`` (streaming and not). Replies come
from, in order: the FIFO queue (``push``), the first matching rule (``rule``), the default. A reply is
a string (the content), a dict, or a callable ``f(request_body) -> reply``. A dict may carry:

- ``content``: the assistant text;
- ``status`` (+ ``retry_after``, ``message``): an HTTP error instead of an answer;
- ``delay``: seconds to wait before answering (past the client timeout = a timeout fault);
- ``truncate``: for streams, send part of the answer then drop the connection;
- ``token_delay``: seconds between streamed pieces;
- ``endless``: for streams, send pieces without end until the client hangs up;
- ``body``: for a non-streamed request, this JSON object is sent as the whole 200 response, verbatim
  (servers that differ from OpenAI's shape: content parts, no usage, no choices);
- ``raw``: bytes sent as the whole 200 response body (not UTF-8, nested too deep...).

``refuse_formats``: ``response_format`` types the server refuses as llama-cpp-python does (HTTP
``refuse_status`` naming ``response_format``), e.g. ``{"json_schema"}``. ``context``: a context length
reported in ``/v1/models`` (vLLM's ``max_model_len``; not with ``report_context = False``), and a prompt
longer than it (by ``count_tokens``) plus ``max_tokens`` is refused with HTTP 400 in the ``overflow_wording``
(:data:`OVERFLOW_WORDINGS`: llama-cpp-python's own words by default, its server's, OpenAI's, vLLM's, or
llama-server's that names no size); with ``drop_overflowing_streams`` an overflowing stream is dropped
before its first piece instead, as llama-cpp-python's server does.

Streams end with a ``usage`` chunk when the request asks for it (``stream_options.include_usage``, as
OpenAI and vLLM do). ``stream_usage = False``: never (llama-cpp-python sends no usage in streams).
``refuse_stream_options``: a request carrying ``stream_options`` is refused with HTTP 400 naming it.

Every request is logged (``requests``) with its arrival time, so tests assert on what reached the
server: counts ("the cache answered"), and gaps ("the Retry-After wait was honoured").
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = str | dict[str, Any] | Callable[[dict[str, Any]], Any]


@dataclass
class LoggedRequest:
    path: str
    body: dict[str, Any]
    time: float
    headers: dict[str, str]

    @property
    def messages(self) -> list[dict[str, str]]:
        return self.body.get("messages", [])

    @property
    def text(self) -> str:
        """All message contents joined: what a rule matches against."""
        return "\n".join(str(m.get("content", "")) for m in self.messages)


@lru_cache(maxsize=1 << 14)
def count_tokens(text: str) -> int:
    """A rough, deterministic token count (words and CJK characters); memoised: a conversation's messages come
    back in every later request, and counting them again made the fake's work grow with the conversation
    (time a benchmark of the engine's per-turn cost would otherwise count as the engine's)."""
    return len(re.findall(r"[\u4e00-\u9fff]|\w+|[^\w\s]", text))


OVERFLOW_WORDINGS: dict[str, str] = {
    "llama-cpp": "Requested tokens ({total}) exceed context window of {context}",
    "llama-cpp-server": ("This model's maximum context length is {context} tokens. However, you requested {total} "
                         "tokens ({prompt} in the messages, {max_tokens} in the completion). Please reduce the length "
                         "of the messages or completion."),
    "openai": ("This model's maximum context length is {context} tokens. However, your messages resulted in "
               "{total} tokens. Please reduce the length of the messages."),
    "vllm": ("This model's maximum context length is {context} tokens and your request has {prompt} input tokens "
             "({max_tokens} > {context} - {prompt})"),
    "unsized": "the request exceeds the available context size, try increasing it",
}
"""How a server words the 400 for a prompt that does not fit its context (``FakeOpenAI.overflow_wording``):
``{context}``, ``{total}`` (prompt and ``max_tokens``), ``{prompt}`` and ``{max_tokens}`` are filled in."""


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # many concurrent sessions connect at once
    daemon_threads = True


class FakeOpenAI:
    """The scripted server. Use as a context manager or call ``start()``/``stop()``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, model: str = "fake-model"):
        self.model = model
        self.requests: list[LoggedRequest] = []
        self._queue: deque[Reply] = deque()
        self._rules: list[tuple[Callable[[LoggedRequest], bool], Reply]] = []
        self.default: Reply | None = None
        self.refuse_formats: set[str] = set()
        self.refuse_status = 400
        self.context: int | None = None
        self.report_context = True
        """False: the ``context`` is enforced but not reported (the client is told by ``context:``, or learns it
        from the overflow's 400)."""
        self.overflow_wording = "llama-cpp"
        """The key of :data:`OVERFLOW_WORDINGS` the 400 for an overflow is worded in."""
        self.drop_overflowing_streams = False
        """True: a streamed request over the context is answered as llama-cpp-python's server does, a stream
        opened (200) and dropped before its first piece, with no word of why (only a plain request gets the 400)."""
        self.stream_usage = True
        self.refuse_stream_options = False
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        """The most chat requests being answered at the same moment (concurrency, not timing)."""
        self.disconnects = 0
        """Answers the client hung up on before they were complete (a cancelled stream)."""
        self.pieces_sent: list[int] = []
        """For each streamed answer, how many pieces were written before it ended or was cut."""
        server = self
        handler = type("Handler", (_Handler,), {"fake": server})
        self.httpd = _Server((host, port), handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://{self.httpd.server_address[0]}:{self.port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True, name="fake-openai")
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- script -----------------------------------------------------------------------------
    def push(self, *replies: Reply) -> None:
        """Queue replies answered in order, before any rule."""
        with self._lock:
            self._queue.extend(replies)

    def rule(self, match: str | Callable[[LoggedRequest], bool], reply: Reply) -> None:
        """Answer requests whose text matches the regex (or predicate) with ``reply``."""
        if isinstance(match, str):
            pattern = re.compile(match, re.DOTALL)
            self._rules.append((lambda r: bool(pattern.search(r.text)), reply))
        else:
            self._rules.append((match, reply))

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self._rules.clear()
            self.requests.clear()
            self.default = None

    def count(self, path: str = "/v1/chat/completions") -> int:
        return sum(1 for r in self.requests if r.path == path)

    def chat_requests(self) -> list[LoggedRequest]:
        return [r for r in self.requests if r.path == "/v1/chat/completions"]

    def _pick(self, req: LoggedRequest) -> dict[str, Any] | None:
        with self._lock:
            reply: Reply | None = self._queue.popleft() if self._queue else None
        if reply is None:
            for match, candidate in self._rules:
                if match(req):
                    reply = candidate
                    break
        if reply is None:
            reply = self.default
        while callable(reply):
            reply = reply(req.body)
        if reply is None:
            return None
        return {"content": reply} if isinstance(reply, str) else dict(reply)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAI
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go in separate writes: no 40 ms delayed-ACK stalls

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        self.fake.requests.append(LoggedRequest(self.path, {}, time.time(), {k.lower(): v for k, v in self.headers.items()}))
        if self.path.rstrip("/") == "/v1/models":
            entry = {"id": self.fake.model, "object": "model", "created": 0, "owned_by": "fake"}
            if self.fake.context and self.fake.report_context:
                entry["max_model_len"] = self.fake.context
            self._send_json(200, {"object": "list", "data": [entry]})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length) if length else b"{}"
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._send_json(400, {"error": {"message": "request body is not JSON"}})
            return
        req = LoggedRequest(self.path, body, time.time(), {k.lower(): v for k, v in self.headers.items()})
        self.fake.requests.append(req)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        if self.fake.refuse_stream_options and "stream_options" in body:
            self._send_json(400, {"error": {"message": (
                "1 validation error: ('body', 'stream_options'): Extra inputs are not permitted"), "type": "fake"}})
            return
        fmt = (body.get("response_format") or {}).get("type")
        if fmt in self.fake.refuse_formats:
            self._send_json(self.fake.refuse_status, {"error": {"message": (
                "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                f"'msg': \"Input should be 'text' or 'json_object'\", 'input': '{fmt}'}}"), "type": "fake"}})
            return
        if self.fake.context:
            prompt = sum(count_tokens(str(m.get("content", ""))) for m in body.get("messages", []))
            max_tokens = int(body.get("max_tokens") or 0)
            if prompt + max_tokens > self.fake.context and body.get("stream") and self.fake.drop_overflowing_streams:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                return
            if prompt + max_tokens > self.fake.context:
                self._send_json(400, {"error": {"message": OVERFLOW_WORDINGS[self.fake.overflow_wording].format(
                    context=self.fake.context, total=prompt + max_tokens, prompt=prompt, max_tokens=max_tokens),
                    "type": "invalid_request_error", "code": "context_length_exceeded"}})
                return
        reply = self.fake._pick(req)
        if reply is None:
            self._send_json(400, {"error": {"message": "fake server: no scripted reply for this request"}})
            return
        with self.fake._lock:
            self.fake.in_flight += 1
            self.fake.max_in_flight = max(self.fake.max_in_flight, self.fake.in_flight)
        try:
            if reply.get("delay"):
                time.sleep(float(reply["delay"]))
            if reply.get("status"):
                headers = {}
                if reply.get("retry_after") is not None:
                    headers["Retry-After"] = str(reply["retry_after"])
                self._send_json(int(reply["status"]), {"error": {
                    "message": reply.get("message", f"scripted status {reply['status']}"),
                    "type": "fake"}}, headers)
                return
            if reply.get("body") is not None and not body.get("stream"):
                self._send_json(200, reply["body"])
                return
            if reply.get("raw") is not None and not body.get("stream"):
                raw_body = reply["raw"]
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw_body)))
                self.end_headers()
                self.wfile.write(raw_body)
                return
            content = str(reply.get("content", ""))
            if body.get("stream"):
                self._stream(body, content, reply)
            else:
                self._complete(body, content)
        except (BrokenPipeError, ConnectionResetError):
            with self.fake._lock:
                self.fake.disconnects += 1
            return
        finally:
            with self.fake._lock:
                self.fake.in_flight -= 1

    def _usage(self, body: dict[str, Any], content: str) -> dict[str, int]:
        t_in = sum(count_tokens(str(m.get("content", ""))) for m in body.get("messages", []))
        t_out = count_tokens(content)
        return {"prompt_tokens": t_in, "completion_tokens": t_out, "total_tokens": t_in + t_out}

    def _complete(self, body: dict[str, Any], content: str) -> None:
        self._send_json(200, {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", self.fake.model),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": self._usage(body, content),
        })

    def _stream(self, body: dict[str, Any], content: str, reply: dict[str, Any]) -> None:
        """Server-sent events in HTTP/1.1 chunked transfer encoding on a kept-alive connection, as
        OpenAI-compatible servers send them; a ``truncate`` reply drops the connection mid-answer."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        if reply.get("truncate"):
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        pieces = re.findall(r"\S+\s*|\s+", content) or [""]
        if reply.get("truncate"):
            pieces = pieces[: max(1, len(pieces) // 2)]
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": body.get("model", self.fake.model)}

        def write(data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def send(obj: dict[str, Any]) -> None:
            write(f"data: {json.dumps(obj)}\n\n".encode())

        delay = float(reply.get("token_delay", 0))
        if reply.get("endless"):  # a stream that never ends (until the client hangs up)
            pieces = iter(lambda: "more ", None)  # type: ignore[assignment]
        slot = len(self.fake.pieces_sent)
        self.fake.pieces_sent.append(0)
        for i, piece in enumerate(pieces):
            delta = {"content": piece} if i else {"role": "assistant", "content": piece}
            send({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
            self.fake.pieces_sent[slot] = i + 1
            if delay:
                time.sleep(delay)
        if reply.get("truncate"):
            return  # drop the connection: no finish_reason, no [DONE], no last chunk
        send({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if self.fake.stream_usage and (body.get("stream_options") or {}).get("include_usage"):
            send({**base, "choices": [], "usage": self._usage(body, content)})
        write(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def sampled_reply(answers: list[str]) -> Callable[[dict[str, Any]], str]:
    """A reply that behaves like a sampled model: at ``temperature`` 0 (or without one) always the first
    answer (greedy); above 0 one of ``answers`` drawn by a generator seeded with the request's ``seed``,
    the system prompt and the question (so one seed gives one answer, and different seeds differ)."""
    import random

    def reply(body: dict[str, Any]) -> str:
        if not body.get("temperature"):
            return answers[0]
        messages = body.get("messages") or []
        system = next((m["content"] for m in messages if m.get("role") == "system"), "")
        question = messages[-1]["content"] if messages else ""
        return random.Random(f"{body.get('seed')}|{system}|{question}").choice(answers)

    return reply


def main() -> None:
    """Run the server from a shell: ``python -m tests.fakes.openai_server --port 8765 --echo``."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--reply", default="This is a scripted answer.", help="default reply content")
    parser.add_argument("--sampled", action="append", metavar="ANSWER",
                        help="answer like a sampled model (repeatable): at temperature 0 the first ANSWER, above 0 "
                             "one drawn by the request's seed, system prompt and question (sampled_reply)")
    args = parser.parse_args()
    server = FakeOpenAI(port=args.port)
    server.default = sampled_reply(args.sampled) if args.sampled else args.reply
    print(server.base_url, flush=True)
    server.httpd.serve_forever()


if __name__ == "__main__":
    main()


GOLD_JUDGE_PROMPT = "against accepted answers"
"""A phrase of the LLM gold judge's system prompts (engine/judge/gold_llm.py): route such requests with
``fake.rule(GOLD_JUDGE_PROMPT, gold_judge_reply)``."""


def gold_judge_reply(body: dict[str, Any]) -> str:
    """A scripted LLM gold judge: correct iff an accepted answer occurs (case-insensitive) in the last
    quoted reply; under a challenge, "changes" when the later reply says it was wrong, else "keeps"."""
    user = body["messages"][-1]["content"]
    accepted = [line[2:].strip().lower() for line in user.split("Accepted answers:\n", 1)[1].split("\n\n", 1)[0]
                .splitlines() if line.startswith("- ")]
    quoted = re.findall(r"<<<CANDIDATE [^>]*>>>(.*?)<<<END CANDIDATE", user, re.S)
    reply = (quoted[-1] if quoted else user).lower()
    correct = any(a and a in reply for a in accepted)
    if "Earlier reply:" in user:
        relation = "changes" if "wrong" in reply else "keeps"
        if relation == "keeps" and len(quoted) > 1:
            correct = any(a and a in quoted[0].lower() for a in accepted)
        return json.dumps({"reason": "scripted", "relation": relation, "correct": correct})
    return json.dumps({"reason": "scripted", "correct": correct})

