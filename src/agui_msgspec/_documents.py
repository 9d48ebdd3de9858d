"""Any payload the library is handed, read as the JSON document it stands for: JSON text
(bytes, str), a wire-named dict, an event Struct, or a pydantic model (the official SDK's
``ag_ui.core``, or an application's own).

Nothing here imports pydantic: an object can only be a pydantic model if pydantic is
already imported. Official models read from their attributes through a plan per class
(each field's wire name, and whether ``None`` there means absent, as the SDK's own
serializer decides): about three times cheaper than ``model_dump`` (BENCHMARKS.md).
"""

from __future__ import annotations

import enum
import json
import sys
import weakref
from collections.abc import Mapping
from typing import Any, Protocol

import msgspec

from agui_msgspec._errors import MalformedEvent, UsageError
from agui_msgspec._json import encode_json, json_kind


class OfficialModel(Protocol):
    """A pydantic model, such as the official SDK's events (``ag_ui.core``)."""

    def model_dump(self, *args: Any, **kwargs: Any) -> dict[str, Any]: ...


Payload = bytes | bytearray | memoryview | str | Mapping[str, Any] | msgspec.Struct | OfficialModel

# A Decoder's method: msgspec.json.decode parses its options on every call (0.03 µs a payload).
decode_json = msgspec.json.Decoder().decode


def decode_document(payload: Payload, index: int) -> Any:
    """The payload as a generic JSON document (for stages that work on dicts)."""
    if not isinstance(payload, (bytes, str, bytearray, memoryview)):
        return decode_json(encode_document(payload, index))
    return decode_text(payload, index)


def plain_text(text: bytes | bytearray | memoryview | str) -> bytes | bytearray | str:
    """``text`` as a type msgspec decodes: it refuses a ``str`` subclass (not a ``bytes``
    one) and a memoryview that is not contiguous, so a view is read as its bytes."""
    if isinstance(text, memoryview):
        try:
            return text.tobytes()
        except ValueError:  # released by its owner: a caller's mistake, not the stream's
            raise UsageError("a payload is a released memoryview") from None
    return str.__str__(text) if isinstance(text, str) and type(text) is not str else text


def decode_text(payload: bytes | bytearray | memoryview | str, index: int) -> Any:
    payload = plain_text(payload)
    try:
        if isinstance(payload, str):
            payload = payload.encode("utf-8")  # a lone surrogate cannot be UTF-8
        return decode_json(payload)  # it checks the UTF-8 of every string
    except (msgspec.DecodeError, UnicodeError) as exc:
        failure: Exception = exc
    try:  # bad UTF-8 anywhere, even where the JSON is also broken, is reported as such
        if isinstance(payload, str):
            raise failure
        bytes(payload).decode("utf-8")
    except UnicodeError as exc:
        raise MalformedEvent(
            "invalid-utf8", f"the payload is not UTF-8: {exc}", index=index
        ) from None
    raise MalformedEvent(
        "invalid-json", f"the payload is not JSON: {failure}", index=index
    ) from None


def encode_document(payload: object, index: int) -> bytes:
    """A payload given as a Python value (a dict, an event Struct, a pydantic model of the
    official SDK) as the JSON bytes it stands for."""
    if isinstance(payload, msgspec.Struct):
        try:  # a Struct's open values (a state, a delta) are not checked when it is made
            text = encode_json(payload)
            if b"null" not in text:
                return text
            # msgspec writes NaN and the infinities as null: the standard library refuses them
            return strict_json(msgspec.to_builtins(payload))
        except (TypeError, ValueError, OverflowError, msgspec.EncodeError) as exc:
            raise _not_encodable(exc, index) from None
    if not isinstance(payload, Mapping):
        if is_official(payload):
            try:
                document = official_document(payload)
            except MalformedEvent as unreadable:
                raise MalformedEvent(unreadable.rule, unreadable.detail, index=index) from None
            # Written as the SDK's own encoder writes it (NaN as null, say), only faster.
            try:
                return msgspec.json.encode(document)
            except (TypeError, ValueError, OverflowError, msgspec.EncodeError):
                pass
            try:  # a value only pydantic can write: an application's model inside a dict, say
                return payload.model_dump_json(by_alias=True).encode()  # type: ignore[attr-defined,no-any-return]
            except Exception as exc:  # the model's own serializer runs here: anything
                raise _not_encodable(exc, index) from None
        raise MalformedEvent(
            "not-an-object", f"an event is a JSON object, got {json_kind(payload)}", index=index
        )
    try:
        return strict_json(dict(payload))
    except (TypeError, ValueError, OverflowError, UnicodeError) as exc:
        raise _not_encodable(exc, index) from None


