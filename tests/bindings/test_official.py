"""Interop with the official pydantic SDK (``ag-ui-protocol``): the converters both ways,
and official objects accepted wherever a wire-named dict is (consume, Consumer.feed,
StrictWriter.frame, parse_run_input, EventStream)."""

from __future__ import annotations

import contextlib
import gc
import json
import subprocess
import sys
import weakref
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("ag_ui.core", reason="the interop tests need the tests extra (ag-ui-protocol)")

import ag_ui.core as official
import pydantic
from nesting import nested_lists
from pydantic import TypeAdapter
from strategies import valid_streams

import agui_msgspec as agui
from agui_msgspec import v1_0, v1_1

STREAMS = (
    Path(__file__).resolve().parents[3] / "shared" / "agui" / "conformance" / "1.1" / "streams"
)
OFFICIAL_EVENT = TypeAdapter(official.Event)

USAGE = {"provider": "openai", "model": "m", "inputTokens": 3, "outputTokens": 4, "totalTokens": 7}
MESSAGES = [
    {"role": "user", "id": "u1", "content": [{"type": "text", "text": "hi"}], "name": "ann"},
    {
        "role": "assistant",
        "id": "a1",
        "content": "ok",
        "toolCalls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "id": "t1", "toolCallId": "c1", "content": "18 C"},
]
META = {"metadata": {"k": [1, None]}, "timestamp": 17, "rawEvent": {"vendor": True}}

# One wire event of every type, with optional fields present and absent.
EVERY_EVENT: list[dict[str, Any]] = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.1", **META},
    {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant", "name": "bot"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m2"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hel", "subagentRunId": "s"},
    {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m3", "role": "user", "delta": "x"},
    {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f", "parentMessageId": "m1"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{}"},
    {"type": "TOOL_CALL_END", "toolCallId": "c1"},
    {"type": "TOOL_CALL_CHUNK", "toolCallId": "c2", "toolCallName": "g", "delta": "{"},
    {"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "c1", "content": "ok"},
    {
        "type": "TOOL_CALL_RESULT",
        "messageId": "t2",
        "toolCallId": "c1",
        "content": "ok",
        "role": "tool",
    },
    {"type": "STATE_SNAPSHOT", "snapshot": {"a": [1, 2.5, None, {"b": "c"}]}},
    {"type": "STATE_SNAPSHOT", "snapshot": None},
    {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/a/-", "value": None}]},
    {"type": "MESSAGES_SNAPSHOT", "messages": MESSAGES},
    {"type": "ACTIVITY_SNAPSHOT", "messageId": "p1", "activityType": "plan", "content": {"s": 1}},
    {
        "type": "ACTIVITY_SNAPSHOT",
        "messageId": "p1",
        "activityType": "plan",
        "content": {},
        "replace": False,
    },
    {"type": "ACTIVITY_DELTA", "messageId": "p1", "activityType": "plan", "patch": []},
    {"type": "RAW", "event": {"x": 1}, "source": "vendor"},
    {"type": "CUSTOM", "name": "n", "value": None},
    {
        "type": "RUN_FINISHED",
        "threadId": "t",
        "runId": "r",
        "result": {"answer": 42},
        "usage": [USAGE],
        "outcome": {"type": "interrupt", "interrupts": [{"id": "i1", "reason": "approval"}]},
    },
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "cancelled"}},
    {"type": "RUN_ERROR", "message": "boom", "code": "E1", "usage": [USAGE]},
    {"type": "STEP_STARTED", "stepName": "plan"},
    {"type": "STEP_FINISHED", "stepName": "plan"},
    {"type": "REASONING_START", "messageId": "r1"},
    {"type": "REASONING_MESSAGE_START", "messageId": "r2", "role": "reasoning"},
    {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r2", "delta": "hm"},
    {"type": "REASONING_MESSAGE_END", "messageId": "r2"},
    {"type": "REASONING_MESSAGE_CHUNK", "messageId": "r3", "delta": "hm"},
    {"type": "REASONING_END", "messageId": "r1"},
    {
        "type": "REASONING_ENCRYPTED_VALUE",
        "subtype": "message",
        "entityId": "r2",
        "encryptedValue": "opaque",
    },
    {"type": "SUBAGENT_STARTED", "subagentRunId": "s", "name": "researcher"},
    {"type": "SUBAGENT_FINISHED", "subagentRunId": "s"},
    {"type": "SUBAGENT_ERROR", "subagentRunId": "s", "message": "gave up"},
]


# Where the schema has a default and the official model None ("absent means the default"),
# to_official writes the default.
SCHEMA_DEFAULTS = {
    "TEXT_MESSAGE_START": {"role": "assistant"},
    "ACTIVITY_SNAPSHOT": {"replace": True},
}


def with_schema_defaults(model: Any) -> Any:
    defaults = SCHEMA_DEFAULTS.get(model.type.value, {})
    return model.model_copy(
        update={name: value for name, value in defaults.items() if getattr(model, name) is None}
    )


def test_the_sample_covers_every_event_type() -> None:
    assert {event["type"] for event in EVERY_EVENT} == set(v1_1.EVENT_TYPES)


@pytest.mark.parametrize("wire", EVERY_EVENT, ids=lambda wire: wire["type"])
def test_every_event_type_converts_both_ways(wire: dict[str, Any]) -> None:
    model = OFFICIAL_EVENT.validate_python(wire)
    struct = msgspec.convert(wire, v1_1.Event)
    assert agui.from_official(model) == struct
    assert agui.to_official(struct) == with_schema_defaults(model)  # absent stays absent
    assert agui.from_official(agui.to_official(struct)) == struct


def test_a_default_survives_and_absent_means_the_default() -> None:
    explicit = official.TextMessageStartEvent(message_id="m", role="assistant")
    assert agui.to_official(agui.from_official(explicit)) == explicit
    # The schema's default is written out: the official model's None means the same.
    absent = agui.from_official(official.TextMessageStartEvent(message_id="m"))
    assert absent.role == "assistant"
    assert agui.to_official(absent).role == "assistant"
    assert (
        agui.to_official(
            v1_1.ActivitySnapshotEvent(message_id="p", activity_type="a", content={})
        ).replace
        is True
    )


def test_absent_fields_stay_absent_not_null() -> None:
    struct = agui.from_official(official.RunStartedEvent(thread_id="t", run_id="r"))
    assert struct.parent_run_id is msgspec.UNSET
    assert struct.timestamp is msgspec.UNSET
    assert agui.encode(struct) == b'{"type":"RUN_STARTED","threadId":"t","runId":"r"}'
    model = agui.to_official(struct)
    assert model.parent_run_id is None
    assert model.model_dump(by_alias=True) == {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}


def test_messages_and_run_input_convert() -> None:
    input = official.RunAgentInput.model_validate(
        {
            "threadId": "t",
            "runId": "r",
            "messages": MESSAGES,
            "tools": [{"name": "f", "description": "d", "parameters": {"type": "object"}}],
            "context": [{"description": "tz", "value": "UTC"}],
            "state": {},
            "forwardedProps": {"x": None},
        }
    )
    struct = agui.from_official(input)
    assert isinstance(struct, v1_1.RunAgentInput)
    assert struct == msgspec.convert(
        input.model_dump(by_alias=True, mode="json"), v1_1.RunAgentInput
    )
    assert agui.to_official(struct) == input
    message = official.UserMessage(id="u", content="hi")
    assert agui.from_official(message) == v1_1.UserMessage(id="u", content="hi")
    assert agui.to_official(v1_1.UserMessage(id="u", content="hi")) == message


def test_version_selects_the_bindings() -> None:
    event = official.TextMessageContentEvent(message_id="m", delta="x")
    assert type(agui.from_official(event, version="1.0")) is v1_0.TextMessageContentEvent
    assert type(agui.from_official(event, version=v1_0)) is v1_0.TextMessageContentEvent


def test_material_the_version_has_no_place_for_is_named() -> None:
    event = official.TextMessageStartEvent.model_validate(
        {"messageId": "m", "traceId": "x", "vendor": 1}
    )
    with pytest.raises(agui.ProtocolViolation) as refused:
        agui.from_official(event)
    assert refused.value.rule == "unrecognised-content"
    assert "/traceId" in str(refused.value)
    assert "/vendor" in str(refused.value)
    # A 1.1 field is material 1.0 does not have.
    part = official.ToolCall.model_validate(
        {"id": "c", "function": {"name": "f", "arguments": ""}, "encryptedValueType": "k"}
    )
    assert agui.from_official(part).encrypted_value_type == "k"
    with pytest.raises(agui.ProtocolViolation, match="encryptedValueType"):
        agui.from_official(part, version="1.0")


def test_a_value_the_schema_rejects_is_malformed() -> None:
    event = official.StateSnapshotEvent.model_construct(snapshot={}, timestamp="soon")
    with pytest.raises(agui.MalformedEvent) as refused:
        agui.from_official(event)
    assert (refused.value.rule, refused.value.path) == ("malformed-event", "/timestamp")
    assert str(refused.value).startswith("[malformed-event] StateSnapshotEvent at /timestamp")


@pytest.mark.parametrize(
    ("struct", "rule", "path"),
    [
        (v1_1.RunStartedEvent(thread_id=5, run_id="r"), "malformed-event", "/threadId"),  # type: ignore[arg-type]
        (v1_1.TextMessageStartEvent(message_id="m", role="narrator"), "malformed-event", "/role"),  # type: ignore[arg-type]
        (v1_1.StateSnapshotEvent(snapshot=object()), "invalid-json", ""),
        (v1_1.StateSnapshotEvent(snapshot=nested_lists(100_000)), "too-deep", ""),
    ],
    ids=["wrong-type", "unknown-role", "not-json", "too-deep"],
)
def test_to_official_refuses_a_struct_its_schema_rejects(
    struct: msgspec.Struct, rule: str, path: str
) -> None:
    """A Struct is not validated when built: to_official judges it as from_official judges a
    model, rather than letting pydantic's ValidationError or a RecursionError out."""
    with pytest.raises(agui.MalformedEvent) as refused:
        agui.to_official(struct)
    assert (refused.value.rule, refused.value.path) == (rule, path)


def test_a_model_without_counterpart_is_a_usage_error() -> None:
    from pydantic import BaseModel  # noqa: PLC0415

    class Forecast(BaseModel):
        city: str

    with pytest.raises(agui.UsageError, match="Forecast"):
        agui.from_official(Forecast(city="Paris"))

    class Local(msgspec.Struct):
        city: str

    with pytest.raises(agui.UsageError, match="Local"):
        agui.to_official(Local(city="Paris"))


def official_run() -> list[Any]:
    return [
        official.RunStartedEvent(thread_id="t", run_id="r"),
        official.TextMessageStartEvent(message_id="m", role="assistant"),
        official.TextMessageContentEvent(message_id="m", delta="Hello"),
        official.TextMessageEndEvent(message_id="m"),
        official.StateSnapshotEvent(snapshot={"n": 1, "units": None}),
        official.RunFinishedEvent(thread_id="t", run_id="r", result={"ok": True}),
    ]


def test_consume_takes_official_events() -> None:
    events = official_run()
    result = agui.consume(events)
    assert result.outcome == "completed", result.violation
    assert result.warnings == []
    assert [agui.to_official(event) for event in result.events] == events
    assert result.messages == [v1_1.AssistantMessage(id="m", content="Hello")]
    assert result.state == {"n": 1, "units": None}
    assert agui.consume(iter(events)).events == result.events  # one by one, not batched


def test_consume_takes_an_official_input() -> None:
    input = official.RunAgentInput(
        thread_id="t",
        run_id="r",
        messages=[official.UserMessage(id="u", content="hi")],
        state={"n": 0},
        tools=[],
        context=[],
        forwarded_props={},
    )
    result = agui.consume(official_run(), input=input)
    assert [m.id for m in result.messages] == ["u", "m"]


def test_consumer_feed_strips_official_extras_with_a_warning() -> None:
    consumer = agui.Consumer()
    consumer.feed(official.RunStartedEvent(thread_id="t", run_id="r"))
    [event] = consumer.feed(official.StepStartedEvent.model_validate({"stepName": "s", "x": 1}))
    assert event == v1_1.StepStartedEvent(step_name="s")
    assert consumer.warnings == ["event 1 /x: removed unrecognised property"]
    assert consumer.feed_many(
        [
            official.StepFinishedEvent(step_name="s"),
            b'{"type":"RUN_FINISHED","threadId":"t","runId":"r"}',
        ]
    )
    consumer.close()


def test_consume_rejects_an_official_event_out_of_order() -> None:
    result = agui.consume([official.TextMessageContentEvent(message_id="m", delta="x")])
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("first-event", 0)


def test_strict_writer_checks_official_events() -> None:
    writer = agui.StrictWriter()
    frames = [writer.frame(event) for event in official_run()]
    writer.close()
    assert frames[0] == b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
    assert agui.consume_body(b"".join(frames)).outcome == "completed"
    with pytest.raises(agui.LifecycleViolation):
        agui.StrictWriter().frame(official.TextMessageEndEvent(message_id="m"))


def test_an_application_model_in_an_open_field_is_written_as_its_json() -> None:
    from pydantic import BaseModel  # noqa: PLC0415

    class Weather(BaseModel):
        city: str
        celsius: float | None = None

    event = official.StateSnapshotEvent(snapshot=Weather(city="Paris"))
    assert agui.from_official(event).snapshot == {"city": "Paris", "celsius": None}
    # Inside a plain dict, the consumer writes it as the SDK would.
    nested = official.StateSnapshotEvent(snapshot={"today": Weather(city="Oslo", celsius=3.5)})
    run = [official.RunStartedEvent(thread_id="t", run_id="r"), nested]
    assert agui.consume(run).state == {"today": {"city": "Oslo", "celsius": 3.5}}
    writer = agui.StrictWriter()
    writer.frame(run[0])
    assert writer.frame(nested) == (
        b'data: {"type":"STATE_SNAPSHOT","snapshot":{"today":{"city":"Oslo","celsius":3.5}}}\n\n'
    )


def test_parse_run_input_takes_an_official_input() -> None:
    input = official.RunAgentInput(
        thread_id="t",
        run_id="r",
        messages=[],
        state=None,
        tools=[],
        context=[],
        forwarded_props=None,
    )
    warnings: list[str] = []
    read = agui.parse_run_input(input, on_warning=warnings.append)
    assert read == v1_1.RunAgentInput(thread_id="t", run_id="r", messages=[], tools=[], context=[])
    assert warnings == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=valid_streams())
def test_valid_streams_round_trip(stream: list[dict[str, Any]]) -> None:
    for wire in stream:
        struct = msgspec.convert(wire, v1_1.Event)
        assert agui.from_official(agui.to_official(struct)) == struct
        assert agui.from_official(OFFICIAL_EVENT.validate_python(wire)) == struct


def conformance_events() -> list[Any]:
    if not STREAMS.is_dir():
        return [
            pytest.param(
                None, marks=pytest.mark.skip(reason=f"no conformance streams at {STREAMS}")
            )
        ]
    return [
        pytest.param(event, id=f"{path.stem}-{position}")
        for path in sorted(STREAMS.glob("*.json"))
        for position, event in enumerate(json.loads(path.read_text())["stream"])
    ]


@pytest.mark.parametrize("wire", conformance_events())
def test_conformance_events_round_trip(wire: Any) -> None:
    """Every event of the fixtures that both the official model and the 1.1 bindings take
    as it is comes back from the converters equal, both ways."""
    try:
        struct = msgspec.json.decode(json.dumps(wire), type=v1_1.Event)
        model = OFFICIAL_EVENT.validate_python(wire)
    except (msgspec.ValidationError, ValueError):
        pytest.skip("not an event both sides take as it is (the fixture tests enforcement)")
    assert agui.from_official(model) == struct
    assert agui.from_official(agui.to_official(struct)) == struct
    assert agui.to_official(struct) == with_schema_defaults(model)


def test_importing_and_consuming_dicts_does_not_import_pydantic() -> None:
    script = (
        "import sys, agui_msgspec as agui\n"
        "agui.consume([{'type': 'RUN_STARTED', 'threadId': 't', 'runId': 'r'},"
        " {'type': 'RUN_FINISHED', 'threadId': 't', 'runId': 'r'}])\n"
        "agui.StrictWriter().frame({'type': 'RUN_STARTED', 'threadId': 't', 'runId': 'r'})\n"
        'agui.parse_run_input(b\'{"threadId":"t","runId":"r","messages":[]}\')\n'
        "b''.join(agui.EventStream([{'type': 'RUN_STARTED', 'threadId': 't', 'runId': 'r'}],"
        " 'text/event-stream'))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'ag_ui')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_build_run_input_and_event_stream_take_official_objects() -> None:
    input = official.RunAgentInput(
        thread_id="t", run_id="r", messages=[], state={}, tools=[], context=[], forwarded_props={}
    )
    assert agui.build_run_input(input).protocol_version == "1.1"
    body = b"".join(agui.EventStream(official_run()))
    result = agui.consume_body(body)
    assert result.warnings == []
    assert result.events == [agui.from_official(event) for event in official_run()]


# --- application objects: whatever a model holds, only this library's errors escape ------------

_ODD_VALUES = st.one_of(
    st.none(),
    st.integers(),
    st.text(),
    st.binary(),
    st.just("\udcff"),  # a lone surrogate: no UTF-8 for it
    st.just(b"\xff\xfe"),
    st.sets(st.integers(), max_size=2),
    st.builds(object),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.one_of(st.text(), st.binary(), st.integers()), st.integers(), max_size=2),
)
_ENTRY_POINTS = {
    "consume": lambda obj: agui.consume([obj]),
    "consume(input=)": lambda obj: agui.consume([], input=obj),
    "StrictWriter.frame": lambda obj: agui.StrictWriter().frame(obj),
    "from_official": agui.from_official,
    "parse_run_input": agui.parse_run_input,
}


class _RaisingDump(pydantic.BaseModel):
    """An application's model whose serializers raise what they like."""

    x: int = 1

    def model_dump(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        raise RuntimeError("model_dump failed")

    def model_dump_json(self, *args: Any, **kwargs: Any) -> str:
        raise KeyError("model_dump_json failed")


def _odd_model(cls: Any, values: dict[str, Any], stray: dict[str, Any]) -> Any:
    model = cls.model_construct(**values)
    model.__dict__.update(stray)  # attributes that no field names
    return model


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    cls=st.sampled_from(
        [official.RunStartedEvent, official.TextMessageContentEvent, official.RunAgentInput]
    ),
    values=st.dictionaries(
        st.sampled_from(["thread_id", "run_id", "message_id", "delta", "messages", "state"]),
        _ODD_VALUES,
        max_size=4,
    ),
    stray=st.dictionaries(st.sampled_from(["zzz", "__x"]), _ODD_VALUES, max_size=1),
)
def test_only_library_errors_escape_for_odd_models(
    cls: Any, values: dict[str, Any], stray: dict[str, Any]
) -> None:
    model = _odd_model(cls, values, stray)
    for name, entry in _ENTRY_POINTS.items():
        try:
            entry(model)
        except agui.AguiError:
            pass
        except Exception as exc:  # pragma: no cover - the failure this test looks for
            pytest.fail(f"{name} let {type(exc).__name__} escape: {exc}")


@pytest.mark.parametrize("entry", sorted(_ENTRY_POINTS))
def test_a_model_whose_serializer_raises_is_malformed(entry: str) -> None:
    try:
        result = _ENTRY_POINTS[entry](_RaisingDump())
    except agui.AguiError as raised:
        violation: BaseException | None = raised
    else:  # consume reports instead of raising
        violation = result.violation if isinstance(result, agui.Result) else None
    assert isinstance(violation, agui.AguiError)


def test_a_stray_attribute_reads_through_the_model_s_own_serializer() -> None:
    model = official.RunStartedEvent(thread_id="t", run_id="r")
    model.__dict__["stray"] = 1  # no field names it: pydantic's own dump leaves it out
    assert agui.from_official(model) == v1_1.RunStartedEvent(thread_id="t", run_id="r")


def test_no_cache_keeps_a_model_class_alive() -> None:
    refs = []
    for n in range(50):
        base = official.RunStartedEvent if n % 2 else pydantic.BaseModel
        cls = pydantic.create_model(f"Made{n}", __base__=base)
        model = cls(thread_id="t", run_id="r") if n % 2 else cls()
        agui.consume([model])
        with contextlib.suppress(agui.AguiError):
            agui.from_official(model)
        refs.append(weakref.ref(cls))
        del cls, model
    gc.collect()
    assert [ref for ref in refs if ref() is not None] == []
