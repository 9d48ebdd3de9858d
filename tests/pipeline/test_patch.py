"""RFC 6902 JSON Patch application: the public test suite, the reducer's contract, a reference model.

Every test patches the way the reducer does (:func:`patch_state`): in place, under the
default state bounds. The reducer's contract (spec basic/patterns/snapshots): a delta applies
atomically, a patch that does not apply raises ``PatchConflict`` and nothing else, and either
way a failed patch leaves the document as it was (its writes undone).
Its bounds (the state's size and depth, the copies a short patch may make) are measured
structurally: tracemalloc peaks, never the clock.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from measure import MiB, peak_bytes
from payloads import in_run, wire_event

from agui_msgspec import Consumer, consume
from agui_msgspec._pipeline.patch import (
    PatchConflict,
    PatchRefused,
    copy_json,
    measure,
    patch_in_place,
)
from agui_msgspec._pipeline.reduce import DEFAULT_STATE_BOUNDS

SUITE_ROOT = Path(__file__).resolve().parents[3] / "shared" / "json-patch-tests"
SUITE_FILES = ("tests.json", "spec_tests.json")
Patch = list[dict[str, Any]]

# The structural checks the pipeline makes before a patch reaches the reducer.
POINTER = re.compile(r"(/([^/~]|~[01])*)*")
REQUIRED = {
    "add": ("path", "value"),
    "remove": ("path",),
    "replace": ("path", "value"),
    "move": ("from", "path"),
    "copy": ("from", "path"),
    "test": ("path", "value"),
}


def is_well_formed(operation: object) -> bool:
    if not isinstance(operation, dict):
        return False
    name = operation.get("op")
    required = REQUIRED.get(name) if isinstance(name, str) else None
    if required is None or any(member not in operation for member in required):
        return False
    pointers = [operation[member] for member in ("path", "from") if member in required]
    return all(isinstance(p, str) and POINTER.fullmatch(p) is not None for p in pointers)


def canonical(value: Any) -> str:
    """Exact JSON identity: key order ignored, but true != 1 and 1 != 1.0."""
    return json.dumps(value, sort_keys=True)


def patch_state(document: Any, patch: Any) -> Any:
    """``patch`` applied to ``document`` in place, as the reducer applies a ``STATE_DELTA`` to
    the state it owns (the default bounds, the size measured as a snapshot's); the new root."""
    size = measure(document, DEFAULT_STATE_BOUNDS)[0]
    return patch_in_place(document, size, patch, DEFAULT_STATE_BOUNDS)[0]


# --- the public RFC 6902 test suite ----------------------------------------------------


def suite_records() -> list[Any]:
    if not SUITE_ROOT.is_dir():
        reason = f"json-patch-tests suite not found at {SUITE_ROOT}"
        return [pytest.param({}, id="suite-absent", marks=pytest.mark.skip(reason=reason))]
    params = []
    for name in SUITE_FILES:
        records = json.loads((SUITE_ROOT / name).read_text(encoding="utf-8"))
        for number, record in enumerate(records):
            malformed = not all(map(is_well_formed, record["patch"]))
            record_id = f"{name}:{number}{':malformed' if malformed else ''}"
            marks = []
            if record.get("disabled"):
                why = record.get("comment") or record.get("error")
                marks.append(pytest.mark.skip(reason=f"disabled upstream ({why})"))
            params.append(pytest.param(record, id=record_id, marks=marks))
    return params


@pytest.mark.parametrize("record", suite_records())
def test_suite(record: dict[str, Any]) -> None:
    document, patch = copy_json(record["doc"]), record["patch"]  # the reducer's own copy
    before = canonical(document)
    if "error" in record:
        # Records with malformed operations (id suffix ":malformed") are caught by the
        # pipeline's validation first; the patcher must still refuse them with PatchConflict.
        with pytest.raises(PatchConflict):
            patch_state(document, patch)
        assert canonical(document) == before
    else:
        assert all(map(is_well_formed, patch)), "validation would reject a valid patch"
        result = patch_state(document, patch)
        if "expected" in record:
            assert canonical(result) == canonical(record["expected"])


# --- the reducer's contract ----------------------------------------------------------------


def test_a_failing_operation_undoes_the_earlier_writes() -> None:
    document = {"a": {"x": 1}, "list": [1, 2]}
    before = canonical(document)
    patch: Patch = [
        {"op": "add", "path": "/a/y", "value": 2},
        {"op": "remove", "path": "/list/0"},
        {"op": "replace", "path": "/a/missing/deeper", "value": 3},
    ]
    with pytest.raises(PatchConflict) as caught:
        patch_state(document, patch)
    assert canonical(document) == before
    assert (
        str(caught.value)
        == "operation 2 (replace /a/missing/deeper): no such member 'missing' in /a"
    )


def test_every_kind_of_write_is_undone_in_reverse() -> None:
    document = {"a": {"x": 1, "k": "v"}, "list": [1, 2], "n": None}
    before = canonical(document)
    patch: Patch = [
        {"op": "add", "path": "/a/y", "value": 2},
        {"op": "replace", "path": "/a/x", "value": [3]},
        {"op": "remove", "path": "/a/k"},
        {"op": "add", "path": "/list/0", "value": {"new": True}},
        {"op": "remove", "path": "/list/1"},
        {"op": "move", "from": "/a", "path": "/list/-"},
        {"op": "copy", "from": "/list", "path": "/n"},
        {"op": "replace", "path": "", "value": {"n": [0]}},
        {"op": "test", "path": "/n/0", "value": "no"},
    ]
    with pytest.raises(PatchConflict, match=r"^operation 8 \(test /n/0\): expected 'no'"):
        patch_state(document, patch)
    assert canonical(document) == before


def test_a_failed_test_operation_is_a_conflict_with_a_diagnosis() -> None:
    document = {"a": {"b": "found"}}
    patch: Patch = [
        {"op": "add", "path": "/n", "value": 1},
        {"op": "test", "path": "/a/b", "value": "x"},
    ]
    with pytest.raises(
        PatchConflict, match=r"^operation 1 \(test /a/b\): expected 'x', found 'found'$"
    ):
        patch_state(document, patch)
    assert document == {"a": {"b": "found"}}


@pytest.mark.parametrize(
    ("document", "operation", "diagnosis"),
    [
        ({"a": {}}, {"op": "replace", "path": "/a/b", "value": 1}, "no such member 'b' in /a"),
        (
            {"a": 1},
            {"op": "add", "path": "/a/b", "value": 1},
            "/a is a number, not an object or array",
        ),
        (
            [1],
            {"op": "add", "path": "/3", "value": 1},
            "index 3 is out of range for the array at the root",
        ),
        ([1], {"op": "remove", "path": "/-"}, "'-' names no element of the array at the root"),
        ([1], {"op": "test", "path": "/01", "value": 1}, "'01' is not an array index"),
        ({"a": {}}, {"op": "move", "from": "/a", "path": "/a/b"}, "into one of its own children"),
        ({}, {"op": "copy", "from": "/x", "path": "/y"}, "from: no such member 'x' in the root"),
        ({}, {"op": "remove", "path": ""}, "the whole document cannot be removed"),
    ],
)
def test_diagnoses(document: Any, operation: dict[str, Any], diagnosis: str) -> None:
    with pytest.raises(PatchConflict) as caught:
        patch_state(document, [operation])
    assert str(caught.value).startswith("operation 0 (")
    assert diagnosis in str(caught.value)


def test_the_diagnosis_stays_on_one_line() -> None:
    with pytest.raises(PatchConflict) as caught:
        patch_state({}, [{"op": "remove", "path": "/line\nbreak"}])
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith("operation 0 (remove '/line\\nbreak'): ")


def test_the_result_does_not_alias_the_operations() -> None:
    value = {"deep": [1, {"x": 2}]}
    operation = {"op": "add", "path": "/v", "value": value}
    result = patch_state({}, [operation, {"op": "add", "path": "/w", "value": value}])
    result["v"]["deep"][1]["x"] = "changed"
    result["v"]["deep"].append(3)
    assert value == {"deep": [1, {"x": 2}]}
    assert result["w"] == {"deep": [1, {"x": 2}]}


def test_copy_does_not_alias_its_source() -> None:
    document = {"a": {"b": [1]}}
    result = patch_state(document, [{"op": "copy", "from": "/a", "path": "/c"}])
    result["c"]["b"].append(2)
    assert result["a"] == {"b": [1]}


def test_the_patch_writes_the_document_itself() -> None:
    document = {"a": {"x": 1}, "list": [1, 2], "big": {"k": list(range(100))}}
    a, items, big = document["a"], document["list"], document["big"]
    patch: Patch = [
        {"op": "replace", "path": "/a/x", "value": 2},
        {"op": "add", "path": "/list/-", "value": 3},
    ]
    result = patch_state(document, patch)
    assert result is document
    assert result["a"] is a
    assert a == {"x": 2}
    assert result["list"] is items
    assert items == [1, 2, 3]
    assert result["big"] is big


def test_consecutive_patches_write_one_document() -> None:
    state: Any = {"a": {"list": [0, 1]}, "b": {"c": {"d": 1}}}
    moving = state["b"]["c"]
    state = patch_state(
        state,
        [
            {"op": "add", "path": "/a/list/0", "value": "x"},
            {"op": "add", "path": "/a/list/-", "value": "y"},
            {"op": "move", "from": "/b/c", "path": "/a/moved"},
            {"op": "add", "path": "/a/moved/e", "value": 2},
            {"op": "remove", "path": "/a/moved/d"},
        ],
    )
    assert state == {"a": {"list": ["x", 0, 1, "y"], "moved": {"e": 2}}, "b": {}}
    assert state["a"]["moved"] is moving  # a move relocates the value, it does not copy it
    state = patch_state(state, [{"op": "remove", "path": "/a/list/0"}])
    assert state == {"a": {"list": [0, 1, "y"], "moved": {"e": 2}}, "b": {}}


def test_a_patch_that_writes_nothing_returns_the_input() -> None:
    document = {"a": 1}
    assert patch_state(document, []) is document
    assert patch_state(document, [{"op": "test", "path": "/a", "value": 1}]) is document


@pytest.mark.parametrize("document", [[1, [2]], "text", 0, None, True, 1.5])
def test_any_json_value_is_a_document(document: Any) -> None:
    patch: Patch = [
        {"op": "test", "path": "", "value": copy.deepcopy(document)},
        {"op": "replace", "path": "", "value": {"now": "object"}},
    ]
    assert patch_state(document, patch) == {"now": "object"}


def test_a_list_root() -> None:
    document = [1, [2, 3]]
    patch: Patch = [
        {"op": "add", "path": "/1/-", "value": 4},
        {"op": "add", "path": "/0", "value": 0},
        {"op": "move", "from": "/0", "path": "/-"},
        {"op": "copy", "from": "/1", "path": "/1/0"},
    ]
    result = patch_state(document, patch)
    assert result == [1, [[2, 3, 4], 2, 3, 4], 0]
    assert result is document


@pytest.mark.parametrize("document", ["text", 0, None, False])
def test_a_scalar_root_has_no_children(document: Any) -> None:
    with pytest.raises(
        PatchConflict, match=r"^operation 0 \(add /a\): the root is .*, not an object or array$"
    ):
        patch_state(document, [{"op": "add", "path": "/a", "value": 1}])
    assert patch_state(document, [{"op": "add", "path": "", "value": [1]}]) == [1]


@pytest.mark.parametrize(
    ("actual", "expected", "equal"),
    [
        (1, 1.0, True),
        ({"a": 1, "b": [1, 2]}, {"b": [1, 2.0], "a": 1}, True),
        (True, 1, False),
        (1, True, False),
        (0, False, False),
        (None, False, False),
        ([1, 2], [2, 1], False),
        ({"a": None}, {}, False),
        ({"a": [True]}, {"a": [1]}, False),
        ("10", 10, False),
        ([], {}, False),
    ],
)
def test_the_test_operation_uses_json_equality(actual: Any, expected: Any, equal: bool) -> None:
    patch: Patch = [{"op": "test", "path": "/v", "value": expected}]
    if equal:
        patch_state({"v": actual}, patch)
    else:
        with pytest.raises(PatchConflict, match="expected"):
            patch_state({"v": actual}, patch)


@pytest.mark.parametrize(
    ("path", "result"),
    [
        ("/0", ["new", "a", "b"]),
        ("/2", ["a", "b", "new"]),
        ("/-", ["a", "b", "new"]),
    ],
)
def test_array_add_positions(path: str, result: list[str]) -> None:
    assert patch_state(["a", "b"], [{"op": "add", "path": path, "value": "new"}]) == result


@pytest.mark.parametrize("token", ["3", "01", "-1", "1e0", "²", "", " 1", "9" * 5000])
def test_bad_array_indexes_conflict(token: str) -> None:
    with pytest.raises(PatchConflict):
        patch_state(["a", "b"], [{"op": "add", "path": f"/{token}", "value": 1}])


def test_dash_is_a_member_name_in_an_object() -> None:
    assert patch_state({"-": 1}, [{"op": "replace", "path": "/-", "value": 2}]) == {"-": 2}


def test_escaped_tokens() -> None:
    document = {"a/b": {"~": 1}, "~1": 2}
    patch: Patch = [
        {"op": "move", "from": "/a~1b/~0", "path": "/~01"},
        {"op": "add", "path": "/~0~1", "value": 3},
    ]
    assert patch_state(document, patch) == {"a/b": {}, "~1": 1, "~/": 3}


def test_move_to_the_same_location_requires_it_to_exist() -> None:
    assert patch_state({"a": 1}, [{"op": "move", "from": "/a", "path": "/a"}]) == {"a": 1}
    assert patch_state([1], [{"op": "move", "from": "", "path": ""}]) == [1]
    with pytest.raises(PatchConflict, match="from: no such member"):
        patch_state({}, [{"op": "move", "from": "/a", "path": "/a"}])


def test_move_to_a_sibling_with_a_shared_prefix_is_allowed() -> None:
    # "/a" is a string prefix of "/ab", not a pointer prefix.
    assert patch_state({"a": 1}, [{"op": "move", "from": "/a", "path": "/ab"}]) == {"ab": 1}


def test_copy_into_its_own_child() -> None:
    result = patch_state({"a": {"b": 1}}, [{"op": "copy", "from": "/a", "path": "/a/c"}])
    assert result == {"a": {"b": 1, "c": {"b": 1}}}


def test_extra_members_are_ignored() -> None:
    patch: Patch = [{"op": "remove", "path": "/a", "value": "unused", "from": "/nowhere", "x": [1]}]
    assert patch_state({"a": 1}, patch) == {}


def _cyclic() -> list[Any]:
    value: list[Any] = []
    value.append(value)
    return value


def _deep(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "patch",
    [
        None,
        {"op": "add", "path": "/a", "value": 1},
        [None],
        ["add"],
        [{"path": "/a", "value": 1}],
        [{"op": ["add"], "path": "/a", "value": 1}],
        [{"op": "add", "path": 1, "value": 1}],
        [{"op": "add", "path": "/a~2", "value": 1}],
        [{"op": "add", "path": "/a", "value": {1, 2}}],
        [{"op": "add", "path": "/a", "value": {1: "non-string key"}}],
        [{"op": "move", "path": "/a"}],
        [{"op": "copy", "from": None, "path": "/a"}],
    ],
)
def test_unexpected_shapes_are_conflicts(patch: Any) -> None:
    document = {"a": [1]}
    with pytest.raises(PatchConflict):
        patch_state(document, patch)
    assert document == {"a": [1]}


@pytest.mark.parametrize("value", [_cyclic(), _deep(100_000)], ids=["cyclic", "deep"])
def test_a_value_past_the_depth_bound_is_refused(value: Any) -> None:
    # Measured before anything is built or copied: a protocol violation, not a conflict.
    document = {"a": [1]}
    patch: Patch = [
        {"op": "add", "path": "/b", "value": 1},
        {"op": "add", "path": "/a", "value": value},
    ]
    with pytest.raises(PatchRefused) as caught:
        patch_state(document, patch)
    assert (caught.value.rule, caught.value.operation) == ("too-deep", 1)
    assert document == {"a": [1]}


# --- property test against a reference model ----------------------------------------


class ReferenceConflict(Exception):
    pass


def reference_apply(document: Any, operations: Patch) -> Any:
    """RFC 6902 the plain way: deep-copy the document once, then patch the copy in place."""
    document = copy.deepcopy(document)
    for operation in operations:
        document = reference_operation(document, operation)
    return document


def reference_operation(document: Any, operation: dict[str, Any]) -> Any:
    name, path = operation["op"], reference_tokens(operation["path"])
    if name == "add":
        return reference_add(document, path, copy.deepcopy(operation["value"]))
    if name == "remove":
        return reference_remove(document, path)
    if name == "replace":
        # RFC 6902 4.3: a remove followed by an add, except that the root always exists.
        if path:
            document = reference_remove(document, path)
        return reference_add(document, path, copy.deepcopy(operation["value"]))
    if name == "test":
        if normalized(reference_get(document, path)) != normalized(operation["value"]):
            raise ReferenceConflict
        return document
    source = reference_tokens(operation["from"])
    value = reference_get(document, source)
    if name == "copy":
        return reference_add(document, path, copy.deepcopy(value))
    if source == path:
        return document
    if path[: len(source)] == source:
        raise ReferenceConflict
    return reference_add(reference_remove(document, source), path, value)


def reference_tokens(pointer: str) -> list[str]:
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def reference_index(token: str, size: int, *, adding: bool) -> int:
    if adding and token == "-":
        return size
    if not re.fullmatch(r"0|[1-9][0-9]*", token) or int(token) > size - (not adding):
        raise ReferenceConflict
    return int(token)


def reference_get(document: Any, tokens: list[str]) -> Any:
    for token in tokens:
        if isinstance(document, dict) and token in document:
            document = document[token]
        elif isinstance(document, list):
            document = document[reference_index(token, len(document), adding=False)]
        else:
            raise ReferenceConflict
    return document


def reference_add(document: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    parent = reference_get(document, tokens[:-1])
    if isinstance(parent, dict):
        parent[tokens[-1]] = value
    elif isinstance(parent, list):
        parent.insert(reference_index(tokens[-1], len(parent), adding=True), value)
    else:
        raise ReferenceConflict
    return document


def reference_remove(document: Any, tokens: list[str]) -> Any:
    if not tokens:
        raise ReferenceConflict
    parent = reference_get(document, tokens[:-1])
    if isinstance(parent, dict) and tokens[-1] in parent:
        del parent[tokens[-1]]
    elif isinstance(parent, list):
        del parent[reference_index(tokens[-1], len(parent), adding=False)]
    else:
        raise ReferenceConflict
    return document


def normalized(value: Any) -> Any:
    """A form where Python equality is JSON equality: numbers compare by value, booleans apart."""
    if isinstance(value, dict):
        return ("object", {key: normalized(item) for key, item in value.items()})
    if isinstance(value, list):
        return ("array", [normalized(item) for item in value])
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    return ("other", value)


def locations(value: Any, prefix: str = "") -> list[str]:
    """Every pointer that resolves in ``value``."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += locations(item, f"{prefix}/{key.replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += locations(item, f"{prefix}/{index}")
    return found


def containers(value: Any) -> list[int]:
    if isinstance(value, dict):
        return [id(value), *(i for item in value.values() for i in containers(item))]
    if isinstance(value, list):
        return [id(value), *(i for item in value for i in containers(item))]
    return []


KEYS = st.sampled_from(["a", "b", "0", "1", "-", "", "~", "a/b", "~1"])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-2, 2)
    | st.sampled_from([0.0, 1.0, 0.5])
    | st.text(alphabet="ab", max_size=2)
)
JSON = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(KEYS, children, max_size=3),
    max_leaves=12,
)
EXTRA_TOKENS = st.lists(st.sampled_from(["a", "0", "1", "3", "-", "01", "~0", "a~1b"]), max_size=2)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_matches_the_reference_model(data: st.DataObject) -> None:
    document = data.draw(JSON, label="document")
    pointers = st.builds(
        lambda base, extra: base + "".join("/" + token for token in extra),
        st.sampled_from(locations(document)),
        EXTRA_TOKENS,
    )
    values = JSON | st.sampled_from(locations(document)).map(
        lambda pointer: copy.deepcopy(reference_get(document, reference_tokens(pointer)))
    )
    operation = st.fixed_dictionaries(
        {
            "op": st.sampled_from(list(REQUIRED)),
            "path": pointers,
            "from": pointers,
            "value": values,
        }
    )
    patch = data.draw(st.lists(operation, min_size=1, max_size=4), label="patch")
    before, patch_before = canonical(document), canonical(patch)

    try:
        expected = canonical(reference_apply(document, patch))
    except ReferenceConflict:
        expected = "conflict"
    try:
        result = patch_state(document, patch)
    except PatchConflict:
        actual = "conflict"
        assert canonical(document) == before, "a failed patch left a write behind"
    else:
        actual = canonical(result)
        inserted = {i for operation in patch for i in containers(operation["value"])}
        assert inserted.isdisjoint(containers(result)), "the result aliases an operation"
        assert len(set(containers(result))) == len(containers(result)), "the result aliases itself"

    assert actual == expected
    assert canonical(patch) == patch_before


# --- JSON Patch amplification and depth: bounded work and memory (tracemalloc peaks) -------------


START = wire_event(type="RUN_STARTED", threadId="t", runId="r")


def doubling(count: int, key: str = "k") -> list[dict[str, Any]]:
    """Each operation copies the whole document into itself: 2**count values from a short patch."""
    return [{"op": "copy", "from": "", "path": f"/{key}{n}"} for n in range(count)]


@pytest.mark.parametrize("kind", ["state", "activity"])
def test_a_doubling_patch_is_refused_before_it_builds_the_state(kind: str) -> None:
    if kind == "state":
        body = in_run(
            wire_event(type="STATE_SNAPSHOT", snapshot={"seed": "x" * 64}),
            wire_event(type="STATE_DELTA", delta=doubling(30)),
        )
        field = "/delta"
    else:
        body = in_run(
            wire_event(
                type="ACTIVITY_SNAPSHOT", messageId="a", activityType="plan", content={"s": 1}
            ),
            wire_event(
                type="ACTIVITY_DELTA", messageId="a", activityType="plan", patch=doubling(30)
            ),
        )
        field = "/patch"
    result, peak = peak_bytes(lambda: consume(body, max_state_size=256 * 1024))
    assert result.violation is not None
    assert result.violation.rule == "state-too-large"
    assert result.violation.index == 2
    assert result.violation.path.startswith(field + "/")
    assert peak < 8 * MiB  # 30 doublings would be 2**30 values


def test_with_the_defaults_a_small_patch_builds_little() -> None:
    body = in_run(wire_event(type="STATE_DELTA", delta=doubling(40)))
    result, peak = peak_bytes(lambda: consume(body))
    assert result.violation is not None
    assert result.violation.rule == "state-too-large"
    # A 1.7 KB patch may build 1 MiB + 16 times its size as JSON; as Python objects that peaks
    # at 15.7 MiB on 3.11-3.13 and 18.8 MiB on 3.10, whose objects are larger.
    assert peak < 20 * MiB


def test_a_patch_ending_in_a_failing_test_does_bounded_work_and_keeps_the_state() -> None:
    delta = [*doubling(30), {"op": "test", "path": "/k0", "value": 0}]
    body = in_run(
        wire_event(type="STATE_SNAPSHOT", snapshot={"a": 1}),
        wire_event(type="STATE_DELTA", delta=delta),
        wire_event(type="STATE_DELTA", delta=[{"op": "add", "path": "/b", "value": 2}]),
    )
    result, peak = peak_bytes(lambda: consume(body, max_state_size=256 * 1024))
    # The copies pass the bound before the test is reached: refused, not 2**30 values built.
    assert result.violation is not None
    assert result.violation.rule == "state-too-large"
    assert peak < 8 * MiB


def test_a_failing_patch_within_bounds_leaves_the_state_as_it_was() -> None:
    delta = [
        *doubling(5),
        {"op": "remove", "path": "/seed"},
        {"op": "test", "path": "/k0", "value": 0},
    ]
    body = in_run(
        wire_event(type="STATE_SNAPSHOT", snapshot={"seed": [1, 2]}),
        wire_event(type="STATE_DELTA", delta=delta),
        wire_event(type="STATE_DELTA", delta=[{"op": "add", "path": "/b", "value": 2}]),
    )
    result = consume(body)
    assert result.violation is None
    assert result.state == {"seed": [1, 2], "b": 2}
    assert any("does not apply" in warning for warning in result.warnings)


def test_a_failing_patch_undoes_every_kind_of_scalar_write() -> None:
    start = {"a": {"n": 1, "s": "x", "list": [1], "gone": True}}
    delta = [
        {"op": "replace", "path": "/a/n", "value": 2},
        {"op": "add", "path": "/a/new", "value": "y"},
        {"op": "add", "path": "/a/s", "value": "z"},  # add over an existing member
        {"op": "remove", "path": "/a/gone"},
        {"op": "add", "path": "/a/list/-", "value": 2},
        {"op": "test", "path": "/a/n", "value": 2},
        {"op": "test", "path": "/a/list/1", "value": 3},  # fails: every write above is undone
    ]
    consumer = Consumer()
    delivered = consumer.feed_many([START, wire_event(type="STATE_SNAPSHOT", snapshot=start)])
    consumer.feed(wire_event(type="STATE_DELTA", delta=delta))
    assert consumer.violation is None
    assert consumer.state == start
    consumer.feed(wire_event(type="STATE_DELTA", delta=delta[:-1]))
    assert consumer.state == {"a": {"n": 2, "s": "z", "list": [1, 2], "new": "y"}}
    assert delivered[1].snapshot == start


def test_scalar_writes_keep_the_state_size_exact() -> None:
    """Writes that replace or remove what they added do not grow the accounted size; a
    write that would pass the bound is refused."""
    note = "x" * 200
    churn = [
        wire_event(type="STATE_DELTA", delta=[{"op": "add", "path": "/note", "value": note}]),
        wire_event(type="STATE_DELTA", delta=[{"op": "replace", "path": "/note", "value": note}]),
        wire_event(type="STATE_DELTA", delta=[{"op": "remove", "path": "/note"}]),
    ]
    body = in_run(wire_event(type="STATE_SNAPSHOT", snapshot={"n": 0}), *churn * 200)
    assert consume(body, max_state_size=1024).violation is None
    too_big = wire_event(
        type="STATE_DELTA", delta=[{"op": "add", "path": "/big", "value": "x" * 2048}]
    )
    result = consume(
        in_run(wire_event(type="STATE_SNAPSHOT", snapshot={"n": 0}), too_big), max_state_size=1024
    )
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("state-too-large", 2)


def test_a_copy_and_remove_cycle_is_bounded_by_the_work_a_patch_may_do() -> None:
    cycle = [{"op": "copy", "from": "/big", "path": "/c"}, {"op": "remove", "path": "/c"}]
    body = in_run(
        wire_event(type="STATE_SNAPSHOT", snapshot={"big": ["x" * 100] * 2000}),
        wire_event(type="STATE_DELTA", delta=cycle * 1000),
    )
    result = consume(body, max_state_size=1 * MiB)
    assert result.violation is not None
    assert result.violation.rule == "state-too-large"


def nesting(levels: int) -> list[dict[str, Any]]:
    """Each operation adds an object one level below the last: ``levels`` levels in all."""
    return [{"op": "add", "path": "/n" * (level + 1), "value": {}} for level in range(levels)]


def test_a_patch_may_not_nest_state_deeper_than_the_bound() -> None:
    body = in_run(wire_event(type="STATE_DELTA", delta=nesting(1300)))
    result = consume(body)
    assert result.violation is not None
    assert result.violation.rule == "too-deep"
    assert result.violation.index == 1
    assert result.violation.path == "/delta/511"
    # What was kept can still be encoded and sent as the next run's input.
    msgspec.json.encode(result.state)


def test_a_copy_or_move_deeper_is_refused_as_too_deep() -> None:
    copy_down = [*nesting(300), {"op": "copy", "from": "/n", "path": "/n" * 300 + "/m"}]
    result = consume(in_run(wire_event(type="STATE_DELTA", delta=copy_down)))
    assert result.violation is not None
    assert result.violation.rule == "too-deep"
    move_down = [
        *nesting(300),
        {"op": "add", "path": "/o", "value": {}},
        {"op": "move", "from": "/n", "path": "/o/n"},
    ]
    result = consume(in_run(wire_event(type="STATE_DELTA", delta=move_down)), max_state_depth=300)
    assert result.violation is not None
    assert result.violation.rule == "too-deep"


def test_activity_content_is_bounded_as_state_is_when_its_snapshot_comes() -> None:
    def snapshot(content: dict[str, Any]) -> Any:
        activity = {"messageId": "a", "activityType": "plan", "content": content}
        return in_run(wire_event(type="ACTIVITY_SNAPSHOT", **activity))

    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(40):
        inner["n"] = inner = {}
    for body, options, rule in [
        (snapshot(deep), {"max_state_depth": 30}, "too-deep"),
        (snapshot({"items": ["x" * 100] * 2000}), {"max_state_size": 100_000}, "state-too-large"),
    ]:
        result = consume(body, **options)
        assert result.violation is not None
        assert (result.violation.rule, result.violation.index) == (rule, 1)
        assert result.violation.path == "/content"
    within = consume(snapshot(deep), max_state_depth=41)
    assert within.violation is None


def test_state_up_to_the_bound_passes() -> None:
    result = consume(in_run(wire_event(type="STATE_DELTA", delta=nesting(511))))
    assert result.violation is None
    msgspec.json.encode(result.state)
