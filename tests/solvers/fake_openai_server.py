"""A FAKE OpenAI-compatible server (a real HTTP server on 127.0.0.1, scripted answers) for the
client's failure paths: 429 and 500 replies, slow replies, fewer choices than asked."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAI:
    """``script`` is consumed one entry per request: an int is an HTTP error status, "slow"
    sleeps past the client's timeout, a dict ``{"choices": k}`` answers with k choices; when the
    script is empty every request gets ``default_choices`` choices (or as many as asked)."""

    def __init__(self, script: list[Any] | None = None, default_choices: int | None = None):
        self.script = list(script or [])
        self.default_choices = default_choices
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.delay_s = 0.0

    def handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers do

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in two writes: without NODELAY, Nagle's algorithm and
                # the client's delayed ACK stall every reply by ~40 ms.
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake.lock:
                    fake.requests.append(body)
                    fake.paths.append(self.path)
                    step = fake.script.pop(0) if fake.script else None
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                try:
                    time.sleep(fake.delay_s)
                    if step == "slow":
                        time.sleep(2.0)
                    if isinstance(step, int):
                        return self._send(step, {"error": {"message": f"scripted {step}", "type": "x"}})
                    if isinstance(step, dict):
                        k = step["choices"]
                    elif fake.default_choices is not None:
                        k = fake.default_choices
                    else:
                        k = body.get("n", 1)
                    seed = body.get("seed")
                    if self.path.endswith("/chat/completions"):
                        choices = [
                            {
                                "index": i,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": f"chat seed={seed} #{i}"},
                            }
                            for i in range(k)
                        ]
                        obj = "chat.completion"
                    else:
                        choices = [
                            {"index": i, "finish_reason": "stop", "text": f"text seed={seed} #{i}"}
                            for i in range(k)
                        ]
                        obj = "text_completion"
                    self._send(
                        200,
                        {"id": "x", "object": obj, "created": 0, "model": body["model"], "choices": choices},
                    )
                finally:
                    with fake.lock:
                        fake.in_flight -= 1

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out first
                    pass

        return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # 64+ clients connect at once (the default backlog is 5)


@contextmanager
def serve(fake: FakeOpenAI) -> Iterator[str]:
    """Run ``fake`` on a free port of 127.0.0.1; yields the base URL; always shuts down."""
    server = _Server(("127.0.0.1", 0), fake.handler())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
