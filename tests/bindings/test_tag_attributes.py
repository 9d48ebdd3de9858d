"""Every tagged Struct exposes its tag under its wire name: ``event.type``, ``message.role``,
``outcome.type``, ``part.type``, as a read-only class attribute typed as its ``Literal``.

``nox -s typecheck`` runs ``mypy --strict`` over this file: each annotated assignment below
fails to type-check if the attribute is missing or typed wider than its literal, and each
``type: ignore`` fails it (as an unused ignore) if mypy stopped catching the mistake.
"""

from __future__ import annotations

from types import ModuleType
from typing import Literal

import msgspec
import pytest

import agui_msgspec as agui
from agui_msgspec import v1_0, v1_1


def test_event_message_outcome_and_part_read_their_tags() -> None:
    event = agui.RunStartedEvent(thread_id="t", run_id="r")
    event_type: Literal["RUN_STARTED"] = event.type
    message = agui.UserMessage(id="u1", content="Hi")
    role: Literal["user"] = message.role
    outcome = agui.RunFinishedInterruptOutcome(interrupts=[])
    outcome_type: Literal["interrupt"] = outcome.type
    part = agui.TextPart(text="Hi")
    part_type: Literal["text"] = part.type
    assert (event_type, role, outcome_type, part_type) == (
        "RUN_STARTED",
        "user",
        "interrupt",
        "text",
    )
    assert agui.AssistantMessage.role == "assistant"  # on the class too


def test_the_tag_on_a_union_is_the_union_of_literals() -> None:
    decoded: agui.Event = v1_1.event_decoder.decode(b'{"type":"STEP_STARTED","stepName":"s"}')
    kind: str = decoded.type
    assert kind == "STEP_STARTED"
    finished: agui.Message = msgspec.convert(
        {"id": "a", "role": "tool", "content": "x", "toolCallId": "c"}, agui.Message
    )
    assert finished.role == "tool"


def test_the_tag_is_read_only() -> None:
    event = agui.RunStartedEvent(thread_id="t", run_id="r")
    with pytest.raises(AttributeError, match="read-only"):
        event.type = "RUN_FINISHED"  # type: ignore[misc, assignment]
    assert event.type == "RUN_STARTED"
    wrong: Literal["RUN_FINISHED"] = event.type  # type: ignore[assignment]
    assert wrong


@pytest.mark.parametrize("bindings", [v1_0, v1_1], ids=["1.0", "1.1"])
def test_every_tagged_struct_has_its_tag_and_no_tag_field(bindings: ModuleType) -> None:
    structs = [
        value
        for value in vars(bindings).values()
        if isinstance(value, type) and issubclass(value, msgspec.Struct)
    ]
    tagged = [struct for struct in structs if struct.__struct_config__.tag_field is not None]
    assert len(tagged) == 57  # events, messages, content parts, sources, outcomes, patch ops
    for struct in tagged:
        config = struct.__struct_config__
        assert config.tag_field is not None
        assert getattr(struct, config.tag_field) == config.tag, struct
        assert config.tag_field not in struct.__struct_fields__  # a class attribute, not a field
    in_unions = {s for _, members in bindings.UNIONS.values() for s in members.values()}
    assert in_unions == set(tagged)


def test_encoding_and_decoding_are_unchanged_by_the_attribute() -> None:
    wire = (
        b'{"type":"RUN_FINISHED","threadId":"t","runId":"r",'
        b'"outcome":{"type":"interrupt","interrupts":[{"id":"i","reason":"approve"}]}}'
    )
    event = v1_1.event_decoder.decode(wire)
    assert agui.encode(event) == wire  # the tag written once, first, as before
    assert msgspec.to_builtins(event)["type"] == "RUN_FINISHED"
    assert "type" not in msgspec.structs.asdict(event)
    snapshot = (
        b'{"type":"MESSAGES_SNAPSHOT","messages":[{"role":"user","id":"u","content":'
        b'[{"type":"text","text":"Hi"}]},{"role":"assistant","id":"a","content":"Yo"}]}'
    )
    decoded = v1_1.event_decoder.decode(snapshot)
    assert agui.encode(decoded) == snapshot
    assert [m.role for m in decoded.messages] == ["user", "assistant"]  # type: ignore[union-attr]
    assert msgspec.msgpack.decode(msgspec.msgpack.encode(decoded), type=agui.Event) == decoded
