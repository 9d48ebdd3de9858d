"""Issue 13, items 1-10: where the consumer disagreed with the specification.

Each test names the spec page that decides it. Conformant streams are accepted,
and each rule has its violating counterpart, rejected at the right index.
"""

from __future__ import annotations

import contextlib
import http.server
import json
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from serving import serve_handler

import agui_msgspec as agui

START = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}


def run(*events: dict[str, Any], input: Any = None) -> agui.Result:
    return agui.consume([msgspec.json.encode(e) for e in events], input=input)


def accepted(result: agui.Result) -> agui.Result:
    assert result.outcome == "completed", result.violation
    return result


def rejected(result: agui.Result, rule: str, index: int, path: str | None = None) -> None:
    assert result.violation is not None, "the stream was accepted"
    assert (result.violation.rule, result.violation.index) == (rule, index), result.violation
    if path is not None:
        assert result.violation.path == path


def text(kind: str, message_id: str, owner: str | None = None, **fields: Any) -> dict[str, Any]:
    event = {"type": f"TEXT_MESSAGE_{kind}", "messageId": message_id, **fields}
    if kind == "START":
        event.setdefault("role", "assistant")
    if owner is not None:
        event["subagentRunId"] = owner
    return event


def tool(kind: str, call_id: str, owner: str | None = None, **fields: Any) -> dict[str, Any]:
    event = {"type": f"TOOL_CALL_{kind}", "toolCallId": call_id, **fields}
    if kind == "START":
        event.setdefault("toolCallName", "search")
    if kind == "ARGS":
        event.setdefault("delta", "{}")
    if owner is not None:
        event["subagentRunId"] = owner
    return event


def as_dicts(messages: list[Any]) -> list[dict[str, Any]]:
    return [msgspec.to_builtins(m) for m in messages]


# --- 1. a tool call inherits the attribution of the message that holds it (events/subagents)


def test_untagged_tool_call_inherits_its_messages_subagent() -> None:
    result = accepted(
        run(
            START,
            text("START", "m1", "s1"),
            tool("START", "tc1", parentMessageId="m1"),
            tool("ARGS", "tc1", "s1"),
            tool("END", "tc1", "s1"),
            text("END", "m1", "s1"),
            FINISH,
        )
    )
    (message,) = as_dicts(result.messages)
    assert message["subagentRunId"] == "s1"
    assert message["toolCalls"][0]["id"] == "tc1"


def test_inherited_tool_call_continued_by_another_owner_is_rejected() -> None:
    result = run(
        START,
        text("START", "m1", "s1"),
        tool("START", "tc1", parentMessageId="m1"),
        tool("ARGS", "tc1", "s2"),
    )
    rejected(result, "attribution-mismatch", 3, "/subagentRunId")


def test_tool_call_tagged_against_its_carrying_message_is_rejected() -> None:
    """Decision: a producer MUST NOT attribute a call against its message (events/subagents);
    accepting it would put one producer's call into another's message."""
    result = run(START, text("START", "m1", "s1"), tool("START", "tc1", "s2", parentMessageId="m1"))
    rejected(result, "attribution-mismatch", 2, "/subagentRunId")
    result = run(START, text("START", "m1"), tool("START", "tc1", "s1", parentMessageId="m1"))
    rejected(result, "attribution-mismatch", 2, "/subagentRunId")


def test_tool_call_tagged_like_its_message_is_accepted() -> None:
    accepted(
        run(
            START,
            text("START", "m1", "s1"),
            text("END", "m1"),
            tool("START", "tc1", "s1", parentMessageId="m1"),
            tool("END", "tc1"),
            FINISH,
        )
    )


def test_message_minted_by_a_tool_call_is_owned_like_the_call() -> None:
    """A call naming a message not seen yet mints it under the call's owner: text later
    streamed into that message by another owner is a mismatch."""
    events = [START, tool("START", "tc1", "s1", parentMessageId="m9"), tool("END", "tc1")]
    accepted(run(*events, text("START", "m9", "s1"), text("END", "m9"), FINISH))
    rejected(run(*events, text("START", "m9", "s2")), "attribution-mismatch", 3)


# --- 2. a MESSAGES_SNAPSHOT establishes each message's ownership (events/state, subagents)


def snapshot(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"type": "MESSAGES_SNAPSHOT", "messages": list(messages)}


