"""The tag of a tagged Struct (an event's ``type``, a message's ``role``, an outcome's
``type``), looked up once per class.

Every stage dispatches on it; reading ``__struct_config__`` per event would
cost an allocation on the hot path.
"""

from __future__ import annotations

from msgspec import Struct

_TAGS: dict[type, str] = {}


def tag_of(struct: Struct) -> str:
    cls = type(struct)
    tag = _TAGS.get(cls)
    if tag is None:
        tag = _TAGS[cls] = str(cls.__struct_config__.tag)
    return tag
