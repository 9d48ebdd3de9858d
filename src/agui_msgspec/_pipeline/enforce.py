"""Enforcement: one payload in, one typed event (or nothing) out.

The specification's core asymmetry (basic/processing) lives here and only here:
what a consumer does not recognise is removed with a warning, what it does
recognise but finds malformed is fatal.

- Fast path: the strict decoder of the generated bindings. Conformant traffic
  costs exactly that one msgspec decode.
- Slow path, only when the fast path fails: a generic decode, a walk against the
  bindings' types that removes unrecognised material where it sits, then the
  strict decode again. If that still fails, the value is malformed.

Where a removal lands: an unknown event type drops the event; an unknown
property drops the property; an unknown union member (an object whose tag is a
string the version does not know) or an unknown value of a closed string set is
removed from an optional field, from a list, or — in a required position — takes
its containing value with it. Open objects keep every member.
"""

from __future__ import annotations

import enum
import functools
import itertools
import operator
import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, NamedTuple, cast

import msgspec
import msgspec.inspect as mi

from agui_msgspec._documents import (
    Payload,
    decode_json,
    decode_text,
    encode_document,
    plain_text,
)
from agui_msgspec._errors import MalformedEvent
from agui_msgspec._json import json_kind, pointer_from_msgspec, pointer_token, pointer_untoken
from agui_msgspec._pipeline.ahead import decode_ahead, known_twins, make_twins
from agui_msgspec._pipeline.compat import DROPPED, needs_translation
from agui_msgspec._versions import Bindings

_TEXT_TYPES = (bytes, bytearray, memoryview, str)
"""Payloads that are JSON text (subclasses too); anything else is a document to encode."""
_DICT_ONLY = {dict}
# msgspec's DecodeError and ValidationError are ValueErrors, and so is UnicodeError (bad
# UTF-8 inside a string); BufferError: a memoryview that is not contiguous, which the one by
# one path reads as its bytes.
_DECODE_ERRORS = (ValueError, BufferError)
_ENCODE_ERRORS = (
    TypeError,
    ValueError,
    OverflowError,
    UnicodeError,
    RecursionError,
    msgspec.EncodeError,
)
_encode_json = msgspec.json.Encoder().encode


@functools.cache  # per bindings module, as the event decoder it reads
def _batch_decoder(decoder: msgspec.json.Decoder[Any]) -> msgspec.json.Decoder[list[Any]]:
    """A JSON array of events, each as ``decoder`` decodes one."""
    return msgspec.json.Decoder(list[decoder.type])  # type: ignore[name-defined]


@functools.cache  # per bindings module, as the event decoder it reads
def _event_holder(decoder: msgspec.json.Decoder[Any]) -> type[msgspec.Struct]:
    """A Struct whose ``items`` are events, each as ``decoder`` decodes one: msgspec keeps a
    Struct's conversion plan, and makes a ``list[...]`` type's anew on every call."""
    return msgspec.defstruct("Events", [("items", list[decoder.type])])  # type: ignore[name-defined]


_PLAIN_REFUSALS = 16
"""Payloads of a batch the plain decoder may refuse before the batch takes the full decoder
(each refusal costs an exception, about three strict decodes)."""


@functools.cache  # per bindings module, as the event decoder it reads
def _plain_decoder(bindings: Bindings) -> tuple[msgspec.json.Decoder[Any], frozenset[type]]:
    """The strict decoder of every event type but those a batch checks beyond the decode (a
    run's start, whose id the compatibility boundary keeps; the events with open-union
    fields), and those types. Where such events are few, it finds them by refusing them."""
    refused = frozenset({bindings.RunStartedEvent, *bindings.OPEN_UNION_FIELDS})
    plain = [kind for kind in bindings.EVENT_TYPES.values() if kind not in refused]
    return msgspec.json.Decoder(functools.reduce(operator.or_, plain)), refused


def _dict_text(payload: Any) -> bytes | None:
    """A dict payload's JSON text (or a list of them) by msgspec's encoder, or None where that
    could differ from the careful encoding (:func:`encode_document`): msgspec writes NaN and
    infinities as ``null``, so text with a ``null`` in it, like text it cannot write, takes
    that path."""
    try:
        text = _encode_json(payload)
    except _ENCODE_ERRORS:
        return None
    return None if b"null" in text else text


# Field types in which the walk can find nothing to remove or to read as an integer.
_NOTHING_TO_REMOVE = (mi.StrType, mi.BoolType, mi.FloatType, mi.DictType, mi.AnyType)