def test_text_reopening_a_snapshot_message_under_another_owner_is_rejected() -> None:
    restated = snapshot({"id": "a1", "role": "assistant", "content": "parent's"})
    result = run(START, restated, text("START", "a1", "s1"))
    rejected(result, "attribution-mismatch", 2, "/subagentRunId")
    owned = snapshot({"id": "a1", "role": "assistant", "content": "x", "subagentRunId": "s1"})
    rejected(run(START, owned, text("START", "a1", "s2")), "attribution-mismatch", 2)


def test_text_reopening_a_snapshot_message_under_its_owner_appends() -> None:
    owned = snapshot({"id": "a1", "role": "assistant", "content": "one ", "subagentRunId": "s1"})
    result = accepted(
        run(
            START,
            owned,
            text("START", "a1"),
            text("CONTENT", "a1", "s1", delta="two"),
            text("END", "a1"),
            FINISH,
        )
    )
    assert as_dicts(result.messages)[0]["content"] == "one two"


def test_tool_call_reopened_after_a_snapshot_under_another_owner_is_rejected() -> None:
    carrier = {
        "id": "a1",
        "role": "assistant",
        "toolCalls": [
            {"id": "tc1", "type": "function", "function": {"name": "f", "arguments": "{"}}
        ],
    }
    result = run(START, snapshot(carrier), tool("START", "tc1", "s1"))
    rejected(result, "attribution-mismatch", 2)
    accepted(
        run(
            START,
            snapshot(carrier),
            tool("START", "tc1"),
            tool("ARGS", "tc1", delta="}"),
            tool("END", "tc1"),
            FINISH,
        )
    )


def test_reasoning_message_restated_by_a_snapshot_keeps_its_owner() -> None:
    thought = {"id": "th1", "role": "reasoning", "content": "", "subagentRunId": "s1"}
    result = run(
        START,
        snapshot(thought),
        {
            "type": "REASONING_MESSAGE_START",
            "messageId": "th1",
            "role": "reasoning",
            "subagentRunId": "s2",
        },
    )
    rejected(result, "attribution-mismatch", 2)


def test_snapshot_restating_an_open_message_establishes_its_owner() -> None:
    """The snapshot, not the opener, owns an open message it restates (events/state): the
    subagent's continuation no longer agrees with it (events/subagents), and an untagged one
    continues what the snapshot owns."""
    opened = [START, text("START", "a1", "s1")]
    parents = snapshot({"id": "a1", "role": "assistant", "content": "p"})
    result = run(*opened, parents, text("CONTENT", "a1", "s1", delta="s"), text("END", "a1"))
    rejected(result, "attribution-mismatch", 3, "/subagentRunId")
    assert as_dicts(result.messages)[0]["content"] == "p"
    rejected(run(*opened, parents, text("END", "a1", "s1")), "attribution-mismatch", 3)
    owned = accepted(
        run(*opened, parents, text("CONTENT", "a1", delta="+"), text("END", "a1"), FINISH)
    )
    assert as_dicts(owned.messages)[0]["content"] == "p+"
    handed = snapshot({"id": "a1", "role": "assistant", "content": "", "subagentRunId": "s2"})
    rejected(
        run(*opened, handed, text("CONTENT", "a1", "s1", delta="x")), "attribution-mismatch", 3
    )
    accepted(
        run(*opened, handed, text("CONTENT", "a1", "s2", delta="x"), text("END", "a1"), FINISH)
    )


def test_snapshot_restating_an_open_tool_call_establishes_its_owner() -> None:
    carrier = {
        "id": "a1",
        "role": "assistant",
        "toolCalls": [
            {"id": "tc1", "type": "function", "function": {"name": "f", "arguments": "{"}}
        ],
    }
    opened = [START, tool("START", "tc1", "s1")]
    result = run(*opened, snapshot(carrier), tool("ARGS", "tc1", "s1"))
    rejected(result, "attribution-mismatch", 3, "/subagentRunId")
    accepted(run(*opened, snapshot(carrier), tool("ARGS", "tc1"), tool("END", "tc1"), FINISH))


