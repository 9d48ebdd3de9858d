"""Serve a test producer on a free 127.0.0.1 port from a background thread: an ASGI app
with uvicorn, or a ``BaseHTTPRequestHandler`` with the standard threading HTTP server."""

from __future__ import annotations

import contextlib
import http.server
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve ``app`` until the block ends; yields its base URL (``http://127.0.0.1:PORT``)."""
    import uvicorn  # noqa: PLC0415  (a test that serves skips first unless uvicorn is installed)

    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30  # a framework app on a busy machine
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the uvicorn test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@contextmanager
def serve_handler(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` until the block ends; yields its base URL (``http://127.0.0.1:PORT``)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def trickling_server(
    first: bytes, then: bytes, pause: float
) -> type[http.server.BaseHTTPRequestHandler]:
    """A handler that answers a run with its ``RUN_STARTED`` (on the thread asked about), then
    ``first``, then ``then`` every ``pause`` seconds until the client leaves: a run that does
    not end by itself."""

    class Trickle(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            started = {"type": "RUN_STARTED", "threadId": request["threadId"], "runId": "r"}
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            with contextlib.suppress(OSError):
                self.wfile.write(b"data: " + json.dumps(started).encode() + b"\n\n" + first)
                self.wfile.flush()
                for _ in range(int(60 / pause)):
                    time.sleep(pause)
                    self.wfile.write(then)
                    self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Trickle