class _Walk(enum.Enum):
    """What the walk does with a field's value, decided once per field from its type."""

    NONE = "none"  # a string, a boolean, an open object: nothing there is unrecognised
    INTEGER = "integer"  # only an integral float to read as the integer
    FULL = "full"


_WALK_NONE, _WALK_INTEGER = _Walk.NONE, _Walk.INTEGER  # module globals: enum lookups cost


# Per consumer, so nothing a stream chose outlives it: the texts of this many characters
# of names at most. A producer that adds a property sends it on every event.
_REMOVED_PROPERTY_CACHE_CHARS = 64 * 1024
_MATCHED_CACHE_CHARS = 64 * 1024


_TWINS_AFTER = 4096
"""Payloads one version ahead a stream's batches take before it makes twins (``ahead``)."""
_TWIN_REFUSALS = 16
"""Batches the twins may refuse in one stream before it stops trying them."""

_ABSENT = object()  # what dict.pop gives for a payload without the property


def _wire_names(struct: type[msgspec.Struct]) -> frozenset[str | None]:
    """The properties a Struct knows, its tag included."""
    names = _WIRE_NAMES.get(struct)
    if names is None:
        config = struct.__struct_config__
        names = _WIRE_NAMES[struct] = frozenset(
            (*struct.__struct_encode_fields__, config.tag_field)
        )
    return names


def _walk_of(expected: mi.Type) -> _Walk:
    if isinstance(expected, _NOTHING_TO_REMOVE):
        return _Walk.NONE
    return _Walk.INTEGER if isinstance(expected, mi.IntType) else _Walk.FULL


def _integer_if_integral(value: Any) -> Any:
    """JSON Schema counts 1.0 as the integer 1; reading it so is not a coercion."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


# Built once per Struct class for the slow path's walk: its type tree, and per wire name
# its field, the field's JSON Pointer token and what the walk does with its value.
_STRUCT_INFO: dict[type, mi.StructType] = {}
_WIRE_NAMES: dict[type, frozenset[str | None]] = {}  # the properties a Struct knows, tag included
_FIELDS: dict[type, dict[str, tuple[mi.Field, str, _Walk]]] = {}


class _OpenUnionTables(NamedTuple):
    unions: dict[type[msgspec.Struct], dict[str, mi.UnionType]]
    """struct → attribute → the union its values must be members of."""
    validators: dict[type[msgspec.Struct], dict[str, tuple[str, type[msgspec.Struct]]]]
    """struct → attribute → (wire name, holder): a Struct whose ``items`` field holds the value;
    msgspec caches a Struct's type, so converting into it is cheap on the fast path."""
    types: frozenset[type[msgspec.Struct]]
    """The Structs that have open-union fields."""
    pattern_free: dict[type[msgspec.Struct], _PatternFree]
    """holder → the same check with the members' string patterns taken out (the batch check)."""


class _PatternFree(NamedTuple):
    """An open union's members with their string patterns taken out: ``holder`` converts a
    batch's values in one C call, then each distinct string under a patterned wire name is
    matched on its own. Python's ``re`` through msgspec costs more than the rest of a JSON
    Patch operation's check (0.6 of 0.7 µs), and a stream repeats its paths."""

    holder: type[msgspec.Struct]
    patterns: tuple[_PatternCheck, ...]
    """One per patterned attribute (the pattern the same in every member that has it)."""


class _PatternCheck(NamedTuple):
    attr: str
    pattern: re.Pattern[str]
    read: operator.attrgetter[Any]
    """The attribute of a member that has it."""
    owners: frozenset[type[msgspec.Struct]] | None
    """The pattern-free members that have it, where some do not (a batch of none of them
    has no strings there to match: ``from`` of a JSON Patch ``move``); None: every one."""


@functools.cache  # per bindings module: a consumer per stream must not rebuild them
def _open_union_tables(bindings: Bindings) -> _OpenUnionTables:
    fields_by_struct = bindings.OPEN_UNION_FIELDS.items()
    unions = {union for fields in bindings.OPEN_UNION_FIELDS.values() for union in fields.values()}
    holders = {union: _holder(union) for union in unions}
    return _OpenUnionTables(
        types=frozenset(bindings.OPEN_UNION_FIELDS),
        unions={
            struct: {attr: _as_union(mi.type_info(union)) for attr, union in fields.items()}
            for struct, fields in fields_by_struct
        },
        validators={
            struct: {
                attr: (_encode_name(struct, attr), holders[union]) for attr, union in fields.items()
            }
            for struct, fields in fields_by_struct
        },
        pattern_free={
            holders[union]: free for union in unions if (free := _pattern_free(union)) is not None
        },
    )