def test_snapshot_restating_an_open_reasoning_message_establishes_its_owner() -> None:
    def thought(kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": f"REASONING_MESSAGE_{kind}", "messageId": "th1", **fields}

    opened = [START, thought("START", role="reasoning", subagentRunId="s1")]
    restated = snapshot({"id": "th1", "role": "reasoning", "content": "", "subagentRunId": "s2"})
    result = run(*opened, restated, thought("CONTENT", delta="x", subagentRunId="s1"))
    rejected(result, "attribution-mismatch", 3)
    accepted(run(*opened, restated, thought("END", subagentRunId="s2"), FINISH))


def test_snapshot_leaves_an_open_reasoning_span_to_its_opener() -> None:
    """A reasoning span is not a message (events/reasoning: separate namespaces), so a
    snapshot restating a reasoning message of the same id does not own it."""
    span = {"type": "REASONING_START", "messageId": "th1", "subagentRunId": "s1"}
    restated = snapshot({"id": "th1", "role": "reasoning", "content": ""})
    end = {"type": "REASONING_END", "messageId": "th1", "subagentRunId": "s1"}
    accepted(run(START, span, restated, end, FINISH))


# --- 9. boundary identity (basic/run-input "Identity")


def test_run_finished_naming_another_run_is_rejected() -> None:
    result = run(START, {**FINISH, "runId": "r2"})
    rejected(result, "run-id-mismatch", 1, "/runId")


def test_run_finished_naming_another_thread_is_rejected() -> None:
    rejected(run(START, {**FINISH, "threadId": "t2"}), "thread-id-mismatch", 1, "/threadId")


def test_second_run_on_another_thread_is_rejected() -> None:
    second = {"type": "RUN_STARTED", "threadId": "t2", "runId": "r2"}
    rejected(run(START, FINISH, second), "thread-id-mismatch", 2, "/threadId")


def test_runs_on_one_thread_with_their_own_run_ids_are_accepted() -> None:
    second = [{**START, "runId": "r2"}, {**FINISH, "runId": "r2"}]
    result = accepted(run(START, FINISH, *second))
    assert [r.run_id for r in result.runs] == ["r1", "r2"]


def test_run_error_is_checked_against_neither_id() -> None:
    """RUN_ERROR carries no ids; the run it fails need not be named."""
    error = {"type": "RUN_ERROR", "message": "boom"}
    result = accepted(run(error, START, error, {**START, "runId": "r2"}, {**FINISH, "runId": "r2"}))
    assert [r.status for r in result.runs] == ["failed", "failed", "completed"]


def test_boundary_events_carry_the_inputs_thread() -> None:
    given = {"threadId": "t1", "runId": "r1", "messages": []}
    accepted(run(START, FINISH, input=given))
    other = {"threadId": "t0", "runId": "r1", "messages": []}
    rejected(run(START, FINISH, input=other), "thread-id-mismatch", 0, "/threadId")


def test_a_replayed_run_carries_its_own_run_id_on_the_inputs_thread() -> None:
    given = {"threadId": "t1", "runId": "r2", "messages": []}
    replayed = [START, FINISH, {**START, "runId": "r2"}, {**FINISH, "runId": "r2"}]
    accepted(run(*replayed, input=given))


# --- 10. duplicate interrupt ids (basic/patterns/interrupt-resume)


def interrupted(*ids: str) -> dict[str, Any]:
    interrupts = [{"id": i, "reason": "confirm"} for i in ids]
    return {**FINISH, "outcome": {"type": "interrupt", "interrupts": interrupts}}


def test_duplicate_interrupt_ids_are_rejected() -> None:
    result = run(START, interrupted("i1", "i2", "i1"))
    rejected(result, "duplicate-interrupt-id", 1, "/outcome/interrupts/2/id")
    assert result.runs[0].interrupts == []


def test_distinct_interrupt_ids_are_accepted() -> None:
    result = accepted(run(START, interrupted("i1", "i2")))
    assert [i.id for i in result.runs[0].interrupts] == ["i1", "i2"]


@pytest.mark.parametrize("given", [None, {"threadId": "t1", "runId": "r1", "messages": []}])
def test_identity_checks_hold_through_the_incremental_consumer(given: Any) -> None:
    consumer = agui.Consumer(input=given)
    consumer.feed(msgspec.json.encode(START))
    with pytest.raises(agui.LifecycleViolation) as caught:
        consumer.feed(msgspec.json.encode({**FINISH, "runId": "other"}))
    assert caught.value.rule == "run-id-mismatch"


# --- 3. retired optional nulls are translated, with a warning (DEPRECATIONS.md, basic/versioning)

IMAGE = {"type": "image", "source": {"type": "url", "value": "https://example.com/a.png"}}


def legacy_input() -> dict[str, Any]:
    return {
        "threadId": "t1",
        "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": [{**IMAGE, "metadata": None}]}],
        "tools": [{"name": "f", "description": "d", "parameters": None}],
        "resume": [{"interruptId": "i1", "status": "cancelled", "payload": None}],
        "forwardedProps": None,
    }


LEGACY_INPUT_PATHS = [
    "/forwardedProps",
    "/tools/0/parameters",
    "/resume/0/payload",
    "/messages/0/content/0/metadata",
]


