"""Interop with the official Python SDK, ``ag-ui-protocol`` (pydantic models in ``ag_ui.core``).

Nothing here imports pydantic or ``ag_ui`` until an official object is met or asked
for: an object can only be a pydantic model if pydantic is already imported.

Official models read as wire-named documents, from their attributes: a plan per class
says each field's wire name and whether ``None`` there means absent (an optional field
whose default is ``None``, as the SDK's own serializer decides). That is about three
times cheaper than ``model_dump`` (benchmarks/, BENCHMARKS.md), whose per-model
serializer hook runs in Python; ``msgspec.convert(..., from_attributes=True)`` cannot
be used directly, as it takes neither the ``EventType`` enum nor ``None`` for absent.
"""

from __future__ import annotations

import enum
import sys
from typing import Any

import msgspec

from agui_msgspec._errors import MalformedEvent, ProtocolViolation, UsageError
from agui_msgspec._pipeline.enforce import Enforcer, pointer_from_msgspec
from agui_msgspec._versions import LATEST_VERSION, Bindings, VersionLike, bindings_for

_OFFICIAL_PACKAGE = "ag_ui."
_AS_IS = frozenset({str, int, float, bool, dict})  # a dict value is an open JSON object

# official class → attribute → (wire name, None there means absent); None for a model that
# is not the SDK's (an application's own, in a state snapshot say): model_dump reads those.
_PLANS: dict[type, dict[str, tuple[str, bool]] | None] = {}
# (official class, bindings) → the Struct of the same name
_COUNTERPARTS: dict[tuple[type, Bindings], type[msgspec.Struct]] = {}
# Struct class → (its ag_ui.core model, (wire name, default) of each field whose default is
# a value, not UNSET)
_OFFICIAL: dict[type, tuple[Any, tuple[tuple[str, Any], ...]]] = {}


def is_official(obj: object) -> bool:
    """Whether ``obj`` is a pydantic model (``ag_ui.core``'s or an application's)."""
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(obj, pydantic.BaseModel)


def official_document(model: Any) -> dict[str, Any]:
    """A pydantic model as the wire-named JSON object it stands for, as the SDK writes it."""
    plan = _plan(type(model))
    if plan is None:
        document: dict[str, Any] = model.model_dump(mode="json", by_alias=True)
        return document
    document = {}
    for name, value in model.__dict__.items():
        wire, none_is_absent = plan[name]
        if value is None:
            if not none_is_absent:
                document[wire] = None
        elif type(value) in _AS_IS:
            document[wire] = value
        elif type(value) is list:
            document[wire] = [_value(item) for item in value]
        else:
            document[wire] = _value(value)
    extra = model.__pydantic_extra__
    if extra:
        document.update(extra)
    return document


def _value(value: Any) -> Any:
    if type(value) in _AS_IS:
        return value
    if isinstance(value, enum.Enum):
        return value._value_  # the attribute: the ``value`` property costs two calls
    if is_official(value):
        return official_document(value)
    return value


def _plan(cls: type) -> dict[str, tuple[str, bool]] | None:
    try:
        return _PLANS[cls]
    except KeyError:
        pass
    plan = None
    if any(base.__module__.startswith(_OFFICIAL_PACKAGE) for base in cls.__mro__):
        fields = cls.model_fields  # type: ignore[attr-defined]
        plan = {
            name: (field.alias or name, not field.is_required() and field.default is None)
            for name, field in fields.items()
        }
    _PLANS[cls] = plan
    return plan


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
    document = official_document(model)
    try:
        return msgspec.convert(document, target)
    except msgspec.ValidationError as exc:
        failure = str(exc)
    subject = type(model).__name__
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
    key = (cls, bindings)
    target = _COUNTERPARTS.get(key)
    if target is None:
        for base in cls.__mro__:
            candidate = getattr(bindings, base.__name__, None)
            if isinstance(candidate, type) and issubclass(candidate, msgspec.Struct):
                target = _COUNTERPARTS[key] = candidate
                break
        else:
            raise UsageError(
                f"AG-UI {bindings.PROTOCOL_VERSION} has no type for {cls.__name__} "
                "(an ag-ui-protocol model was expected)"
            )
    return target


def to_official(struct: msgspec.Struct) -> Any:
    """A binding Struct as the ``ag_ui.core`` model of the same name (imports ``ag_ui``).

    ``UNSET`` becomes ``None``; a field with a schema default (``TextMessageStartEvent.role``,
    ``ActivitySnapshotEvent.replace``) is written with its value, which the official model
    would otherwise leave ``None`` ("absent means the default").

    A Struct is not validated when it is built, so it is here: a value its schema rejects
    raises ``MalformedEvent`` (``malformed-event`` with its path, ``invalid-json`` for a
    value JSON has no form for, ``too-deep``), as :func:`from_official` does.
    """
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
    return model.model_validate(document)


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
