"""Acceptance: a binding generated for a schema newer than the package's speaks protobuf
everywhere a shipped one does (issue 20, item 1).

The schema is 1.1 hand-edited into a 1.2: one new field on RUN_STARTED (``agentName``),
one new event type (``AGENT_NOTE``), one new outcome member (``timeout``). It is generated
through the command line into a folder of its own, with a freeze the test keeps; a producer
writes a stream using all three on the protobuf wire, and the same module reads it back,
from the body and over HTTP: the verdict, messages and state equal the SSE run's.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from serving import serve

import agui_msgspec as agui
from agui_msgspec import (
    PROTOBUF_MEDIA_TYPE,
    EventStream,
    HttpAgent,
    StrictWriter,
    UsageError,
    consume_body,
    encode_proto,
    proto_frame,
)
from agui_msgspec._codegen import CodegenError
from agui_msgspec._versions import load_bindings

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_1_1 = ROOT / "schema" / "1.1" / "schema.json"
FREEZE_1_1 = ROOT / "schema" / "1.1" / "proto-freeze.txt"
MODULE = "acceptance_v1_2"


def schema_1_2() -> dict[str, Any]:
    schema = json.loads(SCHEMA_1_1.read_text(encoding="utf-8"))
    schema["$id"] = "https://ag-ui.com/spec/1.2/schema.json"
    defs = schema["$defs"]
    defs["RunStartedEvent"]["properties"]["agentName"] = {"type": "string"}
    defs["EventType"]["enum"].append("AGENT_NOTE")
    defs["AgentNoteEvent"] = {
        "type": "object",
        "allOf": [{"$ref": "#/$defs/BaseEvent"}],
        "properties": {"type": {"const": "AGENT_NOTE"}, "note": {"type": "string"}},
        "required": ["type", "note"],
        "unevaluatedProperties": False,
    }
    defs["Event"]["oneOf"].append({"$ref": "#/$defs/AgentNoteEvent"})
    defs["RunFinishedTimeoutOutcome"] = {
        "type": "object",
        "properties": {"type": {"const": "timeout"}, "afterSeconds": {"type": "integer"}},
        "required": ["type", "afterSeconds"],
        "unevaluatedProperties": False,
    }
    defs["RunFinishedOutcome"]["oneOf"].append({"$ref": "#/$defs/RunFinishedTimeoutOutcome"})
    return schema


def generate(tmp: Path, schema: dict[str, Any], freeze: Path) -> list[Path]:
    """``agui-msgspec generate`` run as a user runs it: its own process, another folder."""
    source = tmp / "schema-1.2.json"
    source.write_text(json.dumps(schema), encoding="utf-8")
    command = [sys.executable, "-m", "agui_msgspec", "generate", str(source)]
    command += ["--out", str(tmp / "out"), "--module", MODULE, "--freeze", str(freeze)]
    done = subprocess.run(command, cwd=tmp, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return [Path(line) for line in done.stdout.splitlines()]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, Path]]:
    tmp = tmp_path_factory.mktemp("v1_2")
    freeze = tmp / "freeze.txt"
    shutil.copy(FREEZE_1_1, freeze)
    written = generate(tmp, schema_1_2(), freeze)
    out = tmp / "out"
    assert written == [
        out / f"{MODULE}.py",
        out / f"{MODULE}.proto",
        out / f"{MODULE}_wire.py",
        freeze,
    ]
    try:
        yield load_bindings(written[0]), freeze  # type: ignore[misc]
    finally:
        sys.modules.pop(MODULE, None)


def events(v1_2: Any) -> list[Any]:
    return [
        v1_2.RunStartedEvent(thread_id="t", run_id="r", agent_name="planner"),
        v1_2.AgentNoteEvent(note="thinking it over"),
        v1_2.TextMessageStartEvent(message_id="m"),
        v1_2.TextMessageContentEvent(message_id="m", delta="Hello"),
        v1_2.TextMessageEndEvent(message_id="m"),
        v1_2.StateSnapshotEvent(snapshot={"step": 2}),
        v1_2.RunFinishedEvent(
            thread_id="t", run_id="r", outcome=v1_2.RunFinishedTimeoutOutcome(after_seconds=30)
        ),
    ]


def body(v1_2: Any, framing: Any) -> bytes:
    writer = StrictWriter(v1_2, framing=framing)
    frames = b"".join(writer.frame(event) for event in events(v1_2))
    writer.close()
    return frames


def verdict(result: Any) -> tuple[Any, ...]:
    return (
        result.outcome if hasattr(result, "outcome") else result.run.status,
        [agui.encode(m) for m in result.messages],
        result.state,
        [(run.status, agui.encode(run.outcome) if run.outcome else None) for run in result.runs],
    )


def test_the_freeze_gives_the_new_slots_the_next_numbers(generated: tuple[Any, Path]) -> None:
    _, freeze = generated
    numbers = dict(re.findall(r"^([\w.]+) = (\d+)$", freeze.read_text(), re.M))
    old = dict(re.findall(r"^([\w.]+) = (\d+)$", FREEZE_1_1.read_text(), re.M))
    assert {k: v for k, v in numbers.items() if k in old} == old  # every deployed number kept
    added = {k: int(v) for k, v in numbers.items() if k not in old}
    assert added == {
        "RunStartedEvent.agent_name": 7,
        "AgentNoteEvent.base_event": 1,
        "AgentNoteEvent.note": 2,
        "Event.event.agent_note": 32,
        "EventType.AGENT_NOTE": 31,
        "RunFinishedEvent.after_seconds": 9,
    }


def test_a_generated_module_speaks_protobuf_and_its_body_reads_as_the_sse_one(
    generated: tuple[Any, Path],
) -> None:
    v1_2, _ = generated
    proto = consume_body(body(v1_2, "protobuf"), v1_2)
    sse = consume_body(body(v1_2, "sse"), v1_2)
    assert proto.outcome == "completed", proto.violation
    assert verdict(proto) == verdict(sse)
    assert proto.warnings == sse.warnings == []
    started, note = proto.events[0], proto.events[1]
    assert (started.agent_name, note.type, note.note) == (
        "planner",
        "AGENT_NOTE",
        "thinking it over",
    )
    assert proto.runs[0].outcome == v1_2.RunFinishedTimeoutOutcome(after_seconds=30)
    # one encoding per event: the frame is encode_proto's, on the module's own wire
    assert body(v1_2, "protobuf").startswith(proto_frame(events(v1_2)[0], v1_2))


def test_the_shipped_wire_refuses_what_it_lacks(generated: tuple[Any, Path]) -> None:
    v1_2, _ = generated
    started, note, *_, finished = events(v1_2)
    with pytest.raises(UsageError, match="agentName"):
        encode_proto(started, "1.1")
    with pytest.raises(UsageError, match="AGENT_NOTE"):
        encode_proto(note, "1.1")
    with pytest.raises(UsageError, match="afterSeconds"):
        encode_proto(finished, "1.1")
    # and a 1.1 consumer reading the 1.2 body drops what its wire predates, with warnings
    old = consume_body(body(v1_2, "protobuf"), "1.1")
    assert old.outcome == "completed", old.violation
    assert old.warnings


def test_http_agent_reads_a_generated_modules_protobuf_reply(generated: tuple[Any, Path]) -> None:
    pytest.importorskip("uvicorn")
    pytest.importorskip("httpx")
    v1_2, _ = generated
    answered: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        accept = dict(scope["headers"]).get(b"accept", b"").decode()
        stream = EventStream(events(v1_2), accept, version=v1_2)
        answered.append(stream.media_type)
        await stream(scope, receive, send)

    with serve(app) as url:
        agent = HttpAgent(url, version=v1_2)
        result = asyncio.run(agent.run_agent({"threadId": "t", "runId": "r", "messages": []}))
    assert answered == [PROTOBUF_MEDIA_TYPE]
    sse = consume_body(body(v1_2, "sse"), v1_2)
    assert [agui.encode(m) for m in result.messages] == [agui.encode(m) for m in sse.messages]
    assert result.state == sse.state
    assert (result.run.status, result.run.outcome) == (sse.runs[0].status, sse.runs[0].outcome)


def numbers_of(freeze: Path) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r"^([\w.]+) = (\d+)$", freeze.read_text(), re.M)}


def test_without_a_freeze_one_is_started_beside_the_module_from_the_deployed_numbers(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    written = agui.generate(SCHEMA_1_1, out, module="fresh_v1_1")
    freeze = out / "fresh_v1_1.proto-freeze.txt"
    assert written == out / "fresh_v1_1.py"
    assert numbers_of(freeze) == numbers_of(FREEZE_1_1)  # the numbers @ag-ui/proto speaks
    shipped = (ROOT / "src" / "agui_msgspec" / "v1_1_wire.py").read_text().splitlines()
    assert (out / "fresh_v1_1_wire.py").read_text().splitlines()[5:] == shipped[
        5:
    ]  # not the banner


def test_a_freeze_that_renumbers_the_wire_generated_before_is_refused(tmp_path: Path) -> None:
    freeze = tmp_path / "freeze.txt"
    shutil.copy(FREEZE_1_1, freeze)
    agui.generate(SCHEMA_1_1, tmp_path / "out", freeze=freeze)
    before = (tmp_path / "out" / "v1_1_wire.py").read_bytes()
    # swap two numbers by hand: peers built on the first wire would misread both fields
    text = freeze.read_text()
    text = text.replace("RunStartedEvent.thread_id = 2", "RunStartedEvent.thread_id = 99")
    freeze.write_text(text)
    with pytest.raises(CodegenError, match=r"RunStartedEvent.thread_id was 2, now 99"):
        agui.generate(SCHEMA_1_1, tmp_path / "out", freeze=freeze)
    assert (tmp_path / "out" / "v1_1_wire.py").read_bytes() == before  # nothing written
    freeze.write_text(text.replace("thread_id = 99", "thread_id = 3"))  # run_id's number
    with pytest.raises(CodegenError, match=r"same number 3"):
        agui.generate(SCHEMA_1_1, tmp_path / "out", freeze=freeze)


def test_a_removed_field_keeps_its_number_reserved_and_the_freeze_keeps_it(
    tmp_path: Path,
) -> None:
    freeze = tmp_path / "freeze.txt"
    shutil.copy(FREEZE_1_1, freeze)
    schema = json.loads(SCHEMA_1_1.read_text(encoding="utf-8"))
    del schema["$defs"]["TextMessageStartEvent"]["properties"]["name"]
    source = tmp_path / "schema.json"
    source.write_text(json.dumps(schema))
    agui.generate(source, tmp_path / "out", freeze=freeze)
    proto = (tmp_path / "out" / "v1_1.proto").read_text()
    block = re.search(r"message TextMessageStartEvent \{[^}]*\}", proto)
    assert block is not None
    assert "reserved 4;" in block[0]
    assert numbers_of(freeze) == numbers_of(FREEZE_1_1)


def test_bindings_without_wire_tables_of_their_own_never_use_another_wire(
    generated: tuple[Any, Path], tmp_path: Path
) -> None:
    v1_2, _ = generated
    lone = tmp_path / "lone_v1_2.py"
    shutil.copy(v1_2.__file__, lone)  # the module without the _wire.py beside it
    bindings = load_bindings(lone)
    try:
        with pytest.raises(UsageError, match="no protobuf wire tables for 'lone_v1_2'"):
            StrictWriter(bindings, framing="protobuf")
        with pytest.raises(UsageError, match="no protobuf wire tables"):
            encode_proto(bindings.RunStartedEvent(thread_id="t", run_id="r"), bindings)
        # an EventStream over them answers SSE, the default binding, even to a protobuf client
        assert (
            EventStream([], PROTOBUF_MEDIA_TYPE, version=bindings).media_type != PROTOBUF_MEDIA_TYPE
        )
        # tables of another protocol version are not theirs either
        shutil.copy(ROOT / "src" / "agui_msgspec" / "v1_1_wire.py", tmp_path / "lone_v1_2_wire.py")
        with pytest.raises(UsageError, match=r"not protocol 1\.2's"):
            encode_proto(bindings.RunStartedEvent(thread_id="t", run_id="r"), bindings)
    finally:
        sys.modules.pop("lone_v1_2", None)


def edited_1_1(tmp_path: Path, edit: Callable[[dict[str, Any]], object]) -> Path:
    """The 1.1 schema, changed by ``edit``, as a file of its own."""
    schema = json.loads(SCHEMA_1_1.read_text(encoding="utf-8"))
    edit(schema)
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    return path


def run_started_property(*names: str) -> Callable[[dict[str, Any]], object]:
    properties = {name: {"type": "string"} for name in names}
    return lambda s: s["$defs"]["RunStartedEvent"]["properties"].update(properties)


def usage_twice(schema: dict[str, Any]) -> None:
    # TokenUsage travels as the message Usage: a definition of that name would be a second one
    schema["$defs"]["Usage"] = {"type": "object", "properties": {"tokens": {"type": "integer"}}}
    schema["$defs"]["RunStartedEvent"]["properties"]["cost"] = {"$ref": "#/$defs/Usage"}


def assert_refused(
    edit: Callable[[dict[str, Any]], object], complaint: str, pointer: str, tmp_path: Path
) -> None:
    """Generating from the 1.1 schema with ``edit`` is a CodegenError saying ``complaint`` at
    ``pointer``, and writes nothing."""
    with pytest.raises(CodegenError, match=re.escape(complaint)) as caught:
        agui.generate(edited_1_1(tmp_path, edit), tmp_path / "out")
    assert caught.value.pointer == pointer
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("edit", "complaint", "pointer"),
    [
        (
            run_started_property("ABc", "a_bc"),
            "property 'ABc' of RunStartedEvent and property 'a_bc' of RunStartedEvent would both"
            " be RunStartedEvent.a_bc on the protobuf wire",
            "/$defs/RunStartedEvent/properties/a_bc",
        ),
        (
            run_started_property("baseEvent"),
            "the BaseEvent field every event has and property 'baseEvent' of RunStartedEvent"
            " would both be RunStartedEvent.base_event",
            "/$defs/RunStartedEvent/properties/baseEvent",
        ),
        (
            usage_twice,
            "definition Usage and definition TokenUsage would both be Usage",
            "/$defs/TokenUsage",
        ),
    ],
    ids=["two-properties-one-field", "the-base-event-field", "two-messages-one-name"],
)
def test_two_parts_of_the_schema_on_one_name_of_the_wire_are_refused(
    edit: Callable[[dict[str, Any]], object], complaint: str, pointer: str, tmp_path: Path
) -> None:
    # on one field, a frame would mix the two (or, for base_event, fail to read at all)
    assert_refused(edit, complaint, pointer, tmp_path)


INJECTED_PROTO = 'X = 99;\n}\nimport "evil.proto";\nmessage Injected {\n  string y'


def const_of(definition: str, value: str) -> Callable[[dict[str, Any]], object]:
    tag = "op" if definition == "AddOperation" else "type"
    return lambda s: s["$defs"][definition]["properties"][tag].update(const=value)


@pytest.mark.parametrize(
    ("edit", "complaint", "pointer"),
    [
        (
            lambda s: s["$defs"]["EventType"]["enum"].insert(0, "ACME.PING"),
            "EventType value 0 is not usable on the protobuf wire: 'ACME.PING' is no protobuf name",
            "/$defs/EventType/enum/0",
        ),
        (
            lambda s: s["$defs"]["EventType"]["enum"].insert(0, INJECTED_PROTO),
            "EventType value 0 is not usable on the protobuf wire: 'X = 99;\\n}\\nimport",
            "/$defs/EventType/enum/0",
        ),
        (
            const_of("TextPart", INJECTED_PROTO),
            "member TextPart of ContentPart is not usable on the protobuf wire",
            "/$defs/TextPart/properties/type",
        ),
        (
            const_of("AddOperation", INJECTED_PROTO),
            "member AddOperation of JsonPatchOperation is not usable on the protobuf wire",
            "/$defs/AddOperation/properties/op",
        ),
        (
            const_of("AddOperation", "Add"),
            "its op 'Add' would read back as 'add' from the protobuf enum value 'ADD'",
            "/$defs/AddOperation/properties/op",
        ),
    ],
    ids=["dotted-event-type", "event-type", "content-part-tag", "patch-op", "patch-op-case"],
)
def test_a_name_the_proto_writes_unquoted_must_be_a_protobuf_name(
    edit: Callable[[dict[str, Any]], object], complaint: str, pointer: str, tmp_path: Path
) -> None:
    # a "." numbered the slot in another message; a newline wrote lines into the .proto
    assert_refused(edit, complaint, pointer, tmp_path)


def without_event_type(schema: dict[str, Any]) -> None:
    del schema["$defs"]["EventType"]
    schema["$defs"]["BaseEvent"]["properties"]["type"] = {"type": "string"}


def events_tagged_by_kind(schema: dict[str, Any]) -> None:
    for member in schema["$defs"]["Event"]["oneOf"]:
        event = schema["$defs"][member["$ref"].rsplit("/", 1)[-1]]
        event["properties"]["kind"] = {"const": "K" + member["$ref"]}
        event["required"].insert(0, "kind")
    del schema["$defs"]["RunStartedEvent"]["properties"]["type"]


def run_started_x(x: dict[str, Any]) -> Callable[[dict[str, Any]], object]:
    return lambda s: s["$defs"]["RunStartedEvent"]["properties"].update(x=x)


@pytest.mark.parametrize(
    ("edit", "complaint", "pointer"),
    [
        (
            run_started_x({"type": "array"}),
            "an array without items has no protobuf type",
            "/$defs/RunStartedEvent/properties/x",
        ),
        (
            run_started_x({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
            "an inline oneOf travels on the protobuf wire only as a string or an array",
            "/$defs/RunStartedEvent/properties/x/oneOf",
        ),
        (
            without_event_type,
            "no EventType enum: the protobuf wire numbers event types by it",
            "/$defs",
        ),
        (
            lambda s: s["$defs"].update(EventType={"type": "string"}),
            "no EventType enum",
            "/$defs/EventType",
        ),
        (
            events_tagged_by_kind,
            "the Event union is tagged by 'kind': the protobuf envelope reads type",
            "/$defs/Event",
        ),
        (
            lambda s: s["$defs"]["RunStartedEvent"]["properties"]["type"].update(const="BEGUN"),
            "RunStartedEvent's type 'BEGUN' is not one of EventType's values",
            "/$defs/RunStartedEvent/properties/type",
        ),
    ],
    ids=[
        "array-without-items",
        "oneof-of-scalars",
        "no-event-type",
        "event-type-no-enum",
        "event-tagged-by-kind",
        "event-type-outside-the-enum",
    ],
)
def test_a_schema_the_protobuf_wire_cannot_carry_is_a_codegen_error(
    edit: Callable[[dict[str, Any]], object], complaint: str, pointer: str, tmp_path: Path
) -> None:
    # each escaped as a KeyError, StopIteration or (at the reader) a failure on every frame
    assert_refused(edit, complaint, pointer, tmp_path)


def test_a_freeze_that_is_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    freeze = tmp_path / "freeze.txt"
    freeze.write_bytes(b"# \xff\n")
    with pytest.raises(UsageError, match=r"the freeze .*freeze\.txt is not UTF-8"):
        agui.generate(SCHEMA_1_1, tmp_path / "out", freeze=freeze)


@pytest.mark.parametrize(
    "text",
    [
        b"MESSAGES: dict = {(\n",
        b"MESSAGES: dict = {'a': f(x)}\n",
        b"MESSAGES: dict = {'a': 5}\n",
        b"ENUMS: dict = {'a': [1]}\n",
        b"\xff",
    ],
    ids=["not-python", "not-literals", "messages-shape", "enums-shape", "not-utf8"],
)
def test_a_file_in_the_way_of_the_wire_tables_is_refused_and_kept(
    text: bytes, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "v1_1_wire.py").write_bytes(text)
    with pytest.raises(UsageError, match=r"v1_1_wire\.py is in the way"):
        agui.generate(SCHEMA_1_1, out)
    assert (out / "v1_1_wire.py").read_bytes() == text


@pytest.mark.parametrize(
    ("line", "complaint"),
    [
        (
            "RunStartedEvent.base_event = 7",
            "the freeze gives RunStartedEvent.base_event the number 7: the wire has it at 1",
        ),
        ("RunStartedEvent.thread_id = 0", "RunStartedEvent.thread_id = 0 is no protobuf field"),
        ("RunStartedEvent.thread_id = 19000", "protobuf keeps 19000 to 19999 for itself"),
        ("RunStartedEvent.thread_id = 536870912", "past protobuf's last, 536870911"),
        ("RunStartedEvent.thread_id = " + "9" * 5000, "(5000 digits): past protobuf's last"),
        ("RunStartedEvent.thread_id = \u0663", "unreadable freeze line"),  # an Arabic-Indic 3
    ],
    ids=["base-event", "zero", "protobufs-own", "too-big", "5000-digits", "not-ascii-digits"],
)
def test_a_freeze_number_protobuf_cannot_carry_is_refused(
    line: str, complaint: str, tmp_path: Path
) -> None:
    # each made frames no reader reads (or a ValueError past Python's int digits)
    slot = line.partition(" = ")[0]
    freeze = tmp_path / "freeze.txt"
    freeze.write_text(
        re.sub(rf"^{re.escape(slot)} = \d+$", line, FREEZE_1_1.read_text(), flags=re.M)
    )
    with pytest.raises(CodegenError, match=re.escape(complaint)):
        agui.generate(SCHEMA_1_1, tmp_path / "out", freeze=freeze)
    assert not (tmp_path / "out").exists()


def test_a_new_slot_skips_the_numbers_protobuf_keeps(tmp_path: Path) -> None:
    freeze = tmp_path / "freeze.txt"
    freeze.write_text(
        FREEZE_1_1.read_text().replace(
            "RunStartedEvent.thread_id = 2", "RunStartedEvent.thread_id = 18999"
        )
    )
    agui.generate(
        edited_1_1(tmp_path, run_started_x({"type": "string"})), tmp_path / "out", freeze=freeze
    )
    assert numbers_of(freeze)["RunStartedEvent.x"] == 20000