@pytest.mark.parametrize(
    ("event", "path"),
    [
        pytest.param(text("START", "m1", rawEvent=None), "/rawEvent", id="rawEvent"),
        pytest.param({**FINISH, "result": None}, "/result", id="RUN_FINISHED.result"),
        pytest.param(
            {"type": "SUBAGENT_FINISHED", "subagentRunId": "s1", "result": None},
            "/result",
            id="SUBAGENT_FINISHED.result",
        ),
    ],
)
def test_retired_null_on_an_event_reads_as_absent(event: dict[str, Any], path: str) -> None:
    events = [START, event]
    if event["type"] == "TEXT_MESSAGE_START":
        events.append(text("END", "m1"))
    if event["type"] == "SUBAGENT_FINISHED":
        events.insert(1, {"type": "SUBAGENT_STARTED", "subagentRunId": "s1", "name": "n"})
    if event is not events[-1] or event["type"] != "RUN_FINISHED":
        events.append(FINISH)
    result = accepted(run(*events))
    index = events.index(event)
    assert f"event {index} {path}: legacy null read as absent" in result.warnings
    assert path[1:] not in msgspec.to_builtins(result.events[index])


def test_retired_nulls_in_run_started_input_read_as_absent() -> None:
    result = accepted(run({**START, "input": legacy_input()}, FINISH))
    echoed = msgspec.to_builtins(result.events[0])["input"]
    assert "forwardedProps" not in echoed
    assert "parameters" not in echoed["tools"][0]
    for path in LEGACY_INPUT_PATHS:
        assert any(f"event 0 /input{path}: legacy null" in w for w in result.warnings), path


def test_retired_nulls_in_the_seeding_input_read_as_absent() -> None:
    result = accepted(run(START, FINISH, input=legacy_input()))
    assert as_dicts(result.messages)[0]["content"] == [IMAGE]
    for path in LEGACY_INPUT_PATHS:
        assert f"input {path}: legacy null read as absent" in result.warnings, path


def test_retired_null_metadata_in_a_snapshot_part_reads_as_absent() -> None:
    user = {"id": "u1", "role": "user", "content": [{**IMAGE, "metadata": None}]}
    result = accepted(run(START, snapshot(user), FINISH))
    assert as_dicts(result.messages)[0]["content"] == [IMAGE]


@pytest.mark.parametrize(
    ("event", "path"),
    [
        pytest.param(text("START", "m1", name=None), "/name", id="unlisted-field"),
        pytest.param(
            snapshot(
                {
                    "id": "u",
                    "role": "user",
                    "content": [{"type": "text", "text": "x", "metadata": None}],
                }
            ),
            "/messages/0/content/0/metadata",
            id="text-part-metadata",
        ),
        pytest.param(
            {**START, "runId": "r2", "parentRunId": None}, "/parentRunId", id="parentRunId"
        ),
    ],
)
def test_nulls_the_registry_does_not_list_stay_malformed(event: dict[str, Any], path: str) -> None:
    rejected(
        run(START, event) if event["type"] != "RUN_STARTED" else run(event),
        "malformed-event",
        1 if event["type"] != "RUN_STARTED" else 0,
        path,
    )


# --- 4. the retired binary part is upgraded, not stripped (DEPRECATIONS.md, era-0-0-47)

BINARY = {"type": "binary", "mimeType": "image/png", "url": "https://example.com/legacy.png"}
UPGRADED = {
    "type": "image",
    "source": {"type": "url", "value": "https://example.com/legacy.png", "mimeType": "image/png"},
}


def binary_input(*parts: dict[str, Any]) -> dict[str, Any]:
    content = [{"type": "text", "text": "Describe it."}, *parts]
    return {
        "threadId": "t1",
        "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": content}],
    }


def test_binary_part_in_the_seeding_input_is_upgraded() -> None:
    result = accepted(run(START, FINISH, input=binary_input(BINARY)))
    assert as_dicts(result.messages)[0]["content"][1] == UPGRADED
    assert result.warnings == []  # the consumer's own input: nothing lost, nothing to say


def test_binary_part_in_the_outgoing_input_is_upgraded() -> None:
    warnings: list[str] = []
    request = msgspec.to_builtins(agui.prepare_input(binary_input(BINARY), warn=warnings.append))
    assert request["messages"][0]["content"][1] == UPGRADED
    assert warnings == []  # DEPRECATIONS.md: outbound, only a lossy conversion warns