def _pattern_free(union: Any) -> _PatternFree | None:
    """The batch check for ``union``; None where a member is not a Struct, a pattern sits
    deeper than a member's own string field, or an attribute has two patterns: the batch
    then takes the exact check."""
    members: list[type[msgspec.Struct]] = []
    patterns: dict[str, str] = {}
    info = mi.type_info(union)
    for member in info.types if isinstance(info, mi.UnionType) else (info,):
        if not isinstance(member, mi.StructType):
            return None
        struct = member.cls
        fields: list[tuple[str, Any, Any]] = []
        for declared, field in zip(msgspec.structs.fields(struct), member.fields, strict=True):
            annotation, kind = declared.type, field.type
            if isinstance(kind, mi.StrType) and kind.pattern is not None:
                if patterns.setdefault(declared.name, kind.pattern) != kind.pattern:
                    return None
                annotation = Annotated[
                    str, msgspec.Meta(min_length=kind.min_length, max_length=kind.max_length)
                ]
            elif _has_pattern(kind, set()):
                return None
            fields.append((declared.name, annotation, _same_default(declared)))
        config = struct.__struct_config__
        members.append(
            msgspec.defstruct(
                struct.__name__,
                fields,
                kw_only=True,
                tag_field=config.tag_field,
                tag=config.tag,
                forbid_unknown_fields=config.forbid_unknown_fields,
                array_like=config.array_like,
                gc=False,  # made and dropped within one check: never in a cycle
            )
        )
    checks = []
    for name, pattern in patterns.items():
        owners = frozenset(member for member in members if name in member.__struct_fields__)
        every = len(owners) == len(members)
        read = operator.attrgetter(name)
        checks.append(_PatternCheck(name, re.compile(pattern), read, None if every else owners))
    return _PatternFree(_holder(functools.reduce(operator.or_, members)), tuple(checks))


def _same_default(declared: msgspec.structs.FieldInfo) -> Any:
    """A field for ``defstruct`` with ``declared``'s wire name and default."""
    if declared.default_factory is not msgspec.NODEFAULT:
        return msgspec.field(default_factory=declared.default_factory, name=declared.encode_name)
    if declared.default is not msgspec.NODEFAULT:
        return msgspec.field(default=declared.default, name=declared.encode_name)
    return msgspec.field(name=declared.encode_name)


def _has_pattern(kind: mi.Type, seen: set[type]) -> bool:
    """Whether a string pattern sits anywhere in ``kind``."""
    if isinstance(kind, mi.StrType):
        return kind.pattern is not None
    if isinstance(kind, mi.StructType):
        if kind.cls in seen:
            return False
        seen.add(kind.cls)
        return any(_has_pattern(field.type, seen) for field in kind.fields)
    inner: tuple[mi.Type, ...] = ()
    if isinstance(kind, mi.UnionType):
        inner = kind.types
    elif isinstance(kind, (mi.ListType, mi.SetType, mi.FrozenSetType, mi.VarTupleType)):
        inner = (kind.item_type,)
    elif isinstance(kind, mi.TupleType):
        inner = kind.item_types
    elif isinstance(kind, mi.DictType):
        inner = (kind.key_type, kind.value_type)
    elif isinstance(kind, (mi.TypedDictType, mi.DataclassType, mi.NamedTupleType)):
        inner = tuple(field.type for field in kind.fields)
    return any(_has_pattern(item, seen) for item in inner)


@dataclass(frozen=True)
class _Removed:
    """What the walk returns in place of a value that must go, and why."""

    reason: str


