"""Version strings are producer text: parsed ASCII-only, in linear time, raising nothing.

``str.isdigit`` accepts characters ``int()`` refuses (``"²"``), and ``int()`` refuses more
than 4,300 digits: either used to escape from every entry point as a ``ValueError``.
Spec: basic/versioning (MAJOR.MINOR, a newer or unreadable version proceeds with a warning).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import msgspec
import pytest

from agui_msgspec import (
    Consumer,
    HttpAgent,
    UsageError,
    build_run_input,
    consume,
    consume_body,
    v1_1,
)
from agui_msgspec._tools.cli import main
from agui_msgspec._versions import ProtocolVersion, parse_version, producer_version_notice

SUPERSCRIPT = "\u00b2.1"  # "²" is a digit to str.isdigit, not to int()
HUGE = "9" * 4301 + ".1"  # more digits than int() converts
ARABIC_INDIC = "\u0661.\u0661"  # ARABIC-INDIC DIGIT ONE, twice


def stream(declared: str) -> list[dict[str, Any]]:
    return [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": declared},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]


def payloads(declared: str) -> list[bytes]:
    return [msgspec.json.encode(event) for event in stream(declared)]


def sse(declared: str) -> bytes:
    return b"".join(b"data: " + msgspec.json.encode(e) + b"\n\n" for e in stream(declared))


@pytest.mark.parametrize(
    ("version", "key"),
    [
        ("1.1", ProtocolVersion("1", "1")),
        ("1.10.3", ProtocolVersion("1", "10")),
        ("01.0", ProtocolVersion("1", "0")),
        (SUPERSCRIPT, None),
        (ARABIC_INDIC, None),
        ("1", None),
        ("1.", None),
        (".1", None),
        (" 1.1", None),
        ("1.1-rc1", None),
        ("draft", None),
        ("", None),
    ],
)
def test_a_declared_version_reads_ascii_major_minor_only(version: str, key: object) -> None:
    assert parse_version(version, "declaration") == key


@pytest.mark.parametrize(
    ("declared", "ours", "newer"),
    [
        ("1.10", "1.9", True),
        ("1.9", "1.10", False),
        ("2.0", "1.99", True),
        ("001.2", "1.1", True),
        ("1.01", "1.1", False),
        (HUGE, "1.1", True),
        ("1." + "0" * 5000 + "2", "1.1", True),
    ],
)
def test_versions_compare_by_value_without_building_numbers(
    declared: str, ours: str, newer: bool
) -> None:
    notice = producer_version_notice(declared, ours)
    assert (notice is not None and "newer" in notice) is newer


@pytest.mark.parametrize("declared", [SUPERSCRIPT, ARABIC_INDIC, HUGE])
def test_consume_consume_body_and_feed_read_any_declared_version(declared: str) -> None:
    results = [consume(payloads(declared)), consume_body(sse(declared))]
    for result in results:
        assert result.outcome == "completed", result.violation
        assert [run.status for run in result.runs] == ["completed"]
        assert len(result.warnings) == 1
        assert result.warnings[0].startswith("RUN_STARTED /protocolVersion")
        assert len(result.warnings[0]) < 300  # the declared string is cut, not copied whole
    heard: list[str] = []
    consumer = Consumer(on_warning=heard.append)
    consumer.feed_many(payloads(declared))
    consumer.close()
    assert len(heard) == 1


@pytest.mark.parametrize("declared", [SUPERSCRIPT, HUGE])
def test_check_reads_any_declared_version(
    declared: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = tmp_path / "run.sse"
    body.write_bytes(sse(declared))
    assert main(["check", str(body), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["warnings"]) == 1


@pytest.mark.parametrize("declared", [SUPERSCRIPT, HUGE])
def test_http_agent_reads_any_declared_version(declared: str) -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=sse(declared)
        )

    async def go() -> Any:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            agent = HttpAgent("http://agent.test/", client=client)
            return await agent.run_agent({"threadId": "t", "runId": "r", "messages": []})

    result = asyncio.run(go())
    assert result.run.status == "completed"
    assert len(result.warnings) == 1


@pytest.mark.parametrize("version", [SUPERSCRIPT, HUGE, ARABIC_INDIC])
def test_build_run_input_on_bindings_with_an_unreadable_version(version: str) -> None:
    odd = ModuleType("odd_bindings")
    odd.__dict__.update({k: v for k, v in vars(v1_1).items() if not k.startswith("__")})
    odd.PROTOCOL_VERSION = version
    warnings: list[str] = []
    prepared = build_run_input(
        {"threadId": "t", "runId": "r", "messages": [], "protocolVersion": "1.1"},
        odd,
        on_warning=warnings.append,
    )
    expected = "9" * 4301 + ".1" if version == HUGE else msgspec.UNSET
    assert prepared.protocol_version == expected
    assert len(warnings) == (0 if version == HUGE else 1)


@pytest.mark.parametrize("version", [SUPERSCRIPT, ARABIC_INDIC, "1.x", "draft"])
def test_build_run_input_refuses_a_version_string_that_is_not_a_version(version: str) -> None:
    input = {"threadId": "t", "runId": "r", "messages": []}
    with pytest.raises(UsageError, match=r"is not MAJOR\.MINOR"):
        build_run_input(input, version)


def test_build_run_input_on_a_huge_version_string_names_it_unsupported() -> None:
    with pytest.raises(UsageError, match="unsupported protocol version"):
        build_run_input({"threadId": "t", "runId": "r", "messages": []}, HUGE)