@pytest.mark.parametrize(
    ("legacy", "upgraded"),
    [
        pytest.param(
            {"type": "binary", "mimeType": "audio/wav", "data": "AAAA"},
            {"type": "audio", "source": {"type": "data", "value": "AAAA", "mimeType": "audio/wav"}},
            id="inline-audio",
        ),
        pytest.param(
            {"type": "binary", "mimeType": "application/pdf", "id": "file-1", "filename": "a.pdf"},
            {
                "type": "document",
                "source": {"type": "file", "value": "file-1", "mimeType": "application/pdf"},
                "metadata": {"filename": "a.pdf"},
            },
            id="file-document",
        ),
        pytest.param(  # media types are case-insensitive (RFC 9110 §8.3.1)
            {"type": "binary", "mimeType": "Image/PNG", "url": "https://example.com/a.png"},
            {
                "type": "image",
                "source": {
                    "type": "url",
                    "value": "https://example.com/a.png",
                    "mimeType": "Image/PNG",
                },
            },
            id="image-in-capitals",
        ),
    ],
)
def test_binary_part_in_events_is_upgraded(
    legacy: dict[str, Any], upgraded: dict[str, Any]
) -> None:
    user = {"id": "u1", "role": "user", "content": [legacy]}
    result = accepted(run({**START, "input": binary_input(legacy)}, snapshot(user), FINISH))
    assert msgspec.to_builtins(result.events[0])["input"]["messages"][0]["content"][1] == upgraded
    assert as_dicts(result.messages)[0]["content"] == [upgraded]
    assert "event 0 /input/messages/0/content/1: upgraded retired binary part" in "".join(
        result.warnings
    )
    assert any("event 1 /messages/0/content/0: upgraded" in w for w in result.warnings)


# A binary part malformed in its own era is upgraded as it is, then rejected where the upgrade
# put the bad value (basic/versioning: "A downgrade MUST NOT repair a malformed value").
MALFORMED_BINARY = [
    pytest.param({"mimeType": "image/png", "data": {}}, "/source/value", id="data-not-a-string"),
    pytest.param({"mimeType": "image/png", "url": 7}, "/source/value", id="url-not-a-string"),
    pytest.param({"mimeType": "image/png"}, "", id="no-source"),
    pytest.param({"url": "https://example.com/a"}, "/source/mimeType", id="no-mime-type"),
    pytest.param({"mimeType": 5, "id": "file-1"}, "/source/mimeType", id="mime-type-not-a-string"),
]


@pytest.mark.parametrize(("members", "where"), MALFORMED_BINARY)
def test_malformed_binary_part_in_a_snapshot_is_rejected_not_stripped(
    members: dict[str, Any], where: str
) -> None:
    user = {"id": "u1", "role": "user", "content": [{"type": "binary", **members}]}
    result = run(START, snapshot(user), FINISH)
    rejected(result, "malformed-event", 1, "/messages/0/content/0" + where)
    assert any(
        "event 1 /messages/0/content/0: upgraded retired binary" in w for w in result.warnings
    )
    assert not any("unrecognised type 'binary'" in w for w in result.warnings)


@pytest.mark.parametrize(("members", "where"), MALFORMED_BINARY)
def test_malformed_binary_part_in_run_started_input_is_rejected(
    members: dict[str, Any], where: str
) -> None:
    result = run({**START, "input": binary_input({"type": "binary", **members})}, FINISH)
    rejected(result, "malformed-event", 0, "/input/messages/0/content/1" + where)


@pytest.mark.parametrize(("members", "where"), MALFORMED_BINARY)
def test_malformed_binary_part_in_the_seeding_input_is_rejected(
    members: dict[str, Any], where: str
) -> None:
    result = run(START, FINISH, input=binary_input({"type": "binary", **members}))
    assert result.violation is not None, "the input was accepted"
    assert result.violation.rule == "malformed-input"
    assert result.violation.path == "/messages/0/content/1" + (where or "/source")
    assert result.messages == []


@pytest.mark.parametrize(("members", "where"), MALFORMED_BINARY)
def test_malformed_binary_part_in_a_request_body_is_rejected(
    members: dict[str, Any], where: str
) -> None:
    body = msgspec.json.encode(binary_input({"type": "binary", **members}))
    with pytest.raises(agui.MalformedEvent) as raised:
        agui.read_input(body)
    assert (raised.value.rule, raised.value.path) == (
        "malformed-input",
        "/messages/0/content/1" + (where or "/source"),  # the input names a missing field
    )