class Enforcer:
    """Decodes payloads for one protocol version; reports removals through ``warn``."""

    def __init__(
        self,
        bindings: Bindings,
        warn: Callable[[str], None],
        translate: Callable[[Any, int], Any] | None = None,
        warn_about: Callable[[int, str], None] | None = None,
    ) -> None:
        self._decoder: msgspec.json.Decoder[Any] = bindings.event_decoder
        self._event_types: dict[str, type[msgspec.Struct]] = bindings.EVENT_TYPES
        # A Struct of these was typed when it was made: it is trusted as it is.
        self._own_types = frozenset(bindings.EVENT_TYPES.values())
        self._closed_sets: set[frozenset[str]] = set(bindings.CLOSED_STRING_SETS.values())
        # A module is hashable, which the Bindings protocol cannot say to every type checker.
        cache_key = cast("Hashable", bindings)
        tables = _open_union_tables(cache_key)
        self._open_unions = tables.unions
        self._open_union_validators = tables.validators
        self._open_union_types = tables.types
        self._pattern_free = tables.pattern_free
        # Per consumer, as the texts below: strings that matched their pattern, per pattern.
        self._matched: dict[re.Pattern[str], set[object]] = {}
        self._matched_room = _MATCHED_CACHE_CHARS
        self._warn = warn
        # a warning about event N, its detail apart: a WarningLog's own saves finding N again
        self._warn_about = warn_about or (lambda index, detail: warn(f"event {index}{detail}"))
        # id of a cleaned list that lost elements → the list (kept alive, so its id is not
        # reused) and the original position of each element it kept: a path into the cleaned
        # document then names the element as received
        self._positions: dict[int, tuple[list[Any], list[int]]] = {}
        self._translate = translate  # the compatibility boundary: it sees a document first
        self._event_holder = _event_holder(bindings.event_decoder)
        self._plain_decoder, self._refused_types = _plain_decoder(cache_key)
        self._dense = False  # the last batch was mostly events the plain decoder refuses
        self._run_started: type[msgspec.Struct] = bindings.RunStartedEvent
        self.slow_path_count = 0
        """How many payloads needed the slow path: conformant traffic never does."""
        # The top-level properties the last payload had and this version does not, when they
        # were all it had unrecognised. A producer that adds one (a trace id, say) adds it to
        # every event, so the next payload skips the strict decode, which would fail.
        self.extras: tuple[str, ...] = ()
        self._removed_texts: dict[str, str] = {}
        self._bindings = bindings
        self._ahead_count = 0  # payloads one version ahead taken in batches
        self._made_twins = False
        self._twin_refusals = 0
        self._removed_texts_room = _REMOVED_PROPERTY_CACHE_CHARS

    def decode(self, payload: Payload, index: int) -> msgspec.Struct | None:
        """The typed event, or None when the event was dropped (with a warning)."""
        if type(payload) is not bytes and not isinstance(payload, _TEXT_TYPES):
            if type(payload) in self._own_types:
                return payload  # type: ignore[return-value]
            text = _dict_text(payload) if type(payload) is dict else None
            payload = encode_document(payload, index) if text is None else text
        elif type(payload) is not bytes:
            payload = plain_text(payload)
        if self.extras:
            return self._slow_path(payload, index, strict_failed=False)
        try:  # the strict decode, inline: a call per payload costs a tenth of its time
            event: msgspec.Struct = self._decoder.decode(payload)
        except _DECODE_ERRORS:
            return self._slow_path(payload, index, strict_failed=True)
        if type(event) in self._open_union_types and not self._open_unions_hold(event):
            return self._slow_path(payload, index, strict_failed=True)
        return event

    def _strict(self, payload: bytes | bytearray | memoryview | str) -> msgspec.Struct | None:
        """The event, if the strict decoder alone takes ``payload``; else None."""
        try:
            event: msgspec.Struct = self._decoder.decode(payload)
        except _DECODE_ERRORS:
            return None
        if type(event) in self._open_union_types and not self._open_unions_hold(event):
            return None
        return event

    def _open_unions_hold(self, event: msgspec.Struct) -> bool:
        """Whether every open-union value of ``event`` is a valid member."""
        validators = self._open_union_validators[type(event)]
        return all(
            self._members_valid(getattr(event, attr), holder)
            for attr, (_, holder) in validators.items()
        )

    def decode_conformant(
        self, payloads: Sequence[Payload]
    ) -> tuple[list[msgspec.Struct], set[type]] | None:
        """The fast path for many payloads at once: every event, and a set of their types
        that holds every one needing more than the strict decode (a run's start, an event
        with open-union fields), if the strict decoder alone gives them all; None if any
        payload needs more, to be decoded one by one.

        The plain decoder, which knows every event type but those, takes the batch in one
        pass; each payload it refuses is decoded with the full one and checked on its own.
        Where most payloads are such events (a stream of state deltas), the batch goes
        through the full decoder at once, and its types are read in one pass."""
        if self._dense:
            return self._decode_typed(payloads)
        events: list[msgspec.Struct] = []
        refused: list[msgspec.Struct] = []  # the events the plain decoder refused, in order
        rest = payloads
        while True:
            try:  # JSON text, the common case, costs no pass over the payloads' types
                events.extend(map(self._plain_decoder.decode, rest))  # type: ignore[arg-type]
                break
            except TypeError:  # msgspec takes text only: dicts, Structs or something else
                return self._decode_documents(payloads)
            except (*_DECODE_ERRORS, RecursionError):
                pass  # ``extend`` kept the events before the payload it was refused
            if len(refused) == _PLAIN_REFUSALS:
                self._dense = True
                return self._decode_typed(payloads)
            position = len(events)
            try:
                event = self._decoder.decode(payloads[position])  # type: ignore[arg-type]
            except (*_DECODE_ERRORS, RecursionError):
                return None
            events.append(event)
            refused.append(event)
            rest = payloads[position + 1 :]
        checked = self._checked(refused)
        return None if checked is None else (events, checked[1])

    def _decode_typed(
        self, payloads: Sequence[Payload]
    ) -> tuple[list[msgspec.Struct], set[type]] | None:
        """:meth:`decode_conformant` through the full decoder, the batch's types read in one
        pass; the plain decoder is tried again on the next batch if this one had few events
        it would refuse."""
        try:
            events: list[msgspec.Struct] = list(map(self._decoder.decode, payloads))  # type: ignore[arg-type]
        except TypeError:
            return self._decode_documents(payloads)
        except (*_DECODE_ERRORS, RecursionError):
            return None
        return self._checked(events)

    def _decode_documents(
        self, payloads: Sequence[Payload]
    ) -> tuple[list[msgspec.Struct], set[type]] | None:
        """:meth:`decode_conformant` for a batch that is not all JSON text: this version's
        own Structs are taken as they are, plain dicts as the text msgspec writes of them,
        all in one JSON array (a call per dict costs more than the encode)."""
        types = set(map(type, payloads))
        if types <= self._own_types:
            return list(payloads), types  # type: ignore[arg-type]
        if types != _DICT_ONLY:
            return None  # a mix, a subclass, an official model: ``decode`` tells each one
        text = _dict_text(list(payloads))
        if text is None:
            return None
        try:
            events: list[msgspec.Struct] = _batch_decoder(self._decoder).decode(text)
        except (*_DECODE_ERRORS, RecursionError):
            return None
        return self._checked(events)

    def decode_with_extras(
        self, payloads: Sequence[Payload]
    ) -> tuple[list[msgspec.Struct], list[str]] | None:
        """The fast path for a batch of a producer one version ahead: every event, if each
        payload's only unrecognised material is the top-level properties the payload before
        had too, and the warning details that each event earns (the caller says them, as it
        takes the events). Each property is removed and the batch converted in one call, as
        the slow path converts one payload. None if the last payload had no such properties,
        if any payload has more or less, or is a run's start (the warnings said of it belong
        to the run it starts): decode them one by one."""
        extras = self.extras
        if not extras:  # the last payload was conformant, or had more than properties
            return None
        events = self._decode_ahead(payloads, extras)
        if events is None:
            try:
                documents: list[Any] = list(map(decode_json, payloads))  # type: ignore[arg-type]
                for name in extras:  # dict.pop: TypeError for a document that is not an object
                    absent = itertools.repeat(_ABSENT)
                    if _ABSENT in map(dict.pop, documents, itertools.repeat(name), absent):
                        return None
                held: Any = msgspec.convert({"items": documents}, self._event_holder)
                events = held.items
            except (*_DECODE_ERRORS, TypeError, RecursionError):
                return None
        checked = self._checked(events)
        if checked is None:
            return None
        kinds = checked[1]
        if self._run_started in kinds or any(
            not _wire_names(kind).isdisjoint(extras) for kind in kinds
        ):  # a property one kind does not know and another does is the exact path's to judge
            return None
        self.extras = extras
        self.slow_path_count += len(events)
        self._ahead_count += len(events)
        return events, [self._removed_property(name) for name in extras]

    def _decode_ahead(
        self, payloads: Sequence[Payload], extras: tuple[str, ...]
    ) -> list[msgspec.Struct] | None:
        """The batch through the twins for ``extras`` (:mod:`.ahead`); None where it refuses or
        there are none. A stream makes twins once, after its batches have taken
        ``_TWINS_AFTER`` payloads one version ahead (they cost milliseconds to make), and
        stops trying them after ``_TWIN_REFUSALS`` refused batches."""
        if self._twin_refusals >= _TWIN_REFUSALS:
            return None
        twins = known_twins(self._bindings, extras)
        if twins is None:
            if self._made_twins or self._ahead_count < _TWINS_AFTER:
                return None
            self._made_twins = True
            twins = make_twins(self._bindings, extras)
            if twins is None:
                return None
        events = decode_ahead(twins, payloads)
        if events is None:
            self._twin_refusals += 1
        return events

    def _checked(
        self, events: list[msgspec.Struct]
    ) -> tuple[list[msgspec.Struct], set[type]] | None:
        types = list(map(type, events))  # then a set of them: cheaper than a second pass
        kinds = set(types)
        holding = self._open_union_types.intersection(kinds)
        if holding and not self._open_unions_valid(events, types, holding):
            return None
        refusable = kinds & self._refused_types
        self._dense = bool(refusable) and sum(map(types.count, refusable)) > _PLAIN_REFUSALS
        self.extras = ()
        return events, kinds

    def _open_unions_valid(
        self, events: list[msgspec.Struct], types: list[type], holding: Iterable[type]
    ) -> bool:
        """Whether every open-union value of ``events`` (of ``types``, with some of the
        ``holding`` ones) is a valid member: a batch's values checked in one call per union,
        as a call per event costs more than the check. False may be wrong (the batch check
        is conservative): the exact check then decides."""
        items: dict[type[msgspec.Struct], list[Any]] = {}
        for kind in holding:  # the kind's events and their values picked out in C, not a loop
            chosen = list(
                itertools.compress(events, map(operator.is_, types, itertools.repeat(kind)))
            )
            for attr, (_, holder) in self._open_union_validators[kind].items():
                values = itertools.chain.from_iterable(map(operator.attrgetter(attr), chosen))
                items.setdefault(holder, []).extend(values)
        return all(self._members_valid(values, holder) for holder, values in items.items())

    def _members_valid(self, values: list[Any], holder: type[msgspec.Struct]) -> bool:
        free = self._pattern_free.get(holder)
        try:
            checked = msgspec.convert({"items": values}, holder if free is None else free.holder)
        except msgspec.ValidationError:
            return False
        if free is None:
            return True
        items = checked.items  # type: ignore[attr-defined]
        kinds: set[type] | None = None
        for attr, pattern, read, owners in free.patterns:
            if owners is None:
                strings = list(map(read, items))  # UNSET: an optional attribute, absent
            else:
                kinds = set(map(type, items)) if kinds is None else kinds
                if owners.isdisjoint(kinds):
                    continue
                # None: a member without the attribute
                strings = list(map(getattr, items, itertools.repeat(attr), itertools.repeat(None)))
            known = self._matched.get(pattern)
            if known is None:
                known = self._matched[pattern] = {None, msgspec.UNSET}
            if known.issuperset(strings):
                continue
            for string in set(strings) - known:  # strings, as None is known
                if not isinstance(string, str) or pattern.search(string) is None:
                    return False
                if len(string) <= self._matched_room:
                    self._matched_room -= len(string)
                    known.add(string)
        return True

    # --- the slow path ---------------------------------------------------------------

    def _slow_path(
        self, payload: bytes | bytearray | memoryview | str, index: int, strict_failed: bool
    ) -> msgspec.Struct | None:
        self.extras = ()
        self.slow_path_count += 1
        try:
            document = decode_json(payload)
        except (msgspec.DecodeError, UnicodeError):
            document = decode_text(payload, index)  # raises, saying what is wrong
        if not isinstance(document, dict):  # the compatibility boundary leaves these alone
            raise MalformedEvent(
                "not-an-object",
                f"an event is a JSON object, got {json_kind(document)}",
                index=index,
            )
        if self._translate is not None and needs_translation(document):
            document = self._translate(document, index)
            if document is DROPPED:  # an era shim dropped the event, with a warning
                return None
        event_type = document.get("type")
        if not isinstance(event_type, str):
            raise MalformedEvent(
                "malformed-event", "the event has no string `type`", index=index, path="/type"
            )
        struct = self._event_types.get(event_type)
        if struct is None:
            self._warn(f"event {index}: dropped event of unrecognised type {event_type!r}")
            return None
        trimmed = self._without_unknown_properties(document, struct, index)
        if trimmed is not None:
            kept, removed = trimmed
            self.extras = removed
            if not (removed or strict_failed) and self._strict(payload) is not None:
                self.slow_path_count -= 1  # a guess that missed: the strict decoder takes it
            return kept
        cleaned = self.clean(document, struct, f"event {index}")
        if isinstance(cleaned, _Removed):
            self._warn(f"event {index}: dropped {event_type} event: {cleaned.reason}")
            return None
        try:  # the same strict types as the fast path, straight from the document
            event: msgspec.Struct = msgspec.convert(cleaned, struct)
        except msgspec.ValidationError as exc:
            raise MalformedEvent(
                "malformed-event",
                f"{event_type}: {exc}",
                index=index,
                path=self.as_received(pointer_from_msgspec(str(exc)), cleaned),
            ) from None
        validators = self._open_union_validators.get(type(event))
        if validators is not None:
            problem = _open_union_error(event, validators)
            if problem is not None:
                raise MalformedEvent(
                    "malformed-event",
                    f"{event_type}: {problem[1]}",
                    index=index,
                    path=self.as_received(problem[0], cleaned),
                )
        return event

    def as_received(self, pointer: str, cleaned: Any) -> str:
        """``pointer`` into the ``cleaned`` document, with each list index turned back into
        the position the element had before the clean removed any before it."""
        if not self._positions or not pointer:
            return pointer
        node, tokens = cleaned, []
        for token in pointer[1:].split("/"):
            if isinstance(node, list) and token.isdigit() and int(token) < len(node):
                entry = self._positions.get(id(node))
                tokens.append(str(entry[1][int(token)]) if entry else token)
                node = node[int(token)]
            else:
                tokens.append(token)
                node = node.get(pointer_untoken(token)) if isinstance(node, dict) else None
        return "/" + "/".join(tokens)

    def _without_unknown_properties(
        self, document: dict[str, Any], struct: type[msgspec.Struct], index: int
    ) -> tuple[msgspec.Struct, tuple[str, ...]] | None:
        """The common slow path, cheaply: the event and the unknown properties it had, if
        those (a vendor's extra field, say) were all it had unrecognised; else None, and
        ``document`` as it was.

        Anything else the walk would remove, or read as an integer, fails the strict
        conversion, so a success here is what the walk would have made.
        """
        names = _wire_names(struct)
        unknown = []
        for key in document:  # a loop: a comprehension costs more, per event
            if key not in names:
                unknown.append(key)
        trimmed = document
        if unknown:
            trimmed = dict(document)  # ``document`` stays whole for the walk, should this fail
            for key in unknown:
                del trimmed[key]
        try:
            event: msgspec.Struct = msgspec.convert(trimmed, struct)
        except msgspec.ValidationError:
            return None
        validators = self._open_union_validators.get(struct)
        if validators is not None and _open_union_error(event, validators) is not None:
            return None  # an unknown JSON Patch operation: the walk removes it
        for key in unknown:
            self._warn_about(index, self._removed_property(key))
        return event, tuple(unknown)

    def _removed_property(self, key: str) -> str:
        """The warning for an unrecognised property, after "event N": built once per name
        while the cache has room."""
        text = self._removed_texts.get(key)
        if text is None:
            text = f" /{pointer_token(key)}: removed unrecognised property"
            if len(key) + len(text) <= self._removed_texts_room:
                self._removed_texts_room -= len(key) + len(text)
                self._removed_texts[key] = text
        return text

    def clean(self, document: dict[str, Any], struct: type[msgspec.Struct], origin: str) -> Any:
        """Remove what ``struct`` does not recognise from a generic ``document``, in place.

        Returns the document, or a removal marker when a required position lost its value.
        ``origin`` prefixes the warnings ("event 3", "input").
        """
        self._positions.clear()
        info = _STRUCT_INFO.get(struct)
        if info is None:  # building the type tree costs far more than the walk itself
            info = _STRUCT_INFO[struct] = _as_struct(mi.type_info(struct))
        return self._clean_struct(document, info, "", origin)

    def _clean(self, value: Any, expected: mi.Type, path: str, origin: str) -> Any:
        if isinstance(expected, mi.StructType):
            return (
                self._clean_struct(value, expected, path, origin)
                if isinstance(value, dict)
                else value
            )
        if isinstance(expected, mi.ListType):
            return (
                self._clean_list(value, expected.item_type, path, origin)
                if isinstance(value, list)
                else value
            )
        if isinstance(expected, mi.LiteralType):
            return self._clean_literal(value, expected)
        if isinstance(expected, mi.UnionType):
            return self._clean_union(value, expected, path, origin)
        if isinstance(expected, mi.IntType):
            return _integer_if_integral(value)
        return value

    def _clean_union(self, value: Any, expected: mi.UnionType, path: str, origin: str) -> Any:
        if isinstance(value, dict):
            member = _tagged_member(value, expected)
            if isinstance(member, _Removed):
                return member
            if member is not None:
                return self._clean_struct(value, member, path, origin)
        for option in expected.types:
            if isinstance(option, mi.ListType) and isinstance(value, list):
                return self._clean_list(value, option.item_type, path, origin)
            if isinstance(option, mi.LiteralType) and isinstance(value, str):
                return self._clean_literal(value, option)
        return value  # anything else in a union slot is for the strict decode to judge

    def _clean_list(
        self, items: list[Any], item_type: mi.Type, path: str, origin: str
    ) -> list[Any]:
        kept, positions = [], []
        for position, item in enumerate(items):
            cleaned = self._clean(item, item_type, f"{path}/{position}", origin)
            if isinstance(cleaned, _Removed):
                self._warn(f"{origin} {path}/{position}: removed {cleaned.reason}")
            else:
                kept.append(cleaned)
                positions.append(position)
        if len(kept) < len(items):
            self._positions[id(kept)] = (kept, positions)
        return kept

    def _clean_literal(self, value: Any, expected: mi.LiteralType) -> Any:
        # Only enumerations are open to new values; a wrong const is malformed.
        values = frozenset(str(v) for v in expected.values)
        if isinstance(value, str) and value not in values and values in self._closed_sets:
            return _Removed(f"unrecognised value {value!r}")
        return value

    def _clean_struct(
        self, obj: dict[str, Any], expected: mi.StructType, path: str, origin: str
    ) -> Any:
        fields = _FIELDS.get(expected.cls)
        if fields is None:
            fields = _FIELDS[expected.cls] = {
                f.encode_name: (f, pointer_token(f.encode_name), _walk_of(f.type))
                for f in expected.fields
            }
        open_unions = self._open_unions.get(expected.cls, {})
        for key in list(obj):
            if key == expected.tag_field:
                continue
            known = fields.get(key)
            if known is None:
                if expected.forbid_unknown_fields:
                    del obj[key]
                    self._warn(
                        f"{origin} {path}/{pointer_token(key)}: removed unrecognised property"
                    )
                continue
            spec, token, walk = known
            if walk is _WALK_NONE:
                continue  # a string, a boolean, an open object: nothing here is unrecognised
            if walk is _WALK_INTEGER:
                obj[key] = _integer_if_integral(obj[key])
                continue
            where = f"{path}/{token}"
            union = open_unions.get(spec.name)
            if union is not None:
                cleaned = self._clean_open_union_items(obj[key], union, where, origin)
            else:
                cleaned = self._clean(obj[key], spec.type, where, origin)
            if not isinstance(cleaned, _Removed):
                obj[key] = cleaned
            elif spec.required:
                return _Removed(f"{cleaned.reason} at required {where}")
            else:
                del obj[key]
                self._warn(f"{origin} {where}: removed {cleaned.reason}")
        return obj

    def _clean_open_union_items(
        self, value: Any, union: mi.UnionType, path: str, origin: str
    ) -> Any:
        """Open objects (JSON Patch operations): drop unknown members, keep every property."""
        if not isinstance(value, list):
            return value
        kept, positions = [], []
        for position, item in enumerate(value):
            member = _tagged_member(item, union) if isinstance(item, dict) else None
            if isinstance(member, _Removed):
                self._warn(f"{origin} {path}/{position}: removed {member.reason}")
            else:
                kept.append(item)
                positions.append(position)
        if len(kept) < len(value):
            self._positions[id(kept)] = (kept, positions)
        return kept


