"""Outgoing enforcement: the ``RunAgentInput`` a consumer is about to send (AG-UI 1.1).

Spec pages: basic/run-input (identity, ``protocolVersion`` declared, activity
messages stripped, malformed input rejected before the run), basic/processing
(unknown members stripped with a warning, malformed known values fatal),
basic/versioning (no declaration toward a peer that predates the field),
basic/patterns/interrupt-resume (a resume must cover every interrupt of the
interrupted run; an expired interrupt may only be abandoned). RULES.md section I.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import msgspec
import pytest

import agui_msgspec as agui
from agui_msgspec import MalformedEvent, Run, consume, v1_0, v1_1
from agui_msgspec._pipeline.input import build_run_input

Event = dict[str, Any]


def base(**extra: Any) -> Event:
    return {
        "threadId": "t",
        "runId": "r2",
        "messages": [{"role": "user", "id": "u1", "content": "hi"}],
        **extra,
    }


def prepare(input: Any, version: str = "1.1", **options: Any) -> tuple[Event, list[str]]:
    warnings: list[str] = []
    prepared = build_run_input(input, version, on_warning=warnings.append, **options)
    assert isinstance(prepared, v1_0.RunAgentInput if version == "1.0" else v1_1.RunAgentInput)
    sent: Event = msgspec.to_builtins(prepared)
    return sent, warnings


# --- stripping, rejecting, cleaning -----------------------------------------------------------


def test_unknown_properties_are_stripped_with_a_warning() -> None:
    input = base(vendorFlag=True)
    input["messages"][0]["vendorNote"] = "x"
    sent, warnings = prepare(input)
    assert "vendorFlag" not in sent
    assert sent["messages"] == [{"role": "user", "id": "u1", "content": "hi"}]
    assert any("/vendorFlag" in w for w in warnings)
    assert any("/messages/0/vendorNote" in w for w in warnings)


def test_open_objects_are_not_stripped() -> None:
    input = base(
        state={"anything": None, "nested": {"deep": [1]}},
        forwardedProps={"vendor": {"x": None}},
    )
    input["messages"][0]["metadata"] = {"vendor.k": None}
    sent, warnings = prepare(input)
    assert sent["state"] == {"anything": None, "nested": {"deep": [1]}}
    assert sent["forwardedProps"] == {"vendor": {"x": None}}
    assert sent["messages"][0]["metadata"] == {"vendor.k": None}
    assert warnings == []


def test_the_callers_input_is_left_as_it_was() -> None:
    input = base(vendorFlag=True)
    snapshot = msgspec.json.encode(input)
    prepare(input)
    assert msgspec.json.encode(input) == snapshot


@pytest.mark.parametrize(
    ("input", "path"),
    [
        pytest.param(base(runId=5), "/runId", id="wrong-type"),
        pytest.param(base(messages="hi"), "/messages", id="messages-not-an-array"),
        pytest.param(base(state=None), "/state", id="null-state"),
        pytest.param(
            base(messages=[{"role": "user", "id": 3, "content": "x"}]),
            "/messages/0/id",
            id="nested-wrong-type",
        ),
        pytest.param(
            base(messages=[{"role": "user", "id": "u"}]), "/messages/0/content", id="missing"
        ),
        pytest.param({"threadId": "t", "runId": "r"}, "/messages", id="missing-messages"),
    ],
)
def test_malformed_known_field_is_rejected_before_sending(input: Event, path: str) -> None:
    with pytest.raises(MalformedEvent) as caught:
        build_run_input(input)
    assert caught.value.rule == "malformed-input"
    assert caught.value.path == path


@pytest.mark.parametrize("input", [[], "input", None, 3], ids=repr)
def test_input_that_is_not_an_object_is_rejected(input: Any) -> None:
    with pytest.raises(MalformedEvent) as caught:
        build_run_input(input)
    assert caught.value.rule == "malformed-input"


def test_activity_messages_are_removed_with_a_warning() -> None:
    input = base(
        messages=[
            {"role": "user", "id": "u1", "content": "find it"},
            {"role": "activity", "id": "act1", "activityType": "search", "content": {}},
            {"role": "assistant", "id": "a1", "content": "found"},
            {"role": "activity", "id": "act2", "activityType": "search", "content": {"n": 1}},
        ]
    )
    sent, warnings = prepare(input)
    assert [m["id"] for m in sent["messages"]] == ["u1", "a1"]
    assert any("/messages" in w and "activity" in w for w in warnings)


def test_activity_messages_are_removed_from_a_struct_input_too() -> None:
    input = v1_1.RunAgentInput(
        thread_id="t",
        run_id="r",
        messages=[
            v1_1.ActivityMessage(id="act", activity_type="s", content={}),
            v1_1.UserMessage(id="u", content="hi"),
        ],
    )
    sent, warnings = prepare(input)
    assert [m["id"] for m in sent["messages"]] == ["u"]
    assert warnings


def test_what_a_consumer_received_goes_back_without_its_activity() -> None:
    # the next run's input built from the previous run's messages, as an application does
    stream = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "act", "activityType": "s", "content": {}},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "a1", "delta": "done"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"},
    ]
    result = consume([msgspec.json.encode(e) for e in stream])
    next_input = v1_1.RunAgentInput(
        thread_id="t", run_id="r2", messages=result.messages, state=result.state
    )
    sent, _ = prepare(next_input)
    assert [(m["role"], m["id"]) for m in sent["messages"]] == [("assistant", "a1")]


# --- protocolVersion -----------------------------------------------------------------------


def test_consumer_declares_the_version_it_speaks() -> None:
    sent, _ = prepare(base())
    assert sent["protocolVersion"] == "1.1"


def test_declaration_replaces_whatever_the_caller_put_there() -> None:
    sent, _ = prepare(base(protocolVersion="0.9"))
    assert sent["protocolVersion"] == "1.1"


def test_consumer_pinned_to_1_0_declares_1_0() -> None:
    sent, _ = prepare(base(), "1.0")
    assert sent["protocolVersion"] == "1.0"


def test_downgrade_to_1_0_strips_what_1_0_lacks_with_a_warning() -> None:
    reasoning = {
        "role": "reasoning",
        "id": "r1",
        "content": "x",
        "encryptedValue": "OPAQUE",
        "encryptedValueType": "vendor.sig",
    }
    sent, warnings = prepare(base(messages=[reasoning]), "1.0")
    assert sent["messages"] == [
        {"role": "reasoning", "id": "r1", "content": "x", "encryptedValue": "OPAQUE"}
    ]
    assert any("/messages/0/encryptedValueType" in w for w in warnings)


@pytest.mark.parametrize("era", ["0.0.57", "0.0.39"])
def test_no_declaration_toward_a_peer_that_predates_the_field(era: str) -> None:
    sent, _ = prepare(base(protocolVersion="1.1"), era)
    assert "protocolVersion" not in sent


# --- resuming an interrupted run -----------------------------------------------------------


def interrupted_run(*interrupts: Event) -> Run:
    """The run an application resumes from, as the consumer recorded it."""
    stream = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"},
        {
            "type": "RUN_FINISHED",
            "threadId": "t",
            "runId": "r1",
            "outcome": {"type": "interrupt", "interrupts": list(interrupts)},
        },
    ]
    result = consume([msgspec.json.encode(e) for e in stream])
    (run,) = result.runs
    assert run.status == "interrupted"
    return run


def resume(*entries: tuple[str, str]) -> list[Event]:
    return [{"interruptId": i, "status": status} for i, status in entries]


TWO = ({"id": "i1", "reason": "approval"}, {"id": "i2", "reason": "input"})


def test_resume_covering_every_interrupt_is_sent() -> None:
    run = interrupted_run(*TWO)
    entries = [
        {"interruptId": "i1", "status": "resolved", "payload": {"approved": True}},
        {"interruptId": "i2", "status": "cancelled"},
    ]
    sent, _ = prepare(base(resume=entries), interrupts=run.interrupts)
    assert sent["resume"] == entries


@pytest.mark.parametrize(
    ("entries", "uncovered"),
    [
        pytest.param(resume(("i1", "resolved")), "'i2'", id="one-of-two"),
        pytest.param(resume(("i2", "cancelled")), "'i1'", id="other-one-of-two"),
        pytest.param([], "'i1'", id="empty-resume"),
        pytest.param(None, "'i1'", id="no-resume"),
        pytest.param(resume(("i1", "resolved"), ("i3", "resolved")), "'i2'", id="wrong-id"),
    ],
)
def test_resume_leaving_an_interrupt_uncovered_is_rejected(
    entries: list[Event] | None, uncovered: str
) -> None:
    run = interrupted_run(*TWO)
    input = base() if entries is None else base(resume=entries)
    with pytest.raises(MalformedEvent) as caught:
        build_run_input(input, interrupts=run.interrupts)
    assert caught.value.rule == "resume-uncovered"
    assert caught.value.path == "/resume"
    assert uncovered in str(caught.value)


def test_resume_entry_dropped_as_unrecognised_does_not_cover_its_interrupt() -> None:
    run = interrupted_run(*TWO)
    entries = [{"interruptId": "i1", "status": "resolved"}, {"interruptId": "i2", "status": "?"}]
    with pytest.raises(MalformedEvent) as caught:
        build_run_input(base(resume=entries), interrupts=run.interrupts)
    assert caught.value.rule == "resume-uncovered"


EXPIRING = {"id": "i1", "reason": "approval", "expiresAt": "2030-01-01T00:00:00Z"}
BEFORE = datetime(2029, 12, 31, tzinfo=timezone.utc)
AFTER = datetime(2030, 1, 2, tzinfo=timezone.utc)


def test_resolving_an_expired_interrupt_is_rejected() -> None:
    run = interrupted_run(EXPIRING)
    with pytest.raises(MalformedEvent) as caught:
        build_run_input(
            base(resume=resume(("i1", "resolved"))), interrupts=run.interrupts, now=AFTER
        )
    assert caught.value.rule == "resume-expired"


def test_a_now_without_a_zone_is_read_as_utc() -> None:
    """It raised TypeError comparing itself with the expiry (naive against aware)."""
    run = interrupted_run(EXPIRING)
    resolved = base(resume=resume(("i1", "resolved")))
    with pytest.raises(MalformedEvent, match="expired"):
        build_run_input(resolved, interrupts=run.interrupts, now=AFTER.replace(tzinfo=None))
    sent, _ = prepare(resolved, interrupts=run.interrupts, now=BEFORE.replace(tzinfo=None))
    assert sent["resume"] == resume(("i1", "resolved"))


def test_abandoning_an_expired_interrupt_is_sent() -> None:
    run = interrupted_run(EXPIRING)
    sent, _ = prepare(
        base(resume=resume(("i1", "cancelled"))), interrupts=run.interrupts, now=AFTER
    )
    assert sent["resume"] == resume(("i1", "cancelled"))


def test_resolving_an_interrupt_before_it_expires_is_sent() -> None:
    run = interrupted_run(EXPIRING)
    sent, _ = prepare(
        base(resume=resume(("i1", "resolved"))), interrupts=run.interrupts, now=BEFORE
    )
    assert sent["resume"] == resume(("i1", "resolved"))


def test_input_that_resumes_nothing_is_not_checked_for_coverage() -> None:
    sent, _ = prepare(base())
    assert "resume" not in sent


# --- the run input a consumer is seeded with is read like outgoing input -------------------------

START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def run(*events: dict[str, Any], **options: Any) -> agui.Result:
    return agui.consume([msgspec.json.encode(e) for e in (START, *events, FINISH)], **options)


def test_the_run_input_is_stripped_not_refused() -> None:
    seed = {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u", "role": "user", "content": "hi", "future": 1}],
    }
    result = run(input=seed)
    assert result.outcome == "completed"
    assert [msgspec.to_builtins(m) for m in result.messages] == [
        {"id": "u", "role": "user", "content": "hi"}
    ]
    assert any("input /messages/0/future" in w for w in result.warnings)


def test_a_newer_versions_input_seeds_an_older_consumer() -> None:
    seed = agui.RunAgentInput(
        thread_id="t", run_id="r", messages=[agui.UserMessage(id="u", content="hi")]
    )
    result = run(input=seed, version="1.0")
    assert result.outcome == "completed"
    assert [m.id for m in result.messages] == ["u"]


def test_a_malformed_run_input_is_a_failed_verdict_not_an_exception() -> None:
    result = run(input={"threadId": "t", "runId": 5, "messages": []})
    assert result.outcome == "failed"
    assert result.violation is not None
    assert result.violation.rule == "malformed-input"


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"state": {"a": float("nan")}}, id="NaN"),
        pytest.param({"forwardedProps": {"a": float("inf")}}, id="infinity"),
        pytest.param({"threadId": b"t"}, id="bytes"),
        pytest.param({"threadId": datetime(2020, 1, 1, tzinfo=timezone.utc)}, id="datetime"),
    ],
)
def test_an_input_holding_a_value_json_has_no_form_for_is_refused_not_rewritten(
    change: dict[str, Any],
) -> None:
    document = {"threadId": "t", "runId": "r", "messages": [], **change}
    for entry in (agui.parse_run_input, build_run_input):
        with pytest.raises(agui.MalformedInput, match="not JSON"):
            entry(document)


def test_an_input_struct_nested_past_the_interpreter_is_too_deep_not_a_recursion_error() -> None:
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    struct = v1_1.RunAgentInput(thread_id="t", run_id="r", messages=[], state={"a": deep})
    for entry in (agui.parse_run_input, build_run_input, lambda given: agui.Consumer(input=given)):
        with pytest.raises(agui.MalformedInput, match="nests too deeply"):
            entry(struct)