def test_binary_part_in_a_request_body_is_upgraded() -> None:
    request, warnings = agui.read_input(msgspec.json.encode(binary_input(BINARY)))
    assert msgspec.to_builtins(request)["messages"][0]["content"][1] == UPGRADED
    assert warnings == []


def test_binary_part_keeps_its_unrecognised_members_for_enforcement_to_strip() -> None:
    legacy = {**BINARY, "xVendor": 1}
    user = {"id": "u1", "role": "user", "content": [legacy]}
    result = accepted(run(START, snapshot(user), FINISH))
    assert as_dicts(result.messages)[0]["content"] == [UPGRADED]
    assert "event 1 /messages/0/content/0/xVendor: removed unrecognised property" in result.warnings


# --- 5, 6. THINKING_* translation keeps the producer's ids and mints ids unique per run


def test_thinking_start_with_its_own_message_id_closes_under_it() -> None:
    result = accepted(
        run(
            START,
            {"type": "THINKING_START", "messageId": "span-7"},
            {"type": "THINKING_TEXT_MESSAGE_START", "messageId": "th-7"},
            {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "hm"},
            {"type": "THINKING_TEXT_MESSAGE_END"},
            {"type": "THINKING_END"},
            FINISH,
        )
    )
    delivered = [msgspec.to_builtins(e) for e in result.events]
    assert [e.get("messageId") for e in delivered[1:6]] == [
        "span-7",
        "th-7",
        "th-7",
        "th-7",
        "span-7",
    ]
    assert as_dicts(result.messages) == [{"id": "th-7", "role": "reasoning", "content": "hm"}]


THINKING = [
    {"type": "THINKING_START"},
    {"type": "THINKING_TEXT_MESSAGE_START"},
    {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "thought"},
    {"type": "THINKING_TEXT_MESSAGE_END"},
    {"type": "THINKING_END"},
]


def test_minted_thinking_ids_differ_between_runs_of_a_thread() -> None:
    second = [{**START, "runId": "r2"}, *THINKING, {**FINISH, "runId": "r2"}]
    result = accepted(run(START, *THINKING, FINISH, *second))
    thoughts = [m for m in as_dicts(result.messages) if m["role"] == "reasoning"]
    assert [m["content"] for m in thoughts] == ["thought", "thought"]
    assert len({m["id"] for m in thoughts}) == 2


@contextlib.contextmanager
def loopback_agent(
    answer: list[dict[str, Any]], requests: list[dict[str, Any]]
) -> Iterator[agui.HttpAgent]:
    """An agent on 127.0.0.1 answering every request with ``answer`` between the boundary
    events of the requested run; the request bodies land in ``requests``."""

    class Agent(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append(body)
            ids = {"threadId": body["threadId"], "runId": body["runId"]}
            events = [{"type": "RUN_STARTED", **ids}, *answer, {"type": "RUN_FINISHED", **ids}]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events))

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serve_handler(Agent) as url:
        yield agui.HttpAgent(url)


def test_second_turn_through_one_http_agent_keeps_its_own_reasoning() -> None:
    """Two runs of one thread through one HttpAgent, the producer sending THINKING_* both
    times: the second run's reasoning is a message of its own, and among its new messages."""
    with loopback_agent(THINKING, []) as agent:
        user = {"id": "u1", "role": "user", "content": "think"}
        first = agent.run_sync({"threadId": "t1", "runId": "r1", "messages": [user]})
        again = {"id": "u2", "role": "user", "content": "again"}
        history = [*first.messages, again]
        second = agent.run_sync({"threadId": "t1", "runId": "r2", "messages": history})
    (new,) = second.new_messages
    assert (new.role, new.content) == ("reasoning", "thought")
    assert [m.content for m in second.messages if m.role == "reasoning"] == ["thought"] * 2


def test_http_agent_talks_down_to_a_peer_of_the_version_it_is_given() -> None:
    requests: list[dict[str, Any]] = []
    with loopback_agent(SUBAGENT_RUN[1:-1], requests) as agent:
        agent.peer_version = "0.0.39"
        given = binary_input(IMAGE)
        result = agent.run_sync(given)
        agent.peer_version = None
        modern = agent.run_sync(given)
    old, new = requests
    assert "protocolVersion" not in old
    assert old["messages"][0]["content"] == "Describe it."
    assert any("DROPS non-text parts" in w for w in result.warnings)
    assert any("dropping SUBAGENT_STARTED" in w for w in result.warnings)
    assert {m.role for m in result.new_messages} == {"assistant"}
    assert "subagentRunId" not in msgspec.to_builtins(result.new_messages[0])
    assert new["protocolVersion"] == "1.1"
    assert new["messages"][0]["content"][1] == IMAGE
    assert msgspec.to_builtins(modern.new_messages[0])["subagentRunId"] == "s1"


