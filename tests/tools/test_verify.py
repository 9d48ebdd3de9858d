"""``verify()``: every finding of a stream in one pass (issue 23, items 1 and 3): violations
past the first with the offending event set aside, warnings with their event and path,
hints that never change a verdict, the same event numbers everywhere, spec links."""

from __future__ import annotations

import io
import json
import os
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from agui_msgspec import consume_body, proto_frame, v1_1
from agui_msgspec._errors import UsageError
from agui_msgspec._rules import RULES
from agui_msgspec._tools import verify as verify_module
from agui_msgspec._tools.cli import main
from agui_msgspec._tools.verify import verify

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STREAMS = Path(__file__).resolve().parents[2].parent / "shared/agui/conformance/1.1/streams"
START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def sse(*documents: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(d).encode() + b"\n\n" for d in documents)


def jsonl(*documents: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(d).encode() + b"\n" for d in documents)


def test_a_conformant_stream_has_no_findings() -> None:
    report = verify(sse(START, FINISH))
    assert report.verdict == "accepted"
    assert report.findings == []
    assert [(e.received_index, e.delivered_index, e.type) for e in report.events] == [
        (0, 0, "RUN_STARTED"),
        (1, 1, "RUN_FINISHED"),
    ]


def test_two_independent_violations_are_both_reported_with_their_links() -> None:
    stream = [
        START,
        {"type": "TEXT_MESSAGE_START", "messageId": "m"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "late"},  # closed at 2
        {"type": "STEP_FINISHED", "stepName": "never-started"},
        FINISH,
    ]
    report = verify(sse(*stream))
    assert report.verdict == "rejected"
    first, second = report.violations
    assert (first.rule, first.received_index, first.related_index) == (
        "text-message-not-open",
        3,
        2,
    )
    assert first.spec_url == "https://docs.ag-ui.com/spec/1.1/events/text-messages#error-handling"
    assert not first.after_violation
    assert (second.rule, second.received_index, second.after_violation) == (
        "step-not-open",
        4,
        True,
    )
    assert second.spec_url == "https://docs.ag-ui.com/spec/1.1/events/lifecycle#steps"
    # set aside, the stream read on: the run still finishes cleanly after them
    assert [e.status for e in report.events] == [
        "delivered", "delivered", "delivered", "set-aside", "set-aside", "delivered",
    ]  # fmt: skip


def test_first_stops_at_the_first_violation() -> None:
    stream = [
        START,
        {"type": "TOOL_CALL_END", "toolCallId": "x"},
        {"type": "STEP_FINISHED", "stepName": "s"},
        FINISH,
    ]
    report = verify(sse(*stream), first=True)
    assert [f.rule for f in report.violations] == ["tool-call-not-open"]
    assert [e.received_index for e in report.events] == [0, 1]
    assert report.up_to_first_violation().findings == report.findings


def test_the_verdict_and_result_are_the_consumers() -> None:
    body = sse(START, {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{"}, FINISH)
    report = verify(body)
    expected = consume_body(body)
    assert report.result.outcome == expected.outcome == "failed"
    assert str(report.result.violation) == str(expected.violation)
    assert report.result.events == expected.events


@pytest.mark.parametrize(
    ("tail", "rule"),
    [(b"\xff\xff\xff\xff", "event-too-large"), (b"\x00\x00\x00\x02\xff\xff", "malformed-frame")],
    ids=["event-too-large", "malformed-frame"],
)
def test_a_body_the_reader_cannot_frame_is_rejected_as_consume_body_rejects_it(
    tail: bytes, rule: str
) -> None:
    """The reader's TransportError was reported as a violation under an accepted verdict."""
    body = proto_frame(START) + tail
    report = verify(body)
    expected = consume_body(body)
    assert expected.violation is not None
    assert (report.verdict, report.result.outcome) == ("rejected", "failed")
    (violation,) = report.violations
    assert (violation.rule, violation.received_index, violation.path) == (
        rule,
        expected.violation.index,
        expected.violation.path,
    )
    assert str(report.result.violation) == str(expected.violation)
    assert report.failed()


def test_an_sse_event_over_max_event_size_is_rejected() -> None:
    report = verify(
        sse(START, {"type": "CUSTOM", "name": "x", "value": "a" * 200}), max_event_size=100
    )
    assert report.verdict == "rejected"
    assert [(f.rule, f.received_index) for f in report.violations] == [("event-too-large", 1)]


def test_a_late_event_relates_to_the_run_finished_it_follows() -> None:
    report = verify(sse(START, FINISH, {"type": "CUSTOM", "name": "x", "value": 1}))
    (violation,) = report.violations
    assert (violation.rule, violation.related_index) == ("event-after-run-finished", 1)


def test_a_chunk_only_stream_names_one_event_number_everywhere() -> None:
    """LlamaIndex sends only chunks: a received frame expands to several delivered events,
    so a violation at a late chunk is at another delivered index than its frame."""
    chunks = [
        START,
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "delta": "a"},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "b"},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "c1", "toolCallName": "f", "delta": "{}"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m2", "role": "user", "delta": "c"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m2", "role": "assistant", "delta": "d"},
        FINISH,
    ]
    report = verify(jsonl(*chunks))
    (violation,) = report.violations
    assert (violation.rule, violation.received_index) == ("chunk-conflicting-repeat", 5)
    # frames 1-4 delivered 8 events (chunks expanded, streams closed): the timeline numbers
    # those, and the set-aside frame is named by its frame number, not a delivered one
    delivered = [e for e in report.events if e.delivered_index is not None]
    assert [e.delivered_index for e in delivered] == list(range(len(delivered)))
    assert 5 not in {e.received_index for e in delivered}
    assert len(delivered) > 7  # more delivered events than frames: the numbers differ
    aside = [e for e in report.events if e.status == "set-aside"]
    assert [e.received_index for e in aside] == [5]
    assert violation.related_index == next(
        e.delivered_index for e in report.events if e.type == "TEXT_MESSAGE_START"
        and e.event.get("messageId") == "m2"
    )  # fmt: skip


