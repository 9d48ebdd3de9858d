"""A batch from a producer one version ahead, in one strict decode.

Such a producer sends the same new top-level properties on every event (a ``traceId``, say),
so the strict decoder refuses every payload. Decoding each one generically, removing the
properties and converting the rest costs about 2.6 strict decodes. Instead, each event type
gets a twin for those properties. In the twin, one optional field of the type, whose value
is absent (``UNSET``) when not sent, reads a new property in place of its own. The wire name
changes; the slot stays. The twin's strict decode then takes exactly the payloads whose only
unrecognised material is those properties, as the exact path would.

Each event afterwards gets its field's absence back and its own class: a twin adds no slot,
so Python lets the object change class. A payload that sends a borrowed field, or anything
else the twin refuses, leaves the batch to the exact path.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple, cast

import msgspec

from agui_msgspec._versions import Bindings

MAX_NAME_CHARS = 256
"""The characters of the extra properties' names a twin takes at most: what a producer adds
is a short name or two, and the twins made are kept (``make_twins``)."""


class Twins(NamedTuple):
    """The twins of one version's event types for one tuple of extra properties."""

    decode: Callable[[Any], msgspec.Struct]
    """The strict decode of a payload into the twin of its type."""
    borrowed: tuple[str, ...]
    """The attribute that holds each extra property's value, the same in every twin."""
    own_class: dict[type, type[msgspec.Struct]]
    """Twin → the event type it stands in for."""


def decode_ahead(twins: Twins, payloads: Sequence[Any]) -> list[msgspec.Struct] | None:
    """The events of ``payloads`` as their own types, each property of a producer one version
    ahead dropped; None if any payload is not exactly such an event (msgspec's errors, a
    payload that is not text)."""
    try:
        events = list(map(twins.decode, payloads))
    except (ValueError, BufferError, TypeError, RecursionError):  # msgspec's errors among them
        return None
    absent = itertools.repeat(msgspec.UNSET)
    for attr in twins.borrowed:
        any(map(setattr, events, itertools.repeat(attr), absent))
    own_class = twins.own_class
    for event in events:  # a loop: cheaper here than ``map(setattr, ...)``
        event.__class__ = own_class[type(event)]
    return events


def known_twins(bindings: Bindings, extras: tuple[str, ...]) -> Twins | None:
    """The twins already made for ``extras`` in this process, if any."""
    return _MADE.get((bindings, extras))


def make_twins(bindings: Bindings, extras: tuple[str, ...]) -> Twins | None:
    """The twins for ``extras``, kept for the process's next streams (a server's producers add
    the same names), the oldest forgotten past ``KEPT``. Making them costs milliseconds. None
    for names too long to keep, or more of them than fields to borrow."""
    if sum(map(len, extras)) > MAX_NAME_CHARS:
        return None
    plan = _lending_plan(cast("Hashable", bindings))  # a module, hashable at run time
    if len(plan.lenders) < len(extras):
        return None
    borrowed = plan.lenders[: len(extras)]
    own_class: dict[type, type[msgspec.Struct]] = {}
    for kind, wire_names in plan.kinds:
        if not wire_names.isdisjoint(extras):
            continue  # a property this type knows: the exact path's to judge
        fields = [
            (attr, Any, msgspec.field(name=extra))
            for attr, extra in zip(borrowed, extras, strict=True)
        ]
        try:
            twin = msgspec.defstruct(kind.__name__, fields, bases=(kind,))
        except (ValueError, TypeError):  # a name msgspec cannot rename to (a quote, a control)
            return None
        if twin.__basicsize__ != kind.__basicsize__:  # a slot added: no change of class then
            return None
        own_class[twin] = kind
    if not own_class:
        return None
    decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(
        functools.reduce(operator.or_, own_class)
    )
    twins = Twins(decoder.decode, borrowed, own_class)
    _MADE[bindings, extras] = twins
    if len(_MADE) > KEPT:
        _MADE.pop(next(iter(_MADE)), None)  # None: another thread forgot it first
    return twins


KEPT = 16
_MADE: dict[tuple[Bindings, tuple[str, ...]], Twins] = {}


class _LendingPlan(NamedTuple):
    lenders: tuple[str, ...]
    """The optional fields every event type has, the last declared first: a base event's
    extras (metadata, a raw event) are the ones a stream sends least."""
    kinds: tuple[tuple[type[msgspec.Struct], frozenset[str]], ...]
    """Each event type with its wire names."""


@functools.cache  # per bindings module
def _lending_plan(bindings: Bindings) -> _LendingPlan:
    kinds = list(bindings.EVENT_TYPES.values())
    unsent = list(map(_absent_when_unsent, kinds))
    shared = functools.reduce(operator.and_, map(set, unsent))
    return _LendingPlan(
        lenders=tuple(attr for attr in reversed(unsent[0]) if attr in shared),
        kinds=tuple((kind, frozenset(kind.__struct_encode_fields__)) for kind in kinds),
    )


def _absent_when_unsent(kind: type[msgspec.Struct]) -> list[str]:
    """The attributes of ``kind`` that default to ``UNSET``, in declaration order (read from
    the class: ``msgspec.structs.fields`` costs 0.1 ms a Struct)."""
    names, defaults = kind.__struct_fields__, kind.__struct_defaults__
    with_defaults = names[len(names) - len(defaults) :]  # the defaults are the last fields'
    pairs = zip(with_defaults, defaults, strict=True)
    return [name for name, default in pairs if default is msgspec.UNSET]
