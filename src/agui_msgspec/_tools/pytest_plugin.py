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
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from agui_msgspec._rules import Severity
from agui_msgspec._tools.render import finding_line
from agui_msgspec._tools.verify import Level, Report, Source, verify
from agui_msgspec._versions import LATEST_VERSION, VersionLike

_ACCEPT = "text/event-stream"
_ASGI_BASE = "http://agui.test"  # an ASGI app is reached through httpx at a made-up origin


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
) -> Report:
    """The :func:`verify` report of ``source``; the test fails when the report fails
    ``fail_on`` / ``max_warnings`` (as ``check --fail-on`` does), listing every finding.

    ``source`` is a body or payloads (as :func:`verify` takes them), an ASGI app (POSTed
    ``input`` at ``path`` through httpx's ASGITransport) or an ``http(s)://`` URL (POSTed
    ``input``). ``input`` is the RunAgentInput sent (default: a new thread, no messages)
    and the one the stream is judged against.
    """
    __tracebackhide__ = True
    media_type = None
    if isinstance(source, str) and source.startswith(("http://", "https://")):
        input = _input(input)
        source, media_type = _post_url(source, input, accept)
    elif callable(source):
        input = _input(input)
        source, media_type = _post_app(source, path, input, accept)
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
    return "\n".join([head, *(f"  {finding_line(finding)}" for finding in report.findings)])


@pytest.fixture
def agui_verify() -> Callable[..., Report]:
    """:func:`assert_conformant`: call it on a body, payloads, an ASGI app or a URL."""
    return assert_conformant


def _input(input: Mapping[str, Any] | None) -> dict[str, Any]:
    if input is not None:
        return dict(input)
    return {"threadId": str(uuid.uuid4()), "runId": str(uuid.uuid4()), "messages": []}


def _post_url(url: str, input: dict[str, Any], accept: str) -> tuple[bytes, str | None]:
    import httpx  # noqa: PLC0415  (the http extra: only a URL or an app needs it)

    response = httpx.post(url, json=input, headers={"accept": accept})
    _expect_ok(response)
    return response.content, response.headers.get("content-type")


def _post_app(
    app: Callable[..., Any], path: str, input: dict[str, Any], accept: str
) -> tuple[bytes, str | None]:
    import httpx  # noqa: PLC0415

    async def post() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=_ASGI_BASE) as client:
            return await client.post(path, json=input, headers={"accept": accept})

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        response = asyncio.run(post())
    else:  # called from an async test: its loop is busy, so the app runs on a loop of its own
        with concurrent.futures.ThreadPoolExecutor(1) as worker:
            response = worker.submit(asyncio.run, post()).result()
    _expect_ok(response)
    return response.content, response.headers.get("content-type")


def _expect_ok(response: Any) -> None:
    __tracebackhide__ = True
    if response.status_code != 200:
        pytest.fail(
            f"the agent answered HTTP {response.status_code}, not a stream: {response.text[:500]}",
            pytrace=False,
        )
