"""Chunk expansion (spec: basic/patterns/streaming): ``*_CHUNK`` → start, content, end.

Expansion runs after enforcement and before verification, so every triad rule
of the lifecycle applies to what it produces. A chunk stream lives in a lane:
the parent agent's (no ``subagentRunId``) or one subagent's. The first chunk of
an item must carry its ids; a continuation may repeat an opener field only with
the same value; the synthesized ``*_END`` is emitted as soon as the stream can
no longer continue (see ``_closes_lanes``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import msgspec
import msgspec.inspect
from msgspec import UNSET, Struct

from agui_msgspec._errors import ChunkViolation
from agui_msgspec._versions import Bindings

Lane = str | None  # a subagentRunId, or None for the parent agent


@dataclass(frozen=True, eq=False)  # identity hashing: kinds key the stream table
class _ChunkKind:
    chunk: str  # the chunk event type
    id_attr: str
    opener_fields: tuple[str, ...]  # (attribute, ...) a continuation may repeat, same value only
    required_first: tuple[str, ...]  # attributes the first chunk must carry
    start: str  # Struct names in the bindings
    content: str
    end: str


_TEXT = _ChunkKind(
    "TEXT_MESSAGE_CHUNK",
    "message_id",
    ("role", "name"),
    ("message_id",),
    "TextMessageStartEvent",
    "TextMessageContentEvent",
    "TextMessageEndEvent",
)
_TOOL = _ChunkKind(
    "TOOL_CALL_CHUNK",
    "tool_call_id",
    ("tool_call_name", "parent_message_id"),
    ("tool_call_id", "tool_call_name"),
    "ToolCallStartEvent",
    "ToolCallArgsEvent",
    "ToolCallEndEvent",
)
_THOUGHT = _ChunkKind(
    "REASONING_MESSAGE_CHUNK",
    "message_id",
    (),
    ("message_id",),
    "ReasoningMessageStartEvent",
    "ReasoningMessageContentEvent",
    "ReasoningMessageEndEvent",
)
_KINDS = {kind.chunk: kind for kind in (_TEXT, _TOOL, _THOUGHT)}

# Events that stand aside from assembly and close no chunk stream.
_STANDS_ASIDE = frozenset(
    {"RAW", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "REASONING_ENCRYPTED_VALUE", "SUBAGENT_STARTED"}
)
# Run-level events close every lane.
_CLOSES_ALL = frozenset({"RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "MESSAGES_SNAPSHOT"})


@dataclass(slots=True)  # one per open chunk stream: no __dict__ each
class _Stream:
    kind: _ChunkKind
    item_id: str
    opener: dict[str, Any]  # the opener's field values, absence resolved to the default


def _value(event: Struct, attr: str) -> Any:
    return getattr(event, attr, UNSET)


class Expander:
    """Turns chunk events into explicit triads; passes every other event through."""

    def __init__(self, bindings: Bindings) -> None:
        # kind → its (START, CONTENT, END) Structs in these bindings, resolved once
        self._triads: dict[_ChunkKind, tuple[Any, Any, Any]] = {
            kind: (
                getattr(bindings, kind.start),
                getattr(bindings, kind.content),
                getattr(bindings, kind.end),
            )
            for kind in _KINDS.values()
        }
        # (lane, kind) → the open chunk stream; indexed by lane, by kind and by item too,
        # so an event costs the same however many subagents have streams open
        self._streams: dict[tuple[Lane, _ChunkKind], _Stream] = {}
        # a lane's one open kind: a chunk closes its lane's stream of any other kind first
        self._lanes: dict[Lane, _ChunkKind] = {}
        self._kind_lanes: dict[_ChunkKind, dict[Lane, None]] = {
            kind: {} for kind in _KINDS.values()
        }
        self._owners: dict[tuple[_ChunkKind, str], dict[Lane, None]] = {}
        self.chunk_types: frozenset[type] = frozenset(
            bindings.EVENT_TYPES[kind.chunk] for kind in _KINDS.values()
        )
        """The chunk Structs: while no chunk stream is open, other events pass through as they are."""
        # kind → what its START Struct fixes when a chunk leaves it out: a schema default
        # (a text message's role, assistant) or a const (a reasoning message's role)
        self._implied = {kind: _implied_fields(self._triads[kind][0]) for kind in _KINDS.values()}

    @property
    def streams(self) -> dict[tuple[Lane, _ChunkKind], _Stream]:
        """The open chunk streams (empty: nothing to close, nothing to expand)."""
        return self._streams

    def expand(self, event: Any, index: int) -> list[Struct]:
        event_type = event.type
        kind = _KINDS.get(event_type)
        if kind is not None:
            return self._chunk(event, kind, index)
        if not self._streams:
            return [event]
        return [*self._close_for(event, event_type), event]

    # --- closing ---------------------------------------------------------------------

    def _close_for(self, event: Struct, event_type: str) -> list[Struct]:
        if event_type in _STANDS_ASIDE:
            return []
        if event_type in _CLOSES_ALL:
            return self._close(list(self._streams))
        lane = _value(event, "subagent_run_id")
        lane = None if lane is UNSET else lane
        kind = self._lanes.get(lane)
        return [] if kind is None else self._close([(lane, kind)])

    def _open(self, key: tuple[Lane, _ChunkKind], stream: _Stream) -> None:
        lane, kind = key
        self._streams[key] = stream
        self._lanes[lane] = kind
        self._kind_lanes[kind][lane] = None
        self._owners.setdefault((kind, stream.item_id), {})[lane] = None

    def _pop(self, key: tuple[Lane, _ChunkKind]) -> _Stream:
        lane, kind = key
        stream = self._streams.pop(key)
        del self._lanes[lane]
        del self._kind_lanes[kind][lane]
        owners = self._owners[kind, stream.item_id]
        del owners[lane]
        if not owners:
            del self._owners[kind, stream.item_id]
        return stream

    def _close(self, keys: list[tuple[Lane, _ChunkKind]]) -> list[Struct]:
        ends = []
        for key in keys:
            stream = self._pop(key)
            end = self._triads[stream.kind][2]
            lane = key[0]
            ends.append(
                end(**{stream.kind.id_attr: stream.item_id}, subagent_run_id=_or_unset(lane))
            )
        return ends

    # --- chunks ----------------------------------------------------------------------

    def _chunk(self, event: Struct, kind: _ChunkKind, index: int) -> list[Struct]:
        tagged = _value(event, "subagent_run_id")
        item_id = _value(event, kind.id_attr)
        lane_key = self._resolve_lane(kind, tagged, item_id, index)
        out: list[Struct] = []
        # Any chunk also ends the lane's streams of the other kinds: it is a message or tool-call event.
        other = self._lanes.get(lane_key[0], kind)
        if other is not kind:
            out += self._close([(lane_key[0], other)])
        stream = self._streams.get(lane_key)
        if stream is not None and (item_id is UNSET or item_id == stream.item_id):
            self._check_repeats(event, stream, index)
            if _value(event, "delta") is not UNSET or _value(event, "metadata") is not UNSET:
                # a metadata-only continuation still reaches its item, on an empty delta
                out.append(self._content(event, kind, stream.item_id, lane_key[0]))
            return out
        if stream is not None:  # a different id opens a new item; the previous one closes first
            out += self._close([lane_key])
        for attr in kind.required_first:
            if _value(event, attr) is UNSET:
                raise ChunkViolation(
                    "chunk-missing-first-field",
                    f"the first {kind.chunk} of an item must carry {_wire(attr)}",
                    index=index,
                    path="/" + _wire(attr),
                )
        opener = self._opener_values(event, kind)
        self._open(lane_key, _Stream(kind, item_id, opener))
        out.append(self._start(event, kind, item_id, opener, lane_key[0]))
        if _value(event, "delta") is not UNSET:  # the opener carries the chunk's metadata
            out.append(self._content(event, kind, item_id, lane_key[0], carry_metadata=False))
        return out

    def _resolve_lane(
        self, kind: _ChunkKind, tagged: Any, item_id: Any, index: int
    ) -> tuple[Lane, _ChunkKind]:
        if tagged is not UNSET:
            return (tagged, kind)
        open_lanes = self._kind_lanes[kind]
        if item_id is not UNSET:
            # An untagged chunk naming an item continues whichever lane assembles it.
            owners = self._owners.get((kind, item_id))
            return (next(iter(owners)) if owners else None, kind)
        if None in open_lanes or not open_lanes:
            return (None, kind)
        if len(open_lanes) == 1:
            return (next(iter(open_lanes)), kind)
        raise ChunkViolation(
            "chunk-ambiguous",
            f"an untagged {kind.chunk} without {_wire(kind.id_attr)} could continue the streams "
            f"of subagents {', '.join(map(repr, open_lanes))}",
            index=index,
        )

    def _opener_values(self, event: Struct, kind: _ChunkKind) -> dict[str, Any]:
        """The opener's fields, absence resolved as the START event would resolve it."""
        implied = self._implied[kind]
        values = {attr: _value(event, attr) for attr in kind.opener_fields}
        return {attr: implied.get(attr, UNSET) if v is UNSET else v for attr, v in values.items()}

    @staticmethod
    def _check_repeats(event: Struct, stream: _Stream, index: int) -> None:
        for attr, established in stream.opener.items():
            repeated = _value(event, attr)
            if repeated is not UNSET and repeated != established:
                raise ChunkViolation(
                    "chunk-conflicting-repeat",
                    f"{stream.kind.chunk} {_wire(attr)} {repeated!r} does not match "
                    f"{established!r} established by the opener of {stream.item_id!r}",
                    index=index,
                    path="/" + _wire(attr),
                )

    def _start(
        self, event: Struct, kind: _ChunkKind, item_id: str, opener: dict[str, Any], lane: Lane
    ) -> Struct:
        start = self._triads[kind][0]
        fields = {**self._implied[kind], **{a: v for a, v in opener.items() if v is not UNSET}}
        return start(  # type: ignore[no-any-return]
            **{kind.id_attr: item_id},
            **fields,
            subagent_run_id=_or_unset(lane),
            timestamp=_value(event, "timestamp"),
            raw_event=_value(event, "raw_event"),
            metadata=_value(event, "metadata"),
        )

    def _content(
        self, event: Struct, kind: _ChunkKind, item_id: str, lane: Lane, carry_metadata: bool = True
    ) -> Struct:
        content = self._triads[kind][1]
        delta = _value(event, "delta")
        return content(  # type: ignore[no-any-return]
            **{kind.id_attr: item_id},
            delta="" if delta is UNSET else delta,
            subagent_run_id=_or_unset(lane),
            timestamp=_value(event, "timestamp"),
            raw_event=_value(event, "raw_event") if carry_metadata else UNSET,
            metadata=_value(event, "metadata") if carry_metadata else UNSET,
        )


def _or_unset(lane: Lane) -> Any:
    return UNSET if lane is None else lane


@functools.cache  # per Struct class: a consumer per stream must not rebuild it
def _implied_fields(start: type[Struct]) -> dict[str, Any]:
    implied: dict[str, Any] = {}
    info = msgspec.inspect.type_info(start)
    assert isinstance(info, msgspec.inspect.StructType)
    for field in info.fields:
        if isinstance(field.type, msgspec.inspect.LiteralType) and len(field.type.values) == 1:
            implied[field.name] = field.type.values[0]
        elif field.default not in (msgspec.NODEFAULT, UNSET):
            implied[field.name] = field.default
    return implied


def _wire(attr: str) -> str:
    first, *rest = attr.split("_")
    return first + "".join(word.capitalize() for word in rest)
