"""``parse_run_input`` (``read_input`` before): the producer reading the RunAgentInput it
received (spec: basic/run-input, Error Handling). Unrecognised members are stripped with a warning per path and the run goes
on; a malformed body is refused as a request-body error; nothing else changes."""

from __future__ import annotations

import json
import pickle
from typing import Any

import msgspec
import pytest

from agui_msgspec import MalformedEvent, parse_run_input, v1_0, v1_1
from agui_msgspec._errors import ProtocolViolation
from agui_msgspec._pipeline.warnings import DEFAULT_MAX_WARNINGS, MAX_WARNING_LENGTH

BODY: dict[str, Any] = {
    "threadId": "t",
    "runId": "r",
    "protocolVersion": "1.0",
    "messages": [
        {"role": "user", "id": "u", "content": "hi"},
        {"role": "activity", "id": "p", "activityType": "plan", "content": {}},
    ],
}


def with_(**members: Any) -> dict[str, Any]:
    return {**BODY, **members}


def parsed(body: Any, *args: Any, **options: Any) -> tuple[Any, list[str]]:
    """``parse_run_input``'s input, and the warnings it said."""
    said: list[str] = []
    return parse_run_input(body, *args, on_warning=said.append, **options), said


@pytest.mark.parametrize("form", ["bytes", "str", "dict", "struct", "bytearray"])
def test_a_conformant_body_reads_as_it_is(form: str) -> None:
    text = json.dumps(BODY)
    body: Any = {
        "bytes": text.encode(),
        "bytearray": bytearray(text.encode()),
        "str": text,
        "dict": BODY,
        "struct": msgspec.convert(BODY, v1_1.RunAgentInput),
    }[form]
    input, warnings = parsed(body)
    assert warnings == []
    assert input == msgspec.convert(BODY, v1_1.RunAgentInput)
    # Nothing else changes: the declared version and the activity message stay.
    assert input.protocol_version == "1.0"
    assert [m.id for m in input.messages] == ["u", "p"]


def test_unknown_members_are_stripped_with_one_warning_per_path() -> None:
    body = with_(
        traceId="x",
        tools=[{"name": "f", "description": "d", "vendor": {"a": 1}}],
        messages=[
            {"role": "user", "id": "u", "content": "hi", "mood": "ok"},
            {"role": "narrator", "id": "n", "content": "..."},
        ],
        forwardedProps={"anything": {"goes": None}},
    )
    input, warnings = parsed(json.dumps(body))
    assert sorted(warnings) == [
        "input /messages/0/mood: removed unrecognised property",
        "input /messages/1: removed unrecognised role 'narrator'",
        "input /tools/0/vendor: removed unrecognised property",
        "input /traceId: removed unrecognised property",
    ]
    assert input.tools == [v1_1.Tool(name="f", description="d")]
    assert input.messages == [v1_1.UserMessage(id="u", content="hi")]
    assert input.forwarded_props == {"anything": {"goes": None}}  # open: passed through untouched


def test_the_body_given_is_not_changed() -> None:
    body = with_(traceId="x")
    snapshot = json.dumps(body)
    parsed(body)
    assert json.dumps(body) == snapshot


@pytest.mark.parametrize(
    ("body", "path"),
    [
        pytest.param({"threadId": "t", "messages": []}, "/runId", id="missing-runId"),
        pytest.param(with_(runId=5), "/runId", id="wrong-type"),
        pytest.param(with_(state=None), "/state", id="null-state"),
        pytest.param(
            with_(messages=[{"role": "user", "id": "u", "content": 5}]),
            "/messages/0/content",
            id="nested",
        ),
        pytest.param(
            with_(messages=[{"role": "user", "id": "u"}]),
            "/messages/0/content",
            id="nested-missing",
        ),
        pytest.param(
            with_(tools=[{"name": "f", "description": 1}]), "/tools/0/description", id="tool"
        ),
    ],
)
def test_a_malformed_body_is_refused_at_its_path(body: dict[str, Any], path: str) -> None:
    with pytest.raises(MalformedEvent) as refused:
        parsed(json.dumps(body).encode())
    assert (refused.value.rule, refused.value.path, refused.value.index) == (
        "malformed-input",
        path,
        None,
    )
    assert str(refused.value).startswith(f"[malformed-input] request body at {path}: ")
    assert "end of stream" not in str(refused.value)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"{nope", "not JSON"),
        (b"\xff\xfe{}", "not JSON"),
        ("", "not JSON"),
        (b"[1, 2]", "got an array"),
        (b"null", "got null"),
        (3, "got a number"),
        (b"[" * 100_000 + b"]" * 100_000, "nests too deeply"),
        (b'{"state":' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nests too deeply"),
    ],
    ids=["broken", "not-utf8", "empty", "array", "null", "number", "deep", "deep-inside"],
)
def test_a_body_that_is_not_an_object_is_refused(body: Any, says: str) -> None:
    with pytest.raises(MalformedEvent) as refused:
        parsed(body)
    assert refused.value.rule == "malformed-input"
    assert str(refused.value).startswith("[malformed-input] request body: ")
    assert says in str(refused.value)


def test_stream_errors_keep_their_wording() -> None:
    assert str(ProtocolViolation("truncated", "x")) == "[truncated] end of stream: x"
    assert str(MalformedEvent("malformed-event", "x", index=3, path="/a")) == (
        "[malformed-event] event 3 at /a: x"
    )


def test_a_request_body_error_survives_pickling() -> None:
    with pytest.raises(MalformedEvent) as refused:
        parsed(b'{"threadId": "t", "messages": []}')
    copy = pickle.loads(pickle.dumps(refused.value))
    assert str(copy) == str(refused.value)


def test_version_selects_the_bindings() -> None:
    body = with_(messages=[{"role": "user", "id": "u", "content": "hi", "encryptedValueType": "k"}])
    current, warnings = parsed(body, "1.1")
    assert warnings == []
    assert current.messages[0].encrypted_value_type == "k"
    old, warnings = parsed(body, version=v1_0)
    assert type(old) is v1_0.RunAgentInput
    assert warnings == ["input /messages/0/encryptedValueType: removed unrecognised property"]


# --- the warnings are bounded as a stream's are ---------------------------------------------


def test_a_body_with_many_unknown_properties_keeps_a_bounded_list_of_warnings() -> None:
    body = {**BODY, **{f"vendor{n}": n for n in range(5000)}}
    _, warnings = parsed(json.dumps(body))
    assert len(warnings) == DEFAULT_MAX_WARNINGS + 1
    assert warnings[-1] == "4000 more warnings not kept (max_warnings=1000)"
    _, few = parsed(json.dumps(body), max_warnings=10)
    assert len(few) == 11


def test_a_huge_property_name_makes_a_warning_of_bounded_length() -> None:
    body = {**BODY, "x" * 5_000_000: 1}
    _, warnings = parsed(json.dumps(body))
    assert len(warnings) == 1
    assert len(warnings[0]) == MAX_WARNING_LENGTH
