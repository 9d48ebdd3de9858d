"""The pytest plugin: ``assert_conformant`` over a body, payloads, an ASGI app or a URL.

Registered by the ``pytest11`` entry point, so a producer's test suite gets the
``agui_verify`` fixture with nothing to configure::

    def test_my_agent(agui_verify):
        agui_verify(my_asgi_app, input={"threadId": "t", "runId": "r", "messages": []})

On failure the test fails with every finding, its event and its spec link.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from agui_msgspec._errors import inert
from agui_msgspec._pipeline.consumer import MEDIA_TYPES
from agui_msgspec._pipeline.warnings import cut
from agui_msgspec._rules import Severity
from agui_msgspec._tools.render import finding_line
from agui_msgspec._tools.verify import Level, Report, Source, verify
from agui_msgspec._versions import LATEST_VERSION, VersionLike

_ACCEPT = "text/event-stream"
DEFAULT_DEADLINE = 120.0
"""Seconds an app or a URL has for its whole answer."""
DEFAULT_MAX_BODY_SIZE = 64 * 1024 * 1024
"""Bytes of an app's or a URL's answer read at most."""
FINDINGS_SHOWN = 50
"""Findings a failure lists (each cut as a warning is); the rest are counted."""


def assert_conformant(
    source: Source | Callable[..., Any] | str,
    *,
    input: Mapping[str, Any] | None = None,
    path: str = "/",
    accept: str = _ACCEPT,
    version: VersionLike = LATEST_VERSION,
    fail_on: Severity = "violation",
    max_warnings: int | None = None,
    levels: Mapping[str, Level] | None = None,
    deadline: float = DEFAULT_DEADLINE,
    max_body_size: int = DEFAULT_MAX_BODY_SIZE,
) -> Report:
    """The :func:`verify` report of ``source``; the test fails when the report fails
    ``fail_on`` / ``max_warnings`` (as ``check --fail-on`` does), listing the findings.

    ``source`` is a body or payloads (as :func:`verify` takes them), an ASGI app (POSTed
    ``input`` at ``path``, called in this process) or an ``http(s)://`` URL (POSTed
    ``input``). ``input`` is the RunAgentInput sent (default: a new thread, no messages)
    and the one the stream is judged against. An app or a URL that does not answer an
    AG-UI stream within ``deadline`` seconds and ``max_body_size`` bytes fails the test.
    """
    __tracebackhide__ = True
    media_type = None
    if isinstance(source, str) and source.lower().startswith(("http://", "https://")):
        input = _input(input)
        source, media_type = _post_url(source, input, accept, deadline, max_body_size)
    elif callable(source):
        input = _input(input)
        source, media_type = _post_app(source, path, input, accept, deadline, max_body_size)
    report = verify(source, version=version, input=input, media_type=media_type, levels=levels)
    if report.failed(fail_on, max_warnings):
        pytest.fail(failure_text(report), pytrace=False)
    return report


def failure_text(report: Report) -> str:
    """What a failed assertion says: the verdict, then each finding (with its spec link)."""
    head = f"AG-UI stream {report.verdict}: " + ", ".join(
        f"{len(found)} {kind}"
        for kind, found in (
            ("violation(s)", report.violations),
            ("warning(s)", report.warnings),
            ("hint(s)", report.hints),
        )
    )
    shown = [f"  {cut(finding_line(finding))}" for finding in report.findings[:FINDINGS_SHOWN]]
    more = len(report.findings) - len(shown)
    return "\n".join([head, *shown, *([f"  and {more} more"] if more > 0 else [])])


@pytest.fixture
def agui_verify() -> Callable[..., Report]:
    """:func:`assert_conformant`: call it on a body, payloads, an ASGI app or a URL."""
    return assert_conformant


def _input(input: Mapping[str, Any] | None) -> dict[str, Any]:
    if input is not None:
        return dict(input)
    return {"threadId": str(uuid.uuid4()), "runId": str(uuid.uuid4()), "messages": []}


def _post_url(
    url: str, input: dict[str, Any], accept: str, deadline: float, max_body_size: int
) -> tuple[bytes, str | None]:
    import httpx  # noqa: PLC0415  (the http extra: only a URL or an app needs it)

    __tracebackhide__ = True
    started = time.monotonic()
    try:
        with (
            httpx.Client(timeout=deadline) as client,
            client.stream("POST", url, json=input, headers={"accept": accept}) as response,
        ):
            content_type = response.headers.get("content-type")
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                _expect_within(len(body), time.monotonic() - started, deadline, max_body_size)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:  # a read past the deadline among them
        detail = inert(f"{type(exc).__name__}: {exc}")
        pytest.fail(f"no answer from {inert(url)}: {detail}", pytrace=False)
    _expect_stream(response.status_code, content_type, bytes(body))
    return bytes(body), content_type


def _post_app(
    app: Callable[..., Any],
    path: str,
    input: dict[str, Any],
    accept: str,
    deadline: float,
    max_body_size: int,
) -> tuple[bytes, str | None]:
    __tracebackhide__ = True
    answer = _Answer(max_body_size)
    run = answer.run(app, path, json.dumps(input).encode(), accept, deadline)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(run)
    else:  # called from an async test: its loop is busy, so the app runs on a loop of its own
        with concurrent.futures.ThreadPoolExecutor(1) as worker:
            worker.submit(asyncio.run, run).result()
    if answer.problem:
        pytest.fail(answer.problem, pytrace=False)
    if answer.status is None:
        pytest.fail("the agent returned without sending a response", pytrace=False)
    body = bytes(answer.body)
    _expect_stream(answer.status, answer.content_type, body)
    return body, answer.content_type


class _TooLarge(Exception):
    """An app's answer passed ``max_body_size``: stopped from inside its ``send``."""