def test_warnings_name_their_event_and_path() -> None:
    stream = [
        START,
        {"type": "CUSTOM", "name": "x", "value": 1, "extra": True},
        {"type": "NOPE"},
        FINISH,
    ]
    report = verify(sse(*stream))
    assert report.verdict == "accepted"
    stripped, dropped = report.warnings
    assert (stripped.rule, stripped.received_index, stripped.delivered_index, stripped.path) == (
        "stripped-content", 1, 1, "/extra",
    )  # fmt: skip
    assert (dropped.rule, dropped.received_index, dropped.delivered_index) == (
        "dropped-event",
        2,
        None,
    )
    assert report.events[2].status == "dropped"


def test_payloads_are_read_as_consume_reads_them() -> None:
    report = verify([START, json.dumps(FINISH)])
    assert report.verdict == "accepted"
    assert len(report.events) == 2


def test_max_violations_stops_the_reading_and_says_so() -> None:
    late = [{"type": "CUSTOM", "name": "x", "value": i} for i in range(10)]
    report = verify(sse(START, FINISH, *late), max_violations=3)
    assert len(report.violations) == 3
    assert report.findings[-1].rule == "too-many-violations"


# --- hints -------------------------------------------------------------------------------

# A LangGraph body as ag-ui-langgraph 0.0.47 sends it (tests/interop, langgraph "backend"):
# the model streamed '{"city":' then '"Paris"}', and only the second delta went out, until
# MESSAGES_SNAPSHOT restated the call whole. Built from what the interop suite records of
# the app (no recorded body is in the repository).
LANGGRAPH_DROPPED_ARGUMENTS = [
    START,
    {"type": "STEP_STARTED", "stepName": "agent"},
    {"type": "TOOL_CALL_START", "toolCallId": "call-w", "toolCallName": "get_weather"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "call-w", "delta": '"Paris"}'},
    {"type": "TOOL_CALL_END", "toolCallId": "call-w"},
    {"type": "RAW", "event": {"event": "on_chat_model_end"}},
    {"type": "STEP_FINISHED", "stepName": "agent"},
    {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [
            {"id": "u1", "role": "user", "content": "weather in Paris?"},
            {
                "id": "a1",
                "role": "assistant",
                "toolCalls": [
                    {
                        "id": "call-w",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
        ],
    },
    FINISH,
]


def test_dropped_tool_arguments_hint_on_the_langgraph_body() -> None:
    report = verify(sse(*LANGGRAPH_DROPPED_ARGUMENTS))
    assert report.verdict == "accepted"
    (hint,) = report.hints
    assert (hint.rule, hint.received_index) == ("tool-arguments-not-json", 4)
    assert hint.spec_url == "https://docs.ag-ui.com/spec/1.1/events/tool-calls#tool_call_end"


def test_whole_tool_arguments_give_no_hint() -> None:
    first_delta = {"type": "TOOL_CALL_ARGS", "toolCallId": "call-w", "delta": '{"city":'}
    stream = [*LANGGRAPH_DROPPED_ARGUMENTS[:3], first_delta, *LANGGRAPH_DROPPED_ARGUMENTS[3:]]
    assert verify(sse(*stream)).hints == []


def _chunk(call: str, delta: str) -> dict[str, Any]:
    """A chunk of call ``call``, named on each (a reopened call's first chunk must be)."""
    return {"type": "TOOL_CALL_CHUNK", "toolCallId": call, "toolCallName": "f", "delta": delta}


def test_arguments_of_interleaved_chunks_are_judged_whole() -> None:
    """Interleaved chunks close and reopen each call: the arguments a first close leaves are
    a part, not the call's (CrewAI's parallel calls; the hint fired on each part)."""
    stream = [
        START,
        _chunk("a", '{"city": '),
        _chunk("b", '{"color": '),
        _chunk("a", '"Oslo"}'),
        _chunk("b", '"red"}'),
        FINISH,
    ]
    report = verify(sse(*stream))
    assert report.verdict == "accepted"
    assert report.hints == []


def test_arguments_left_broken_are_hinted_at_the_calls_last_end() -> None:
    stream = [
        START,
        _chunk("a", '{"city": '),
        _chunk("b", '{"color": "red"}'),
        _chunk("a", '"Oslo"'),  # the closing brace never comes
        _chunk("b", ""),
        FINISH,
    ]
    report = verify(sse(*stream))
    (hint,) = report.hints
    assert hint.rule == "tool-arguments-not-json"
    assert "'a'" in hint.message
    assert '"Oslo"' in hint.message
    end = [e for e in report.events if e.type == "TOOL_CALL_END" and e.event["toolCallId"] == "a"]
    assert hint.delivered_index == end[-1].delivered_index  # the last close, not the first


def test_arguments_of_a_stream_that_ends_without_its_run_end_are_judged() -> None:
    stream = [
        START,
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": '{"x": '},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
    ]
    report = verify(sse(*stream))
    assert report.verdict == "rejected"  # truncated
    assert [(h.rule, h.received_index) for h in report.hints] == [("tool-arguments-not-json", 3)]


STREAMED_TEXT = [
    {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hello, "},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "world"},
    {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
]


def test_the_state_history_keeps_max_state_history_bytes_then_says_where_it_stops() -> None:
    """Each state event kept a whole copy of the state: a 1 MB snapshot and 1,000 one-value
    deltas held 5.7 GB for ``check --format json``."""
    snapshot = {"type": "STATE_SNAPSHOT", "snapshot": {"big": "x" * 2**20, "c": 0}}
    deltas = [
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/c", "value": i}]}
        for i in range(1, 20)
    ]
    report = verify(sse(START, snapshot, *deltas, FINISH))
    kept = sum(len(json.dumps(step.state)) for step in report.states)
    assert kept <= 16 * 2**20
    assert [step.state["c"] for step in report.states] == list(range(15))
    assert report.verdict == "accepted"
    assert [(f.rule, f.severity, f.delivered_index) for f in report.findings] == [
        ("state-history-too-large", "warning", 16)  # the first state left out
    ]
    whole = verify(sse(START, snapshot, *deltas, FINISH), max_state_history=2**30)
    assert len(whole.states) == 20
    assert whole.findings == []


def test_max_state_history_is_a_bound_option() -> None:
    with pytest.raises(UsageError, match="max_state_history"):
        verify(sse(START, FINISH), max_state_history=-1)


def test_check_first_holds_streamed_text_joined_not_a_str_per_delta(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The hints kept each text and argument delta as a str until its end (about 59 bytes
    for 2 characters): ``check --first`` on 200 MB of deltas peaked at 279 MB."""
    n = 20_000
    text = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "ab"}
    call = {
        "type": "TOOL_CALL_START",
        "toolCallId": "c",
        "toolCallName": "f",
        "parentMessageId": "m",
    }
    arguments = {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "1,"}
    body = b"".join([
        sse(START, {"type": "TEXT_MESSAGE_START", "messageId": "m"}), sse(text) * n,
        sse({"type": "TEXT_MESSAGE_END", "messageId": "m"}, call, {**arguments, "delta": "["}),
        sse(arguments) * n,
        sse({**arguments, "delta": "1]"}, {"type": "TOOL_CALL_END", "toolCallId": "c"}, FINISH),
    ])  # fmt: skip

    class Stdin:  # read a little at a time: what is held, not what one read brings
        buffer = io.BytesIO(body)

    whole = Stdin.buffer.read1
    monkeypatch.setattr(Stdin.buffer, "read1", lambda size=-1: whole(4096))
    monkeypatch.setattr(sys, "stdin", Stdin)
    with open(os.devnull, "w") as devnull:
        monkeypatch.setattr(sys, "stdout", devnull)
        tracemalloc.start()
        try:
            assert main(["check", "--first", "-"]) == 0
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 1.25 * 2**20  # 1.9 MiB as a str per delta


RESULT = {"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "c", "content": "42"}


@pytest.mark.parametrize(
    ("snapshot", "renamed"),
    [
        ({"id": "lc-1", "role": "assistant", "content": "Hello, world"}, "m1"),
        ({"id": "lc-2", "role": "tool", "content": "42", "toolCallId": "c"}, "t1"),
        ({"id": "m1", "role": "assistant", "content": "Hello, world"}, None),
        ({"id": "lc-3", "role": "assistant", "content": "Hello"}, None),  # another text
    ],
)
def test_a_snapshot_renaming_a_streamed_message_hints(
    snapshot: dict[str, Any], renamed: str | None
) -> None:
    """The hint knew only the input's messages' content: a streamed one (ADK's and CrewAI's
    snapshots rename theirs) was never matched."""
    tool_call = [
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f", "parentMessageId": "m1"},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
        RESULT,
    ]  # fmt: skip
    body = sse(START, *STREAMED_TEXT, *tool_call, {"type": "MESSAGES_SNAPSHOT", "messages": [snapshot]}, FINISH)  # fmt: skip
    hints = [(hint.rule, hint.message) for hint in verify(body).hints]
    if renamed is None:
        assert hints == []
    else:
        assert hints == [
            ("snapshot-renames-messages",
             f"the snapshot gives message {renamed!r} the new id {snapshot['id']!r}")
        ]  # fmt: skip


def test_a_snapshot_renaming_what_an_earlier_snapshot_gave_hints() -> None:
    given = {"id": "s1", "role": "assistant", "content": "Restated"}
    first = {"type": "MESSAGES_SNAPSHOT", "messages": [given]}
    second = {"type": "MESSAGES_SNAPSHOT", "messages": [{**given, "id": "s2"}]}
    hints = [
        (hint.rule, hint.received_index) for hint in verify(sse(START, first, second, FINISH)).hints
    ]
    assert hints == [("snapshot-renames-messages", 2)]


def test_a_snapshot_costs_its_own_messages_not_every_message_seen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each MESSAGES_SNAPSHOT was held against every message seen before it: N streamed
    messages and N snapshots cost N² (3 MB, 17 s for ``check --first``). Counted here by
    the messages' keys made, not timed."""
    made = 0
    hashable = verify_module._hashable

    def counted(value: Any) -> Any:
        nonlocal made
        made += 1
        return hashable(value)

    monkeypatch.setattr(verify_module, "_hashable", counted)
    n = 300
    streamed = [
        {"type": kind, "messageId": f"m{i}", "delta": "x"}
        if kind == "TEXT_MESSAGE_CONTENT"
        else {"type": kind, "messageId": f"m{i}"}
        for i in range(n)
        for kind in ("TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END")
    ]
    snapshots = [
        {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": id, "role": "assistant", "content": "x"}]}
        for id in [*(f"m{i}" for i in range(n)), "new"]
    ]
    report = verify(sse(START, *streamed, *snapshots, FINISH))
    assert [(hint.rule, hint.message) for hint in report.hints] == [
        ("snapshot-renames-messages", "the snapshot gives message 'm299' the new id 'new'")
    ]
    assert made < 10 * n  # a few per message; N² was 90,000


@pytest.mark.parametrize(
    ("events", "rule", "path"),
    [
        ([{"type": "RUN_STARTD", "threadId": "t", "runId": "r"}], "near-miss-event-type", "/type"),
        ([{"type": "text_message_start", "messageId": "m"}], "near-miss-event-type", "/type"),
        ([{"type": "RAW", "event": {"type": "TEXT_MESSAGE_START", "messageId": "m"}}],
         "raw-wraps-typed-event", "/event"),
        ([{"type": "TEXT_MESSAGE_START", "messageId": "m"},
          {"type": "TEXT_MESSAGE_END", "messageId": "m"},
          {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f",
           "parentMessageId": "nowhere"}, {"type": "TOOL_CALL_END", "toolCallId": "c"}],
         "unknown-parent-message", "/parentMessageId"),
        ([{"type": "CUSTOM", "name": "x", "value": 1, "timestamp": 1_718_000_000}],
         "timestamp-in-seconds", "/timestamp"),
    ],
    ids=["near-miss", "near-miss-case", "raw", "parent", "seconds"],
)  # fmt: skip
def test_each_hint_fires_and_never_changes_the_verdict(
    events: list[dict[str, Any]], rule: str, path: str
) -> None:
    report = verify(sse(START, *events, FINISH))
    assert report.verdict == "accepted"
    assert [(h.rule, h.path) for h in report.hints] == [(rule, path)]
    assert RULES[rule].severity == "hint"
    assert report.hints[0].spec_url


def test_a_timestamp_in_milliseconds_gives_no_hint() -> None:
    event = {"type": "CUSTOM", "name": "x", "value": 1, "timestamp": 1_718_000_000_000}
    assert verify(sse(START, event, FINISH)).hints == []


def test_a_call_minting_its_own_parent_message_gives_no_hint() -> None:
    call = {
        "type": "TOOL_CALL_START",
        "toolCallId": "c",
        "toolCallName": "f",
        "parentMessageId": "new",
    }
    assert (
        verify(sse(START, call, {"type": "TOOL_CALL_END", "toolCallId": "c"}, FINISH)).hints == []
    )


def test_a_parent_message_the_stream_gave_gives_no_hint() -> None:
    stream = [
        START,
        {"type": "TEXT_MESSAGE_START", "messageId": "m"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f", "parentMessageId": "m"},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
        FINISH,
    ]
    assert verify(sse(*stream)).hints == []


def test_a_snapshot_renaming_a_message_of_the_input_hints() -> None:
    user = {"id": "u1", "role": "user", "content": "hi"}
    renamed = {"type": "MESSAGES_SNAPSHOT", "messages": [{**user, "id": "lc-123"}]}
    input = {"threadId": "t", "runId": "r", "messages": [user]}
    report = verify(sse(START, renamed, FINISH), input=input)
    assert [(h.rule, h.path) for h in report.hints] == [
        ("snapshot-renames-messages", "/messages/0/id")
    ]
    kept = {"type": "MESSAGES_SNAPSHOT", "messages": [user]}
    assert verify(sse(START, kept, FINISH), input=input).hints == []


@pytest.mark.parametrize("form", ["dict", "struct", "official"])
def test_the_input_is_read_in_every_form_the_consumer_takes(form: str) -> None:
    """verify() read the input's messages for its hints with ``msgspec.to_builtins``, which
    refuses an official ``RunAgentInput``: it raised TypeError instead of reporting."""
    user = {"id": "u1", "role": "user", "content": "hi"}
    document = {"threadId": "t", "runId": "r", "messages": [user], "tools": [],
                "context": [], "state": {}, "forwardedProps": {}}  # fmt: skip
    forms: dict[str, Any] = {
        "dict": lambda: document,
        "struct": lambda: v1_1.RunAgentInput(
            thread_id="t", run_id="r", messages=[v1_1.UserMessage(id="u1", content="hi")]
        ),
        "official": lambda: pytest.importorskip("ag_ui.core").RunAgentInput.model_validate(
            document
        ),
    }
    renamed = {"type": "MESSAGES_SNAPSHOT", "messages": [{**user, "id": "lc-123"}]}
    report = verify(sse(START, renamed, FINISH), input=forms[form]())
    assert report.verdict == "accepted"
    assert [hint.rule for hint in report.hints] == ["snapshot-renames-messages"]


def test_levels_change_a_hint_and_off_silences_it() -> None:
    body = sse(*LANGGRAPH_DROPPED_ARGUMENTS)
    raised = verify(body, levels={"tool-arguments-not-json": "violation"})
    assert raised.verdict == "accepted"  # a hint never changes the verdict...
    assert raised.failed()  # ...but the CI policy fails on it
    assert verify(body, levels={"tool-arguments-not-json": "off"}).findings == []
    with pytest.raises(UsageError):
        verify(body, levels={"text-message-not-open": "off"})
    with pytest.raises(UsageError):
        verify(body, levels={"no-such-rule": "hint"})


def conformant_bodies() -> list[tuple[str, bytes | list[Any]]]:
    bodies: list[tuple[str, bytes | list[Any]]] = [
        (path.name, path.read_bytes())
        for path in sorted(EXAMPLES.iterdir())
        if path.suffix in (".sse", ".jsonl") and path.stem != "rejected-stream"
    ]
    if STREAMS.is_dir():
        for path in sorted(STREAMS.glob("*.json")):
            fixture = json.loads(path.read_text())
            if fixture.get("expect", {}).get("outcome") == "completed":
                bodies.append((path.name, fixture["stream"]))
    return bodies


@pytest.mark.parametrize(("name", "body"), conformant_bodies(), ids=lambda v: str(v)[:40])
def test_no_hint_fires_on_a_conformant_stream(name: str, body: bytes | list[Any]) -> None:
    report = verify(body)
    assert report.verdict == "accepted", name
    assert report.hints == []
