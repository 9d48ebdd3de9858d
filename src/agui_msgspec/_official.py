"""Conversion to and from the official Python SDK, ``ag-ui-protocol`` (pydantic models in
``ag_ui.core``): ``from_official`` and ``to_official``.

Reading a model as a document is ``_documents``' job; ``ag_ui`` is imported only when
``to_official`` asks for its models. ``msgspec.convert(..., from_attributes=True)`` cannot
read the models directly, as it takes neither the ``EventType`` enum nor ``None`` for absent.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Literal, overload

import msgspec

from agui_msgspec._documents import official_document
from agui_msgspec._errors import MalformedEvent, ProtocolViolation, UsageError
from agui_msgspec._json import pointer_from_msgspec
from agui_msgspec._pipeline.enforce import Enforcer
from agui_msgspec._versions import LATEST_VERSION, Bindings, VersionLike, bindings_for

if TYPE_CHECKING:
    import ag_ui.core as official

    from agui_msgspec import v1_0, v1_1
    from agui_msgspec._pipeline.decode import EventOfEither, MessageOfEither

# Weak keys, so that neither cache keeps a class alive (an application's, made at run time).
# official class → bindings → the Struct of the same name
_COUNTERPARTS: weakref.WeakKeyDictionary[type, dict[Bindings, type[msgspec.Struct]]] = (
    weakref.WeakKeyDictionary()
)
# Struct class → (its ag_ui.core model, (wire name, default) of each field whose default is
# a value, not UNSET)
_OFFICIAL: weakref.WeakKeyDictionary[type, tuple[Any, tuple[tuple[str, Any], ...]]] = (
    weakref.WeakKeyDictionary()
)


# An official model typed as its base class (``BaseEvent``, ``BaseMessage``) is still one of
# the union's members, so it converts to the version's union.
@overload
def from_official(
    model: official.RunAgentInput, version: Literal["1.1"] = ...
) -> v1_1.RunAgentInput: ...
@overload
def from_official(model: official.RunAgentInput, version: Literal["1.0"]) -> v1_0.RunAgentInput: ...
@overload
def from_official(
    model: official.Event | official.BaseEvent, version: Literal["1.1"] = ...
) -> v1_1.Event: ...
@overload
def from_official(
    model: official.Event | official.BaseEvent, version: Literal["1.0"]
) -> v1_0.Event: ...
@overload
def from_official(
    model: official.Message | official.BaseMessage, version: Literal["1.1"] = ...
) -> v1_1.Message: ...
@overload
def from_official(
    model: official.Message | official.BaseMessage, version: Literal["1.0"]
) -> v1_0.Message: ...
@overload
def from_official(
    model: official.RunAgentInput, version: str
) -> v1_1.RunAgentInput | v1_0.RunAgentInput: ...
@overload
def from_official(model: official.Event | official.BaseEvent, version: str) -> EventOfEither: ...
@overload
def from_official(
    model: official.Message | official.BaseMessage, version: str
) -> MessageOfEither: ...
@overload
def from_official(model: Any, version: VersionLike = ...) -> Any: ...
def from_official(model: Any, version: VersionLike = LATEST_VERSION) -> Any:
    """An ``ag-ui-protocol`` model (event, message, ``RunAgentInput``, ...) as the Struct of
    the same name in ``version``'s bindings.

    ``None`` in an optional field is absent (``UNSET``). Raises
    ``ProtocolViolation(rule="unrecognised-content")`` for material the version has no
    place for (an extra field, say), naming each path, and ``MalformedEvent`` for a value
    its schema rejects.
    """
    bindings = bindings_for(version)
    target = _counterpart(type(model), bindings)
    subject = type(model).__name__
    try:
        document = official_document(model)
    except MalformedEvent as unreadable:
        raise MalformedEvent(unreadable.rule, unreadable.detail, subject=subject) from None
    try:
        return msgspec.convert(document, target)
    except msgspec.ValidationError as exc:
        failure = str(exc)
    except (TypeError, ValueError, UnicodeError) as exc:  # a lone surrogate, a bytes key, ...
        raise MalformedEvent(
            "invalid-json", f"the value is not JSON-encodable: {exc}", subject=subject
        ) from None
    except RecursionError:
        raise MalformedEvent("too-deep", "the value nests too deeply", subject=subject) from None
    stripped: list[str] = []
    Enforcer(bindings, stripped.append).clean(document, target, subject)
    if stripped:
        raise ProtocolViolation(
            "unrecognised-content",
            f"AG-UI {bindings.PROTOCOL_VERSION} has no place for: {'; '.join(stripped)}",
            subject=subject,
        )
    raise MalformedEvent(
        "malformed-event",
        failure.partition(" - at `")[0],
        path=pointer_from_msgspec(failure),
        subject=subject,
    )


def _counterpart(cls: type, bindings: Bindings) -> type[msgspec.Struct]:
    by_bindings = _COUNTERPARTS.get(cls)
    if by_bindings is None:
        by_bindings = _COUNTERPARTS[cls] = {}
    target = by_bindings.get(bindings)
    if target is None:
        for base in cls.__mro__:
            candidate = getattr(bindings, base.__name__, None)
            if isinstance(candidate, type) and issubclass(candidate, msgspec.Struct):
                target = by_bindings[bindings] = candidate
                break
        else:
            raise UsageError(
                f"AG-UI {bindings.PROTOCOL_VERSION} has no type for {cls.__name__} "
                "(an ag-ui-protocol model was expected)"
            )
    return target


@overload
def to_official(struct: v1_1.RunAgentInput | v1_0.RunAgentInput) -> official.RunAgentInput: ...
@overload
def to_official(struct: EventOfEither) -> official.Event: ...
@overload
def to_official(struct: MessageOfEither) -> official.Message: ...
@overload
def to_official(struct: msgspec.Struct) -> Any: ...
def to_official(struct: msgspec.Struct) -> Any:
    """A binding Struct as the ``ag_ui.core`` model of the same name (imports ``ag_ui``).

    ``UNSET`` becomes ``None``; a field with a schema default (``TextMessageStartEvent.role``,
    ``ActivitySnapshotEvent.replace``) is written with its value, which the official model
    would otherwise leave ``None`` ("absent means the default").

    A Struct is not validated when it is built, so it is here: a value its schema rejects
    raises ``MalformedEvent`` (``malformed-event`` with its path, ``invalid-json`` for a
    value JSON has no form for, ``too-deep``), as :func:`from_official` does. A value the
    installed ``ag-ui-protocol`` models cannot hold (an outcome newer than they are, say),
    a Struct they have no model for, or anything but a Struct raises :class:`UsageError`.
    """
    if not isinstance(struct, msgspec.Struct):
        raise UsageError(f"to_official takes a binding Struct, not {type(struct).__name__}")
    target = _OFFICIAL.get(type(struct))
    if target is None:
        target = _OFFICIAL[type(struct)] = _official_counterpart(type(struct))
    model, defaults = target
    subject = type(struct).__name__
    try:
        document = msgspec.to_builtins(struct)
        msgspec.convert(document, type(struct))
    except msgspec.ValidationError as exc:
        failure = str(exc)
        raise MalformedEvent(
            "malformed-event",
            failure.partition(" - at `")[0],
            path=pointer_from_msgspec(failure),
            subject=subject,
        ) from None
    except (TypeError, ValueError, OverflowError) as exc:
        raise MalformedEvent(
            "invalid-json", f"the value is not JSON-encodable: {exc}", subject=subject
        ) from None
    except RecursionError:
        raise MalformedEvent("too-deep", "the value nests too deeply", subject=subject) from None
    for wire, default in defaults:
        document.setdefault(wire, default)
    try:
        return model.model_validate(document)
    except ValueError as exc:  # pydantic's ValidationError: a value newer than the SDK's models
        raise UsageError(
            f"ag-ui-protocol's {model.__name__} cannot hold this {subject}: "
            f"{_first_line(str(exc), 2)}"
        ) from None


def _first_line(text: str, lines: int) -> str:
    """The start of a pydantic message: its count and first error, not the whole dump."""
    return "; ".join(line.strip() for line in text.splitlines()[:lines])


def _official_counterpart(cls: type[msgspec.Struct]) -> tuple[Any, tuple[tuple[str, Any], ...]]:
    """The ``ag_ui.core`` model named like ``cls``, and the defaults to write out for it."""
    import ag_ui.core  # noqa: PLC0415  (the SDK is imported only when asked for)

    model = getattr(ag_ui.core, cls.__name__, None)
    if model is None:
        raise UsageError(f"ag-ui-protocol has no model named {cls.__name__}")
    defaults = tuple(
        (field.encode_name, field.default)
        for field in msgspec.structs.fields(cls)
        if field.default is not msgspec.UNSET and field.default is not msgspec.NODEFAULT
    )
    return model, defaults