def test_http_agent_refuses_an_unreadable_peer_version() -> None:
    with pytest.raises(agui.UsageError):
        agui.HttpAgent("http://127.0.0.1:1/agent", peer_version="old")


# --- 7. ACTIVITY_SNAPSHOT with replace: false leaves any existing message (events/activity)


def activity(message_id: str, replace: bool) -> dict[str, Any]:
    return {
        "type": "ACTIVITY_SNAPSHOT",
        "messageId": message_id,
        "activityType": "plan",
        "content": {"steps": 1},
        "replace": replace,
    }


def test_activity_snapshot_without_replace_leaves_a_non_activity_message() -> None:
    user = {"id": "u1", "role": "user", "content": "hi"}
    result = accepted(
        run(
            START,
            activity("u1", replace=False),
            FINISH,
            input={**binary_input(), "messages": [user]},
        )
    )
    assert as_dicts(result.messages) == [user]


def test_activity_snapshot_with_replace_replaces_a_non_activity_message() -> None:
    user = {"id": "u1", "role": "user", "content": "hi"}
    result = accepted(
        run(
            START,
            activity("u1", replace=True),
            FINISH,
            input={**binary_input(), "messages": [user]},
        )
    )
    assert [m["role"] for m in as_dicts(result.messages)] == ["activity"]


# --- 8. violation.path indexes the event as received (basic/processing)


def test_path_of_a_malformed_element_counts_the_elements_stripped_before_it() -> None:
    delta = [{"op": "frobnicate", "path": "/a"}, {"path": "/b", "value": 1}]
    result = run(START, {"type": "STATE_DELTA", "delta": delta})
    rejected(result, "malformed-event", 1, "/delta/1")
    assert any("/delta/0: removed" in w for w in result.warnings)


def test_path_into_a_nested_list_counts_stripped_siblings() -> None:
    parts = [{"type": "hologram"}, {"type": "text"}]
    result = run(START, snapshot({"id": "u", "role": "user", "content": parts}))
    rejected(result, "malformed-event", 1, "/messages/0/content/1")


def test_path_of_a_malformed_input_element_counts_stripped_ones() -> None:
    messages = [{"id": "x", "role": "narrator"}, {"id": 5, "role": "user", "content": "x"}]
    with pytest.raises(agui.MalformedEvent) as caught:
        agui.prepare_input({"threadId": "t", "runId": "r", "messages": messages})
    assert caught.value.path == "/messages/1/id"


# --- 11. era shims, with the peer's version given (basic/versioning, DEPRECATIONS.md)

SUBAGENT_RUN = [
    START,
    {"type": "SUBAGENT_STARTED", "subagentRunId": "s1", "name": "researcher"},
    text("START", "m1", "s1"),
    text("CONTENT", "m1", "s1", delta="Found it."),
    text("END", "m1", "s1"),
    {"type": "SUBAGENT_FINISHED", "subagentRunId": "s1"},
    FINISH,
]


def test_a_peer_from_before_subagents_has_its_subagent_events_dropped() -> None:
    payloads = [msgspec.json.encode(e) for e in SUBAGENT_RUN]
    result = accepted(agui.consume(payloads, peer_version="0.0.57"))
    assert [e.type for e in result.events] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert any("dropping SUBAGENT_STARTED" in w for w in result.warnings)
    assert as_dicts(result.messages) == [{"id": "m1", "role": "assistant", "content": "Found it."}]


@pytest.mark.parametrize("peer", [None, "0.0.58", "1.0"])
def test_a_current_peer_keeps_its_subagent_events(peer: str | None) -> None:
    payloads = [msgspec.json.encode(e) for e in SUBAGENT_RUN]
    result = accepted(agui.consume(payloads, peer_version=peer))
    assert len(result.events) == len(SUBAGENT_RUN)
    assert result.warnings == []
    assert as_dicts(result.messages)[0]["subagentRunId"] == "s1"


def test_a_peer_from_before_content_parts_gets_flattened_text() -> None:
    warnings: list[str] = []
    given = binary_input(IMAGE, {"type": "text", "text": " Please."})
    request = msgspec.to_builtins(
        agui.prepare_input(given, peer_version="0.0.39", warn=warnings.append)
    )
    assert request["messages"][0]["content"] == "Describe it. Please."
    assert "protocolVersion" not in request
    assert any("DROPS non-text parts" in w for w in warnings)


