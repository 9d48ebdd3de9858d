"""JSON as the protocol sees it: the kind of a value, for diagnoses, and JSON Pointers
(RFC 6901), the paths every warning and violation names; the one version-neutral encoder."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

encode_json = msgspec.json.Encoder().encode
"""Any JSON value or binding Struct as compact JSON, wire names, absent fields left out."""
# msgspec names a failing value's place as ``$.a[0]["b c"]`` at the end of its message.
_MSGSPEC_PATH = re.compile(r"`\$((?:\.[^.\[`]+|\[\d+\]|\[\"(?:[^\"\\]|\\.)*\"\])*)`$")
_PATH_PART = re.compile(r"\.([^.\[`]+)|\[(\d+)\]|\[\"((?:[^\"\\]|\\.)*)\"\]")


def json_kind(value: Any) -> str:
    """What kind of JSON value ``value`` is, for a diagnosis ("an array", "null", ...)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return f"a {type(value).__name__}"


def pointer_token(key: str) -> str:
    """Escape one reference token of a JSON Pointer (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")


def pointer_untoken(token: str) -> str:
    """Unescape one reference token of a JSON Pointer (RFC 6901)."""
    # RFC 6901 order: "~01" must become "~1", not "/".
    return token.replace("~1", "/").replace("~0", "~")


def pointer_from_msgspec(message: str) -> str:
    """``Expected int - at `$.usage[0].inputTokens``` → ``/usage/0/inputTokens``."""
    match = _MSGSPEC_PATH.search(message)
    if match is None:
        return ""
    tokens = (name or index or quoted for name, index, quoted in _PATH_PART.findall(match.group(1)))
    return "".join("/" + pointer_token(token) for token in tokens)