class _Answer:
    """One HTTP exchange with an ASGI app, called in this process, read as it is sent so a
    body that never ends is stopped at ``max_body_size`` (and the deadline) instead of held."""

    def __init__(self, max_body_size: int) -> None:
        self.max_body_size = max_body_size
        self.status: int | None = None
        self.content_type: str | None = None
        self.body = bytearray()
        self.problem = ""

    async def run(
        self, app: Callable[..., Any], path: str, request: bytes, accept: str, deadline: float
    ) -> None:
        done = asyncio.Event()
        asked = False
        route, _, query = path.partition("?")

        async def receive() -> dict[str, Any]:
            nonlocal asked
            if not asked:
                asked = True
                return {"type": "http.request", "body": request, "more_body": False}
            await done.wait()  # the client goes once the answer is complete
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                self.status = message["status"]
                for name, value in message.get("headers", []):
                    if name.lower() == b"content-type":
                        self.content_type = value.decode("latin-1")
            elif message["type"] == "http.response.body":
                self.body += message.get("body", b"")
                if len(self.body) > self.max_body_size:
                    raise _TooLarge
                if not message.get("more_body", False):
                    done.set()

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": route,
            "raw_path": route.encode(),
            "query_string": query.encode(),
            "root_path": "",
            "headers": [
                (b"host", b"agui.test"),
                (b"accept", accept.encode("latin-1")),
                (b"content-type", b"application/json"),
                (b"content-length", str(len(request)).encode()),
            ],
            "client": ("127.0.0.1", 50000),
            "server": ("agui.test", 80),
        }
        try:
            await asyncio.wait_for(app(scope, receive, send), deadline)
        except _TooLarge:
            self.problem = _too_large(self.max_body_size)
        except asyncio.TimeoutError:
            self.problem = _too_late(deadline)


def _expect_within(size: int, waited: float, deadline: float, max_body_size: int) -> None:
    __tracebackhide__ = True
    if size > max_body_size:
        pytest.fail(_too_large(max_body_size), pytrace=False)
    if waited > deadline:
        pytest.fail(_too_late(deadline), pytrace=False)


def _too_large(max_body_size: int) -> str:
    return f"the agent's answer passed max_body_size ({max_body_size} bytes): it was stopped"


def _too_late(deadline: float) -> str:
    return f"the agent did not answer within deadline ({deadline} s): it was stopped"


def _expect_stream(status: int, content_type: str | None, body: bytes) -> None:
    __tracebackhide__ = True
    if status != 200:
        excerpt = inert(body[:500].decode("utf-8", errors="replace"))
        pytest.fail(f"the agent answered HTTP {status}, not a stream: {excerpt}", pytrace=False)
    name = (content_type or "").partition(";")[0].strip().lower()
    if content_type is not None and name not in MEDIA_TYPES:
        shown = inert(content_type[:200])
        pytest.fail(f"the agent answered Content-Type {shown}, not an AG-UI stream", pytrace=False)