def _tagged_member(value: dict[str, Any], union: mi.UnionType) -> mi.StructType | _Removed | None:
    """The member a tagged object selects, _Removed for an unknown tag, None if untagged."""
    members = [t for t in union.types if isinstance(t, mi.StructType) and t.tag_field is not None]
    if not members:
        return None
    tag_field = members[0].tag_field
    tag = value.get(tag_field or "")
    if not isinstance(tag, str):
        return None
    for member in members:
        if member.tag == tag:
            return member
    return _Removed(f"unrecognised {tag_field} {tag!r}")


def _holder(union: Any) -> type[msgspec.Struct]:
    return msgspec.defstruct("OpenUnionItems", [("items", list[union] | union)])


def _open_union_error(
    event: msgspec.Struct, validators: dict[str, tuple[str, type[msgspec.Struct]]]
) -> tuple[str, str] | None:
    """The first value of an open-union field that is not a valid member: (pointer, reason)."""
    for attr, (wire, holder) in validators.items():
        try:
            msgspec.convert({"items": getattr(event, attr)}, holder)
        except msgspec.ValidationError as exc:
            pointer = pointer_from_msgspec(str(exc)).removeprefix("/items")
            return f"/{wire}{pointer}", str(exc).replace("$.items", "$")
    return None


def _encode_name(struct: type[msgspec.Struct], attr: str) -> str:
    for info in msgspec.structs.fields(struct):
        if info.name == attr:
            return info.encode_name
    return attr


def _as_struct(info: mi.Type) -> mi.StructType:
    assert isinstance(info, mi.StructType)
    return info


def _as_union(info: mi.Type) -> mi.UnionType:
    assert isinstance(info, mi.UnionType)
    return info
