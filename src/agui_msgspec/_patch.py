"""RFC 6902 JSON Patch over RFC 6901 JSON Pointers, for the state reducer.

AG-UI applies a ``STATE_DELTA`` (and an ``ACTIVITY_DELTA``) atomically
(basic/patterns/snapshots): either every operation applies or the prior value is
kept. A well-formed patch that does not apply is not a protocol violation, so
:func:`apply_patch` reports it as a :class:`PatchConflict` whose text is the
diagnosis for the caller's warning.

:func:`apply_patch` never mutates its input. It copies only the containers on
the paths it writes, so the result shares every untouched subtree (and any
value a ``move`` relocated) with the input, and a patch that writes nothing
returns the input itself: treat states as immutable values, or deep-copy one
before mutating it in place. Values the patch brings in (``add`` and
``replace`` values, ``copy`` results) are deep copies, aliased neither with the
operations nor with the rest of the document.

Documents and values are JSON as msgspec decodes it: ``dict`` with ``str``
keys, ``list``, ``str``, ``int``, ``float``, ``bool`` and ``None``.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["PatchConflict", "apply_patch"]

_OPS = ("add", "remove", "replace", "move", "copy", "test")
_BAD_ESCAPE = re.compile(r"~(?![01])")
_IMMUTABLE = frozenset({str, int, float, bool, type(None)})
# Longer index tokens exceed any list that fits in memory; int() of a huge
# digit string would be slow, or raise ValueError past int_max_str_digits.
_MAX_INDEX_DIGITS = 18

_brief = reprlib.Repr()
_brief.maxlevel = 2
_brief.maxstring = 40
_brief.maxother = 40


class PatchConflict(Exception):
    """A patch that does not apply to the document; ``str()`` is a one-line diagnosis."""


class _Fault(Exception):
    """Why one operation does not apply; :func:`apply_patch` adds which operation it was."""


def apply_patch(document: Any, operations: Sequence[Mapping[str, Any]]) -> Any:
    """Return ``document`` with every operation applied, or raise :class:`PatchConflict`.

    ``document`` is left as it was either way.
    """
    if not isinstance(operations, Sequence):
        raise PatchConflict("the patch is not an array of operations")
    patcher = _Patcher(document)
    for index, operation in enumerate(operations):
        try:
            patcher.apply(operation)
        except _Fault as fault:
            raise PatchConflict(f"{_describe(index, operation)}: {fault}") from None
        except RecursionError:
            # Only a cyclic value or one nested past the interpreter's limit gets here.
            reason = "a value is nested too deeply"
            raise PatchConflict(f"{_describe(index, operation)}: {reason}") from None
    return patcher.root


class _Patcher:
    """The document being patched, with copy-on-write bookkeeping."""

    def __init__(self, document: Any) -> None:
        self.root = document
        # id → container for the copies this patch made: those may be written in
        # place. Holding the containers keeps their ids from being reused.
        self._owned: dict[int, Any] = {}

    def apply(self, operation: object) -> None:
        if not isinstance(operation, Mapping):
            raise _Fault("not an object")
        name = _member(operation, "op")
        if not isinstance(name, str) or name not in _OPS:
            raise _Fault(f"unknown op {name!r}")
        path = _pointer(operation, "path")
        if name == "add":
            self._add(path, _copy(_member(operation, "value")))
        elif name == "remove":
            self._remove(path)
        elif name == "replace":
            self._replace(path, _copy(_member(operation, "value")))
        elif name == "test":
            expected = _member(operation, "value")
            actual = self._get(path)
            if not _equal(actual, expected):
                raise _Fault(f"expected {_sample(expected)}, found {_sample(actual)}")
        else:
            source = _pointer(operation, "from")
            try:
                value = self._get(source)
            except _Fault as fault:
                raise _Fault(f"from: {fault}") from None
            if name == "copy":
                self._add(path, _copy(value))
            elif source != path:
                if source == path[: len(source)]:
                    raise _Fault("cannot move a value into one of its own children")
                self._add(path, self._remove(source))

    def _get(self, tokens: list[str]) -> Any:
        node = self.root
        for depth, token in enumerate(tokens):
            if isinstance(node, dict):
                if token not in node:
                    raise _missing(tokens, depth)
                node = node[token]
            elif isinstance(node, list):
                node = node[_index(node, tokens, depth)]
            else:
                raise _not_container(node, tokens, depth)
        return node

    def _add(self, tokens: list[str], value: Any) -> None:
        if not tokens:
            self.root = value
            return
        parent = self._writable_parent(tokens)
        last = len(tokens) - 1
        if isinstance(parent, dict):
            parent[tokens[last]] = value
        elif isinstance(parent, list):
            parent.insert(_index(parent, tokens, last, adding=True), value)
        else:
            raise _not_container(parent, tokens, last)

    def _remove(self, tokens: list[str]) -> Any:
        if not tokens:
            raise _Fault("the whole document cannot be removed")
        parent = self._writable_parent(tokens)
        last = len(tokens) - 1
        if isinstance(parent, dict):
            if tokens[last] not in parent:
                raise _missing(tokens, last)
            return parent.pop(tokens[last])
        if isinstance(parent, list):
            return parent.pop(_index(parent, tokens, last))
        raise _not_container(parent, tokens, last)

    def _replace(self, tokens: list[str], value: Any) -> None:
        if not tokens:
            self.root = value
            return
        parent = self._writable_parent(tokens)
        last = len(tokens) - 1
        if isinstance(parent, dict):
            if tokens[last] not in parent:
                raise _missing(tokens, last)
            parent[tokens[last]] = value
        elif isinstance(parent, list):
            parent[_index(parent, tokens, last)] = value
        else:
            raise _not_container(parent, tokens, last)

    def _writable_parent(self, tokens: list[str]) -> Any:
        """The container that holds the target, owned by this patch along with its ancestors."""
        node = self.root = self._own(self.root)
        for depth in range(len(tokens) - 1):
            key: str | int
            if isinstance(node, dict):
                key = tokens[depth]
                if key not in node:
                    raise _missing(tokens, depth)
            elif isinstance(node, list):
                key = _index(node, tokens, depth)
            else:
                raise _not_container(node, tokens, depth)
            child = node[key]
            owned = self._own(child)
            if owned is not child:
                node[key] = owned
            node = owned
        return node

    def _own(self, value: Any) -> Any:
        """``value`` if this patch may write it in place, else its shallow copy, which it may."""
        if id(value) in self._owned:
            return value
        if isinstance(value, dict):
            value = dict.copy(value)
        elif isinstance(value, list):
            value = list.copy(value)
        else:
            return value
        self._owned[id(value)] = value
        return value


def _member(operation: Mapping[str, Any], name: str) -> Any:
    try:
        return operation[name]
    except KeyError:
        raise _Fault(f"missing {name!r}") from None


def _pointer(operation: Mapping[str, Any], name: str) -> list[str]:
    """The reference tokens of the JSON Pointer in ``operation[name]``."""
    pointer = _member(operation, name)
    if not isinstance(pointer, str):
        raise _Fault(f"{name!r} is not a string")
    if not pointer:
        return []
    if pointer[0] != "/":
        raise _Fault(f"{name!r} is not a JSON Pointer: it does not start with '/'")
    tokens = pointer[1:].split("/")
    if "~" not in pointer:
        return tokens
    if _BAD_ESCAPE.search(pointer):
        raise _Fault(f"{name!r} is not a JSON Pointer: '~' not followed by 0 or 1")
    # RFC 6901 order: "~01" must become "~1", not "/".
    return [token.replace("~1", "/").replace("~0", "~") for token in tokens]


def _index(array: list[Any], tokens: list[str], depth: int, *, adding: bool = False) -> int:
    """The position that ``tokens[depth]`` names in ``array``: an element, or where ``add`` inserts."""
    token = tokens[depth]
    if token == "-":
        if adding:
            return len(array)
        raise _Fault(f"'-' names no element of the array at {_location(tokens, depth)}")
    if not (token.isdigit() and token.isascii()) or (token[0] == "0" and len(token) > 1):
        raise _Fault(f"{token!r} is not an array index (array at {_location(tokens, depth)})")
    if len(token) <= _MAX_INDEX_DIGITS:
        index = int(token)
        if index < len(array) or (adding and index == len(array)):
            return index
    bound = "at most" if adding else "below"
    raise _Fault(
        f"index {token} is out of range for the array at {_location(tokens, depth)}"
        f" (length {len(array)}; the index must be {bound} that)"
    )


def _missing(tokens: list[str], depth: int) -> _Fault:
    return _Fault(f"no such member {tokens[depth]!r} in {_location(tokens, depth)}")


def _not_container(node: Any, tokens: list[str], depth: int) -> _Fault:
    return _Fault(f"{_location(tokens, depth)} is {json_kind(node)}, not an object or array")


def _location(tokens: list[str], depth: int) -> str:
    """Where ``tokens[:depth]`` points, for a diagnosis."""
    if depth == 0:
        return "the root"
    return _show("".join("/" + pointer_token(t) for t in tokens[:depth]))


def _describe(index: int, operation: object) -> str:
    if not isinstance(operation, Mapping):
        return f"operation {index}"
    name, path, source = operation.get("op"), operation.get("path"), operation.get("from")
    if name not in _OPS or not isinstance(path, str):
        return f"operation {index}"
    if name in ("move", "copy") and isinstance(source, str):
        return f"operation {index} ({name} {_show(source)} to {_show(path)})"
    return f"operation {index} ({name} {_show(path)})"


def _show(pointer: str) -> str:
    # Quoting keeps the diagnosis on one line and makes the root pointer "" visible.
    return pointer if pointer.isprintable() and pointer else repr(pointer)


def _sample(value: Any) -> str:
    """A short, one-line rendering of ``value`` for a diagnosis."""
    try:
        return _brief.repr(value)
    except ValueError:  # an int too long for int_max_str_digits
        return json_kind(value)


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


def _copy(value: Any) -> Any:
    """A deep copy of a JSON value; anything that is not JSON is a fault."""
    if type(value) in _IMMUTABLE:
        return value
    if isinstance(value, dict):
        copied = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _Fault(f"not a JSON value: object key {_sample(key)} is not a string")
            copied[key] = _copy(item)
        return copied
    if isinstance(value, list):
        return [_copy(item) for item in value]
    if isinstance(value, (str, int, float)):
        return value
    raise _Fault(f"not a JSON value: {type(value).__name__}")


def _equal(left: Any, right: Any) -> bool:
    """JSON equality: objects unordered, arrays ordered, 1 == 1.0, but true is not 1."""
    if isinstance(left, dict):
        return (
            isinstance(right, dict)
            and left.keys() == right.keys()
            and all(_equal(item, right[key]) for key, item in left.items())
        )
    if isinstance(left, list):
        return isinstance(right, list) and len(left) == len(right) and all(map(_equal, left, right))
    if isinstance(left, bool) or isinstance(right, bool):
        return left is right
    if isinstance(left, (int, float)):
        return isinstance(right, (int, float)) and left == right
    if isinstance(left, str):
        return isinstance(right, str) and left == right
    return left is None and right is None
