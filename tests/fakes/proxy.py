"""A recording pass-through HTTP proxy in front of a real OpenAI-compatible server.

Every request body that reaches the upstream server is logged (``requests``: path, parsed JSON body,
the upstream status), so a test asserts on what the server actually received (the ``response_format``
it was sent, the prompt's size) without touching the client. Responses are relayed as they arrive:
a streamed answer (server-sent events) is passed on chunk by chunk.
"""

from __future__ import annotations

import http.client
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization",
        "proxy-authenticate", "content-length", "host"}


@dataclass
class Forwarded:
    """One request relayed to the upstream server and the status it answered with."""

    method: str
    path: str
    body: dict[str, Any]
    status: int = 0


class RecordingProxy:
    """``http://127.0.0.1:PORT/v1`` in front of ``upstream`` (a base URL such as ``http://127.0.0.1:8000/v1``)."""

    def __init__(self, upstream: str, host: str = "127.0.0.1"):
        parts = urlsplit(upstream)
        self.upstream_host, self.upstream_port = parts.hostname or "127.0.0.1", parts.port or 80
        self.requests: list[Forwarded] = []
        self._lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"proxy": self})
        self.httpd = ThreadingHTTPServer((host, 0), handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.httpd.server_address[0]}:{self.httpd.server_address[1]}/v1"

    def chat_bodies(self) -> list[Forwarded]:
        """The chat completion requests relayed, in order."""
        return [r for r in self.requests if r.path.rstrip("/").endswith("/chat/completions")]

    def start(self) -> RecordingProxy:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True, name="recording-proxy")
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> RecordingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    proxy: RecordingProxy
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _relay(self, method: str) -> None:
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        record = Forwarded(method, self.path, body)
        with self.proxy._lock:
            self.proxy.requests.append(record)
        conn = http.client.HTTPConnection(self.proxy.upstream_host, self.proxy.upstream_port, timeout=3600)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        if raw:
            headers["Content-Length"] = str(len(raw))
        try:
            conn.request(method, self.path, body=raw or None, headers=headers)
            resp = conn.getresponse()
            record.status = resp.status
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in _HOP:
                    self.send_header(k, v)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            while True:
                chunk = resp.read1(65536) if hasattr(resp, "read1") else resp.read(65536)
                if not chunk:
                    break
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return
        finally:
            conn.close()

    def do_GET(self) -> None:  # noqa: N802
        self._relay("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._relay("POST")
