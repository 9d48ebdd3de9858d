"""RFC 6902 JSON Patch over RFC 6901 JSON Pointers, for the state reducer.

AG-UI applies a ``STATE_DELTA`` (and an ``ACTIVITY_DELTA``) atomically
(basic/patterns/snapshots): either every operation applies or the prior value is
kept. A well-formed patch that does not apply is not a protocol violation, so
:func:`patch_in_place` reports it as a :class:`PatchConflict` whose text is the
diagnosis for the caller's warning.

:func:`patch_in_place` writes the document it is given, which the caller owns
(the reducer patches its own copy of a snapshot), and logs how to undo each
write: a patch that fails is undone, in reverse, so the document is as it was.
A ``move`` relocates the value itself. Values the patch brings in (``add`` and
``replace`` values, ``copy`` results) are deep copies, aliased neither with the
operations nor with the rest of the document.

Documents and values are JSON as msgspec decodes it: ``dict`` with ``str``
keys, ``list``, ``str``, ``int``, ``float``, ``bool`` and ``None``.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from agui_msgspec._json import json_kind, pointer_token, pointer_untoken

__all__ = [
    "PatchConflict",
    "PatchRefused",
    "StateBounds",
    "copy_json",
    "measure",
    "patch_in_place",
]

_OPS = ("add", "remove", "replace", "move", "copy", "test")
_BAD_ESCAPE = re.compile(r"~(?![01])")
_IMMUTABLE = frozenset({str, int, float, bool, type(None)})
_ABSENT: Any = object()
_SCALARS = frozenset({float, bool, type(None)})
# Longer index tokens exceed any list that fits in memory; int() of a huge
# digit string would be slow, or raise ValueError past int_max_str_digits.
_MAX_INDEX_DIGITS = 18
# The longest pointer the common-operation path splits without counting its tokens first.
_SHORT_POINTER = 256

_brief = reprlib.Repr()
_brief.maxlevel = 2
_brief.maxstring = 40
_brief.maxother = 40


class PatchConflict(Exception):
    """A patch that does not apply to the document; ``str()`` is a one-line diagnosis."""


class PatchRefused(Exception):
    """A patch that would build a value past a :class:`StateBounds`: a protocol violation,
    not a conflict. ``rule`` is its id, ``operation`` the index of the operation."""

    def __init__(self, rule: str, operation: int, detail: str) -> None:
        self.rule = rule
        self.operation = operation
        self.detail = detail
        super().__init__(detail)


# What one patch may build or walk: this much, plus this many times its own size.
PATCH_WORK_FLOOR = 1024 * 1024
PATCH_WORK_FACTOR = 16


class StateBounds(NamedTuple):
    """What a patched document may grow to: its :func:`measure` size and its nesting depth."""

    max_size: int
    max_depth: int


class _Refusal(Exception):
    """A bound one operation would pass; :func:`patch_in_place` adds which operation."""

    def __init__(self, rule: str, detail: str) -> None:
        self.rule = rule
        super().__init__(detail)


class _Fault(Exception):
    """Why one operation does not apply; :func:`patch_in_place` adds which operation it was."""


def patch_in_place(
    document: Any,
    size: int,
    operations: Sequence[Mapping[str, Any]],
    bounds: StateBounds,
    *,
    object_root: bool = False,
) -> tuple[Any, int]:
    """Apply every operation to ``document`` in place; return the new root and its size.

    ``size`` is the document's :func:`measure` size. Each write checks the bounds before
    it builds anything, and the values one patch may build (copies, the values it
    carries) or walk (what moves deeper) add up to at most :data:`PATCH_WORK_FLOOR` plus
    :data:`PATCH_WORK_FACTOR` times the patch's own size, and to ``bounds.max_size``: a
    patch costs time in proportion to its own size, never to the document's. On a
    :class:`PatchConflict` or :class:`PatchRefused` every write is undone, in reverse, so
    the document is as it was; so it is when ``object_root`` and the patch would leave
    anything but an object.
    """
    if type(operations) is not list and not isinstance(operations, Sequence):
        raise PatchConflict("the patch is not an array of operations")
    patcher = _Patcher(document, bounds, size, operations)
    for index, operation in enumerate(operations):
        try:
            if type(operation) is not dict or not patcher.apply_simple(operation):
                patcher.apply(operation)
        except (_Fault, _Refusal, RecursionError) as failure:
            patcher.undo()
            if isinstance(failure, _Refusal):
                raise PatchRefused(failure.rule, index, str(failure)) from None
            reason = str(failure) if isinstance(failure, _Fault) else "a value is nested too deeply"
            raise PatchConflict(f"{_describe(index, operation)}: {reason}") from None
    if object_root and not isinstance(patcher.root, dict):
        patcher.undo()
        raise PatchConflict(f"the patch would make the document {json_kind(patcher.root)}")
    return patcher.root, patcher.size


def copy_json(value: Any) -> Any:
    """A deep copy of the objects and arrays of a value (one a :func:`measure` within
    bounds has seen); anything else, JSON or not (an application's own input), is shared."""
    if type(value) is dict:
        return {key: copy_json(item) for key, item in value.items()}
    if type(value) is list:
        return [copy_json(item) for item in value]
    return value


def measure(value: Any, bounds: StateBounds, depth: int = 0) -> tuple[int, int]:
    """The size of a JSON value (about its encoded length, at least 8 per value) and its
    nesting depth below ``depth``; the walk stops once either passes ``bounds``, so it
    costs at most ``bounds.max_size`` steps. Iterative: any depth is measured."""
    scalar = _scalar_size(value)
    if scalar:
        return scalar, 0
    size, deepest = 0, depth
    stack = [(value, depth)]
    max_size, max_depth = bounds.max_size, bounds.max_depth
    while stack:
        node, level = stack.pop()
        if type(node) is dict:
            size += 8
            level += 1
            deepest = max(deepest, level)
            for key, item in node.items():
                size += len(key) if type(key) is str else 8
                stack.append((item, level))
        elif type(node) is list:
            size += 8
            level += 1
            deepest = max(deepest, level)
            stack.extend([(item, level) for item in node])
        else:
            size += _scalar_size(node) or 8  # a subclass: not JSON, and refused when copied
        if size > max_size or deepest > max_depth:
            break
    return size, deepest - depth


def bound_passed(value: Any, bounds: StateBounds) -> tuple[int, tuple[str, str] | None]:
    """A value a snapshot brings into state: its :func:`measure` size, and the rule and detail
    of the bound it passes, if it passes one."""
    size, depth = measure(value, bounds)
    if depth > bounds.max_depth:
        return size, ("too-deep", f"nests deeper than {bounds.max_depth}")
    if size > bounds.max_size:
        return size, ("state-too-large", f"larger than {bounds.max_size}")
    return size, None


def depth_reached(operation: Mapping[str, Any], bounds: StateBounds) -> int:
    """How deep an operation reaches into a document whatever document it meets: its
    pointers' tokens and, where it writes a value of its own (add, replace), the value's
    depth below them. Past ``bounds.max_depth``, every document refuses it."""
    deepest = 0
    for name in ("path", "from"):
        pointer = operation.get(name)
        if isinstance(pointer, str):
            deepest = max(deepest, pointer.count("/"))
    if operation.get("op") in ("add", "replace"):
        tokens = operation["path"].count("/")
        deepest = max(deepest, tokens + measure(operation["value"], bounds, tokens)[1])
    return deepest


def _scalar_size(value: Any) -> int:
    """The size of a string, number, boolean or null; 0 for anything else."""
    kind = type(value)
    if kind is str:
        return 8 + len(value)
    if kind is int:
        bits: int = value.bit_length()
        return 8 + bits // 8
    return 8 if kind in _SCALARS else 0


_UNBOUNDED = StateBounds(1 << 62, 1 << 62)


class _Patcher:
    """The document being patched in place, with an undo log and a running size."""

    __slots__ = (
        "_allowance", "_bounds", "_built", "_operations", "_size_at_start", "_undo", "root",
        "size",
    )  # fmt: skip

    def __init__(
        self,
        document: Any,
        bounds: StateBounds,
        size: int,
        operations: Sequence[Mapping[str, Any]],
    ) -> None:
        self.root = document
        self._bounds = bounds
        self.size = size
        self._built = 0  # what this patch has built or walked so far, against the allowance
        self._operations = operations
        self._size_at_start = size
        self._allowance: int | None = None  # measured once the floor is passed
        # (function, *arguments) calls that revert each write, latest last
        self._undo: list[tuple[Any, ...]] = []

    def apply(self, operation: object) -> None:
        if type(operation) is not dict and not isinstance(operation, Mapping):
            raise _Fault("not an object")
        name = _member(operation, "op")
        if not isinstance(name, str) or name not in _OPS:
            raise _Fault(f"unknown op {name!r}")
        path = _pointer(operation, "path", self._bounds.max_depth)
        if name in ("add", "replace"):
            value = _member(operation, "value")
            size = self._check_new(path, value)
            write = self._add if name == "add" else self._replace
            write(path, _copy(value), size)
        elif name == "remove":
            self._remove(path)
        elif name == "test":
            expected = _member(operation, "value")
            actual = self._get(path)
            if not _equal(actual, expected):
                raise _Fault(f"expected {_sample(expected)}, found {_sample(actual)}")
        else:
            source = _pointer(operation, "from", self._bounds.max_depth)
            try:
                value = self._get(source)
            except _Fault as fault:
                raise _Fault(f"from: {fault}") from None
            if name == "copy":
                self._add(path, _copy(value), self._check_new(path, value))
            elif source != path:
                if source == path[: len(source)]:
                    raise _Fault("cannot move a value into one of its own children")
                if len(path) > len(source):  # deeper: what moves must fit below its new place
                    self._check_new(path, value, grows=False)
                self._add(path, self._remove(source, moving=True), None)

    def apply_simple(self, operation: dict[str, Any]) -> bool:
        """Apply the common operation (``add``, ``replace``, ``remove`` or ``test`` of a
        scalar in an object, or ``add`` at the end of an array, by a pointer without escapes
        through objects) in place and return True; False, having changed nothing, for any
        other, a failure included, which :meth:`apply` then applies or diagnoses."""
        name = operation.get("op")
        path = operation.get("path")
        if (
            type(path) is not str
            or not 0 < len(path) <= _SHORT_POINTER
            or path[0] != "/"
            or "~" in path
        ):
            return False
        tokens = path[1:].split("/")
        if len(tokens) > self._bounds.max_depth:
            return False
        key = tokens.pop()
        node = self.root
        for token in tokens:
            if type(node) is not dict or token not in node:
                return False
            node = node[token]
        if name == "test":
            if type(node) is not dict or key not in node:
                return False
            actual, expected = node[key], operation.get("value", _ABSENT)
            if type(actual) is type(expected) and type(actual) in _IMMUTABLE:
                return bool(actual == expected)  # same-type scalars: JSON equality is ==
            return _equal(actual, expected)
        if name == "remove":
            if type(node) is not dict or key not in node:
                return False
            old = node.pop(key)
            self._undo.append((node.__setitem__, key, old))
            self.size -= _scalar_size(old) or measure(old, _UNBOUNDED)[0]
            return True
        value = operation.get("value", _ABSENT)
        if type(value) not in _IMMUTABLE or name not in ("add", "replace"):
            return False
        size = _scalar_size(value)
        # Past these the general path refuses, or accounts the work against the allowance.
        if self._built + size > PATCH_WORK_FLOOR or self.size + size > self._bounds.max_size:
            return False
        if type(node) is list:
            if name != "add" or key != "-":
                return False
            node.append(value)
            self._undo.append((node.pop,))
        elif type(node) is not dict:
            return False
        else:
            old = node.get(key, _ABSENT)
            if old is _ABSENT:
                if name == "replace":
                    return False
                self._undo.append((node.pop, key))
            else:
                self._undo.append((node.__setitem__, key, old))
                self.size -= _scalar_size(old) or measure(old, _UNBOUNDED)[0]
            node[key] = value
        self._built += size
        self.size += size
        return True

    def _check_new(self, path: list[str], value: Any, *, grows: bool = True) -> int:
        """Refuse ``value`` at ``path`` before building it if it would pass a bound; else
        its size."""
        max_size, max_depth = self._bounds
        size, depth = measure(value, self._bounds, len(path))
        self._built += size
        if len(path) + depth > max_depth:
            raise _Refusal("too-deep", f"the value would nest state deeper than {max_depth} levels")
        if self._built > PATCH_WORK_FLOOR and self._built > self._allowance_by_size():
            raise _Refusal(
                "state-too-large",
                f"the patch would build more than {self._allowance} (its allowance, by its size)",
            )
        if grows and self.size + size > max_size:
            raise _Refusal(
                "state-too-large", f"the value would make the document larger than {max_size}"
            )
        return size

    def _allowance_by_size(self) -> int:
        if self._allowance is None:
            own_size = measure(self._operations, self._bounds)[0]
            allowance = PATCH_WORK_FLOOR + PATCH_WORK_FACTOR * own_size
            self._allowance = min(allowance, self._bounds.max_size)
        return self._allowance

    def undo(self) -> None:
        while self._undo:
            function, *arguments = self._undo.pop()
            function(*arguments)
        self.size = self._size_at_start

    def _resize(self, added: int | None, removed: Any = _ABSENT) -> None:
        """Account for a write: ``added`` is the new value's size (None: it moved within the
        document), ``removed`` the value it took the place of."""
        if added is not None:
            self.size += added
        if removed is not _ABSENT:  # each value is removed once after it was built: amortised
            self.size -= measure(removed, _UNBOUNDED)[0]

    def _set_root(self, value: Any, size: int | None) -> None:
        old, self.root = self.root, value
        self._undo.append((setattr, self, "root", old))
        self._resize(size, old)

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

    def _add(self, tokens: list[str], value: Any, size: int | None) -> None:
        if not tokens:
            self._set_root(value, size)
            return
        parent = self._get(tokens[:-1])
        last = len(tokens) - 1
        if isinstance(parent, dict):
            key = tokens[last]
            old = parent.get(key, _ABSENT)
            parent[key] = value
            self._undo.append(
                (parent.pop, key) if old is _ABSENT else (parent.__setitem__, key, old)
            )
            self._resize(size, old)
        elif isinstance(parent, list):
            position = _index(parent, tokens, last, adding=True)
            parent.insert(position, value)
            self._undo.append((parent.pop, position))
            self._resize(size)
        else:
            raise _not_container(parent, tokens, last)

    def _remove(self, tokens: list[str], *, moving: bool = False) -> Any:
        if not tokens:
            raise _Fault("the whole document cannot be removed")
        parent = self._get(tokens[:-1])
        last = len(tokens) - 1
        if isinstance(parent, dict):
            key = tokens[last]
            if key not in parent:
                raise _missing(tokens, last)
            old = parent.pop(key)
            self._undo.append((parent.__setitem__, key, old))
            if not moving:
                self._resize(0, old)
            return old
        if isinstance(parent, list):
            position = _index(parent, tokens, last)
            old = parent.pop(position)
            self._undo.append((parent.insert, position, old))
            if not moving:
                self._resize(0, old)
            return old
        raise _not_container(parent, tokens, last)

    def _replace(self, tokens: list[str], value: Any, size: int) -> None:
        if not tokens:
            self._set_root(value, size)
            return
        parent = self._get(tokens[:-1])
        last = len(tokens) - 1
        key: str | int
        if isinstance(parent, dict):
            key = tokens[last]
            if key not in parent:
                raise _missing(tokens, last)
        elif isinstance(parent, list):
            key = _index(parent, tokens, last)
        else:
            raise _not_container(parent, tokens, last)
        old = parent[key]
        parent[key] = value
        self._undo.append((parent.__setitem__, key, old))
        self._resize(size, old)


def _member(operation: Mapping[str, Any], name: str) -> Any:
    try:
        return operation[name]
    except KeyError:
        raise _Fault(f"missing {name!r}") from None


def _pointer(operation: Mapping[str, Any], name: str, max_depth: int) -> list[str]:
    """The reference tokens of the JSON Pointer in ``operation[name]``; more than
    ``max_depth`` of them is refused before the pointer is split."""
    pointer = _member(operation, name)
    if type(pointer) is not str:
        raise _Fault(f"{name!r} is not a string")
    if not pointer:
        return []
    if pointer[0] != "/":
        raise _Fault(f"{name!r} is not a JSON Pointer: it does not start with '/'")
    if pointer.count("/") > max_depth:
        raise _Refusal("too-deep", f"{name!r} is deeper than state may nest")
    tokens = pointer[1:].split("/")
    if "~" not in pointer:
        return tokens
    if _BAD_ESCAPE.search(pointer):
        raise _Fault(f"{name!r} is not a JSON Pointer: '~' not followed by 0 or 1")
    return [pointer_untoken(token) for token in tokens]


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