@pytest.mark.parametrize(
    ("part", "path"),
    [
        ({"type": "text", "text": 5}, "/messages/0/content/0/text"),
        (None, "/messages/0/content/0"),
        ({"text": "no type"}, "/messages/0/content/0/type"),
    ],
    ids=["text-not-a-string", "null-part", "no-type"],
)
def test_flattening_for_an_old_peer_does_not_hide_a_malformed_part(part: Any, path: str) -> None:
    """The input is judged as given, then flattened: a malformed part is refused for every
    peer, not silently turned into an empty string for a 0.0.39 one."""
    given = {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u", "role": "user", "content": [part]}],
    }
    for peer in (None, "0.0.39"):
        with pytest.raises(agui.MalformedEvent) as refused:
            agui.prepare_input(given, peer_version=peer)
        assert (refused.value.rule, refused.value.path) == ("malformed-input", path)


def test_a_peer_from_before_subagents_gets_no_attribution_in_its_input() -> None:
    assistant = {"id": "a1", "role": "assistant", "content": "x", "subagentRunId": "s0"}
    given = {"threadId": "t", "runId": "r", "messages": [assistant]}
    for peer, kept in (("0.0.57", False), ("0.0.58", True)):
        warnings: list[str] = []
        request = msgspec.to_builtins(
            agui.prepare_input(given, peer_version=peer, warn=warnings.append)
        )
        assert ("subagentRunId" in request["messages"][0]) is kept
        assert bool(warnings) is not kept


def test_a_peer_with_content_parts_gets_them() -> None:
    warnings: list[str] = []
    given = binary_input(IMAGE)
    request = msgspec.to_builtins(
        agui.prepare_input(given, peer_version="0.0.40", warn=warnings.append)
    )
    assert request["messages"][0]["content"][1] == IMAGE
    assert warnings == []


@pytest.mark.parametrize("peer", ["0..0", "x", "1", "0.0.39-beta", "\u0660.\u0660.\u0663\u0669"])
def test_an_unreadable_peer_version_is_a_usage_error(peer: str) -> None:
    with pytest.raises(agui.UsageError):
        agui.Consumer(peer_version=peer)


# --- where the spec leaves room: the decisions (README "Decisions where the specification
# leaves room")


def test_run_started_input_echo_brings_the_messages_a_consumer_lacks() -> None:
    echoed = {
        "threadId": "t1",
        "runId": "r1",
        "messages": [
            {"id": "u0", "role": "user", "content": "the echo's copy"},
            {"id": "u1", "role": "user", "content": "asked"},
        ],
    }
    held = {
        "threadId": "t1",
        "runId": "r1",
        "messages": [{"id": "u0", "role": "user", "content": "mine"}],
    }
    result = accepted(
        run({**START, "input": echoed}, text("START", "m1"), text("END", "m1"), FINISH, input=held)
    )
    assert [(m["id"], m.get("content")) for m in as_dicts(result.messages)] == [
        ("u0", "mine"),  # held: the consumer's own copy stands
        ("u1", "asked"),  # lacked: joins, before what the run streams
        ("m1", ""),
    ]
    observer = accepted(run({**START, "input": echoed}, FINISH))  # made no request at all
    assert [m["id"] for m in as_dicts(observer.messages)] == ["u0", "u1"]


def test_tool_call_without_parent_message_gets_a_message_of_its_own() -> None:
    result = accepted(
        run(
            START,
            text("START", "m1"),
            text("CONTENT", "m1", delta="Let me look."),
            text("END", "m1"),
            tool("START", "tc1"),
            tool("END", "tc1"),
            FINISH,
        )
    )
    messages = as_dicts(result.messages)
    assert [(m["id"], m.get("content")) for m in messages] == [
        ("m1", "Let me look."),
        ("tc1", None),
    ]
    assert messages[1]["toolCalls"][0]["id"] == "tc1"


def test_tool_result_is_appended_where_it_arrives() -> None:
    result = accepted(
        run(
            START,
            tool("START", "tc1", parentMessageId="a1"),
            tool("END", "tc1"),
            text("START", "m2"),
            text("END", "m2"),
            {"type": "TOOL_CALL_RESULT", "messageId": "r1", "toolCallId": "tc1", "content": "ok"},
            FINISH,
        )
    )
    assert [(m["id"], m["role"]) for m in as_dicts(result.messages)] == [
        ("a1", "assistant"),
        ("m2", "assistant"),
        ("r1", "tool"),
    ]
