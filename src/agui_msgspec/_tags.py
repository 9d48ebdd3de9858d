"""The wire ``type`` of an event Struct, looked up once per class.

Every stage dispatches on it; reading ``__struct_config__`` per event would
cost an allocation on the hot path.
"""

from __future__ import annotations

from msgspec import Struct

_TAGS: dict[type, str] = {}


def event_type(event: Struct) -> str:
    cls = type(event)
    tag = _TAGS.get(cls)
    if tag is None:
        tag = _TAGS[cls] = str(cls.__struct_config__.tag)
    return tag