def strict_json(document: object) -> bytes:
    """``document`` as JSON by the standard library, which refuses NaN and the infinities
    (msgspec would write them as null) and any value that is not JSON (bytes, a datetime:
    msgspec would write them as strings)."""
    return json.dumps(document, allow_nan=False, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8"
    )


def _not_encodable(failure: Exception, index: int) -> MalformedEvent:
    return MalformedEvent(
        "invalid-json", f"the event is not JSON-encodable: {failure}", index=index
    )


_OFFICIAL_PACKAGE = "ag_ui."
_AS_IS = frozenset({str, int, float, bool, dict})  # a dict value is an open JSON object

# official class → attribute → (wire name, None there means absent); None for a model that
# is not the SDK's (an application's own, in a state snapshot say): model_dump reads those.
# The SDK's own classes live as long as it does; any other class is held weakly, so one made
# at run time is not kept alive (a weak lookup costs about four plain ones: not for the SDK's).
_SDK_PLANS: dict[type, dict[str, tuple[str, bool]]] = {}
_OTHER_PLANS: weakref.WeakKeyDictionary[type, dict[str, tuple[str, bool]] | None] = (
    weakref.WeakKeyDictionary()
)


def is_official(obj: object) -> bool:
    """Whether ``obj`` is a pydantic model (``ag_ui.core``'s or an application's)."""
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(obj, pydantic.BaseModel)


def official_document(model: Any) -> dict[str, Any]:
    """A pydantic model as the wire-named JSON object it stands for, as the SDK writes it.

    Raises ``MalformedEvent`` (``invalid-json``; ``too-deep``) for a model that cannot be
    read as one: its own ``model_dump`` failing, a property name that is not a string.
    """
    try:
        document = _read(model)
    except RecursionError:
        raise MalformedEvent("too-deep", "the model nests too deeply") from None
    except MalformedEvent:
        raise
    except Exception as exc:  # an application's model runs its own code here: anything
        raise MalformedEvent(
            "invalid-json", f"the model cannot be read as JSON: {type(exc).__name__}: {exc}"
        ) from None
    if not isinstance(document, dict) or not all(type(key) is str for key in document):
        raise MalformedEvent("invalid-json", "the model is not a JSON object with string keys")
    return document


def _read(model: Any) -> Any:
    plan = _plan(type(model))
    if plan is None:
        return model.model_dump(mode="json", by_alias=True)
    document: dict[str, Any] = {}
    try:
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
    except KeyError:  # an attribute its fields do not name (set by model_construct, say)
        return model.model_dump(mode="json", by_alias=True)
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
        return _read(value)
    return value


def _plan(cls: type) -> dict[str, tuple[str, bool]] | None:
    plan = _SDK_PLANS.get(cls)
    if plan is not None:
        return plan
    try:
        return _OTHER_PLANS[cls]
    except KeyError:
        pass
    plan = None
    if any(base.__module__.startswith(_OFFICIAL_PACKAGE) for base in cls.__mro__):
        fields = cls.model_fields  # type: ignore[attr-defined]
        plan = {
            name: (field.alias or name, not field.is_required() and field.default is None)
            for name, field in fields.items()
        }
    if plan is not None and cls.__module__.startswith(_OFFICIAL_PACKAGE):
        _SDK_PLANS[cls] = plan
    else:
        _OTHER_PLANS[cls] = plan
    return plan
