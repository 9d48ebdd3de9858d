"""The table of disagreements between agui_msgspec and @ag-ui/client 1.0.0.

Each row is a category: a classifier (a predicate over the stream and both results),
the fields of the comparison it accounts for, the spec sentence that decides it
(docs/spec/1.1 in ag-ui-protocol/ag-ui, page named), and which side the spec favours.
A disagreement is accounted for when the rows whose classifier holds together cover
every field on which the two sides differ; anything else fails the run.

Rows that say "spec favours the reference client" are bugs in our consumer. One with
`expected_fix` set is a known bug already routed (it is reported, and fails the run only
under `--strict`); any other such row fails the run. Once the fix lands, `expected_fix`
is removed and the row must stay empty.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compare import FIELDS, View, canonical
from corpus import Case

FAVOURS_US = "spec favours us"
FAVOURS_REFERENCE = "spec favours the reference client"
SILENT = "spec silent"

ALL = frozenset(FIELDS)


@dataclass
class Disagreement:
    case: Case
    ours: View
    ref: View
    fields: list[str]

    def event(self, index: int | None) -> Any:
        if index is None or not 0 <= index < len(self.case.stream):
            return None
        return self.case.stream[index]

    def first_rejection(self) -> tuple[str, int | None] | None:
        """Which side rejected first ("ours", "ref" or "both") and at which event.

        A rejection at the end of the stream (index None) comes after every event.
        """
        end = len(self.case.stream)

        def at(view: View) -> int | None:
            if view.verdict != "rejected":
                return None
            return end if view.index is None else view.index

        mine, theirs = at(self.ours), at(self.ref)
        if mine is None and theirs is None:
            return None
        if theirs is None or (mine is not None and mine < theirs):
            return "ours", self.ours.index
        if mine is None or theirs < mine:
            return "ref", self.ref.index
        return "both", self.ours.index

    def summary(self) -> dict[str, Any]:
        def side(v: View) -> dict[str, Any]:
            return {
                "verdict": v.verdict,
                "index": v.index,
                "detail": v.detail[:300],
                "types": v.types,
                "messages": v.messages,
                "state": v.state,
                "runs": v.runs,
                "warnings": v.warnings[:6],
            }

        return {
            "case": self.case.id,
            "origin": self.case.origin,
            "mutations": self.case.mutations,
            "fields": self.fields,
            "stream": self.case.stream,
            "input": self.case.input,
            "ours": side(self.ours),
            "reference": side(self.ref),
        }

    def describe(self) -> str:
        """The stream one event a line, then each side's result: enough to replay it by hand."""
        lines = [self.case.describe(), f"  differs in: {', '.join(self.fields)}"]
        lines += [
            f"  {i:3} {json.dumps(e, ensure_ascii=False)[:200]}"
            for i, e in enumerate(self.case.stream)
        ]
        for name, view in (("ours", self.ours), ("reference", self.ref)):
            detail = " ".join(view.detail.split())[:200]
            lines.append(f"  {name}: {view.verdict} at {view.index} {detail}")
            lines.append(f"    types    {view.types}")
            lines.append(f"    messages {json.dumps(view.messages, ensure_ascii=False)[:400]}")
            lines.append(f"    state    {json.dumps(view.state, ensure_ascii=False)[:200]}")
            lines.append(f"    runs     {view.runs}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Category:
    name: str
    favours: str
    page: str  # under docs/spec/1.1
    sentence: str  # quoted from that page (or the registry it points to)
    explains: frozenset[str]
    test: Callable[[Disagreement], bool]
    expected_fix: str = ""  # for rows favouring the reference client: what empties them


# --- helpers for the classifiers --------------------------------------------------------


def _zod_issues(view: View) -> list[dict[str, Any]]:
    """The issues of a zod validation error, as the client reports them."""
    if not view.detail.startswith("ZodError: "):
        return []
    try:
        issues = json.loads(view.detail[len("ZodError: ") :])
    except ValueError:
        return []
    return [i for i in issues if isinstance(i, dict)] if isinstance(issues, list) else []


def _at(value: Any, path: list[Any]) -> Any:
    for step in path:
        if (isinstance(value, dict) and isinstance(step, str) and step in value) or (
            isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value)
        ):
            value = value[step]
        else:
            return _ABSENT
    return value


_ABSENT = object()


def _ref_first(d: Disagreement) -> int | None:
    """The event the client rejected, when it rejected first (not later than ours)."""
    first = d.first_rejection()
    if first is None or first[0] == "ours":
        return None
    return d.ref.index


def _ours_first(d: Disagreement) -> int | None:
    first = d.first_rejection()
    if first is None or first[0] == "ref":
        return None
    return d.ours.index


def _ref_alone_first(d: Disagreement) -> int | None:
    """The event the client rejected, when ours accepted it (rejecting later, or never)."""
    first = d.first_rejection()
    return d.ref.index if first is not None and first[0] == "ref" else None


def _ours_alone_first(d: Disagreement) -> int | None:
    """The event ours rejected, when the client accepted it (rejecting later, or never)."""
    first = d.first_rejection()
    return d.ours.index if first is not None and first[0] == "ours" else None


def _walk(value: Any) -> Any:
    yield value
    if isinstance(value, dict):
        for member in value.values():
            yield from _walk(member)
    elif isinstance(value, list):
        for member in value:
            yield from _walk(member)


# --- the classifiers --------------------------------------------------------------------


def truncated_read_as_success(d: Disagreement) -> bool:
    return d.ours.detail == "truncated" and d.ours.index is None and d.ref.verdict == "accepted"


def unknown_closed_value_fatal(d: Disagreement) -> bool:
    """The client rejected a string it does not know in a closed set, which ours stripped."""
    index = _ref_first(d)
    event = d.event(index)
    for issue in _zod_issues(d.ref):
        if issue.get("code") != "invalid_value":
            continue
        value = _at(event, issue.get("path", []))
        if isinstance(value, str) and value not in issue.get("values", []):
            return True
    return False


def non_string_type(d: Disagreement) -> bool:
    """Ours rejected an event whose `type` is not a string; the client dropped it as unknown."""
    index = _ours_first(d)
    event = d.event(index)
    return (
        d.ours.detail == "malformed-event"
        and isinstance(event, dict)
        and not isinstance(event.get("type"), str)
    )


RETIRED_NULLS = {"rawEvent", "result", "forwardedProps", "parameters", "payload", "metadata"}


def retired_null_rejected(d: Disagreement) -> bool:
    """Ours rejected a `null` the deprecation registry lists; the client translated it."""
    index = _ours_first(d)
    event = d.event(index)
    if d.ours.detail != "malformed-event" or not isinstance(event, dict):
        return False
    nulls = {
        key
        for node in _walk(event)
        if isinstance(node, dict)
        for key, value in node.items()
        if value is None
    }
    converted = any("Converting deprecated" in w and ": null" in w for w in d.ref.warnings)
    return bool(nulls & RETIRED_NULLS) and converted


def _has_binary(value: Any) -> bool:
    return any(isinstance(n, dict) and n.get("type") == "binary" for n in _walk(value))


def _without_media(messages: Any, ids: set[str]) -> list[str]:
    """The messages with every non-text part removed from the ones named."""
    out = []
    for m in messages if isinstance(messages, list) else []:
        named = isinstance(m, dict) and isinstance(m.get("id"), str) and m["id"] in ids
        if named and isinstance(m.get("content"), list):
            parts = [p for p in m["content"] if isinstance(p, dict) and p.get("type") == "text"]
            m = {**m, "content": parts}  # noqa: PLW2901
        out.append(canonical(m))
    return out


def binary_upgrade_rejected(d: Disagreement) -> bool:
    """The client upgrades a retired binary part and then rejects what it made of a
    malformed one; ours strips the part unread."""
    return _has_binary(d.event(_ref_first(d))) and d.ref.detail.startswith("ZodError")


def binary_part_stripped(d: Disagreement) -> bool:
    """The client upgrades a retired binary part, ours strips it: the messages agree once
    the media parts of the messages that held one are set aside."""
    ids = {
        m["id"]
        for node in _walk([d.case.stream, d.case.input])
        if isinstance(node, dict) and isinstance(node.get("messages"), list)
        for m in node["messages"]
        if isinstance(m, dict) and isinstance(m.get("id"), str) and _has_binary(m)
    }
    if "messages" not in d.fields:
        return False
    return bool(ids) and _without_media(d.ours.messages, ids) == _without_media(d.ref.messages, ids)


def malformed_binary_stripped(d: Disagreement) -> bool:
    """A binary part malformed in its own era (no string mimeType, no source): the client
    leaves it un-upgraded and strips it as unrecognised; ours upgrades it and rejects the
    malformed value."""
    event = d.event(_ours_first(d))
    if d.ours.detail != "malformed-event" or not isinstance(event, dict):
        return False
    for warning in d.ref.warnings:
        if warning.startswith("[ag-ui][enforce] Removed unrecognised material at '"):
            pointer = warning.split("'")[1]
            steps: list[Any] = [int(s) if s.isdigit() else s for s in pointer.split("/")[1:]]
            part = _at(event, steps)
            if isinstance(part, dict) and part.get("type") == "binary":
                return True
    return False


def _untagged(value: Any) -> bool:
    """Some object inside lacks a string union tag (missing, null, a number...)."""
    return any(
        isinstance(node, dict)
        and (
            any(tag in node and not isinstance(node[tag], str) for tag in ("type", "role", "op"))
            or not any(tag in node for tag in ("type", "role", "op"))
        )
        for node in _walk(value)
    )


def malformed_tag_stripped(d: Disagreement) -> bool:
    """Ours rejected a union member without a string tag; the client stripped it as unknown."""
    index = _ours_first(d)
    event = d.event(index)
    if d.ours.detail != "malformed-event" or not isinstance(event, dict):
        return False
    for warning in d.ref.warnings:
        if not warning.startswith("[ag-ui][enforce] Removed unrecognised material at '"):
            continue
        pointer = warning.split("'")[1]
        steps: list[Any] = [int(s) if s.isdigit() else s for s in pointer.split("/")[1:]]
        if _untagged(_at(event, steps)):
            return True
    return False


def tool_call_without_parent(d: Disagreement) -> bool:
    """A tool call naming no parent message: the client makes it a message of its own."""
    orphans = {
        e["toolCallId"]
        for e in d.case.stream
        if isinstance(e, dict)
        and e.get("type") in ("TOOL_CALL_START", "TOOL_CALL_CHUNK")
        and isinstance(e.get("toolCallId"), str)
        and not isinstance(e.get("parentMessageId"), str)
    }
    return any(i in orphans for i in _ids(d.ref.messages) if isinstance(i, str))


def text_into_other_message(d: Disagreement) -> bool:
    """Streamed text naming a message of another kind: ours keeps it out, the client appends."""
    return any("cannot take streamed text" in w for w in d.ours.warnings)


def _ids(messages: Any) -> list[Any]:
    return (
        [m.get("id") for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    )


def tool_result_placement(d: Disagreement) -> bool:
    """The same messages in another order: the client files a tool result under its call."""
    has_result = any(
        isinstance(e, dict) and e.get("type") == "TOOL_CALL_RESULT" for e in d.case.stream
    )
    ours = sorted(canonical(m) for m in d.ours.messages or [])
    ref = sorted(canonical(m) for m in d.ref.messages or [])
    return has_result and ours == ref


def tool_result_repeated_id(d: Disagreement) -> bool:
    """A TOOL_CALL_RESULT reusing a message id: ours replaces that message, the client adds another."""
    ids = [i for i in _ids(d.ref.messages) if isinstance(i, str)]
    repeated = {i for i in ids if ids.count(i) > 1}
    return any(
        isinstance(e, dict)
        and e.get("type") == "TOOL_CALL_RESULT"
        and isinstance(e.get("messageId"), str)
        and e["messageId"] in repeated
        for e in d.case.stream
    )


def retired_thinking_out_of_shape(d: Disagreement) -> bool:
    """A retired THINKING_* event out of its old shape: a messageId on any but
    THINKING_START (or a non-string one there), a thinking message continued that no
    THINKING_TEXT_MESSAGE_START opened, a THINKING_END with no THINKING_START."""
    message_open = span_open = False
    for e in d.case.stream:
        kind = str(e.get("type", "")) if isinstance(e, dict) else ""
        if not kind.startswith("THINKING_"):
            continue
        if "messageId" in e and (kind != "THINKING_START" or not isinstance(e["messageId"], str)):
            return True
        if (
            kind in ("THINKING_TEXT_MESSAGE_CONTENT", "THINKING_TEXT_MESSAGE_END")
            and not message_open
        ):
            return True
        if kind == "THINKING_END" and not span_open:
            return True
        message_open = kind in ("THINKING_TEXT_MESSAGE_START", "THINKING_TEXT_MESSAGE_CONTENT")
        span_open = kind != "THINKING_END"
    return False


def tool_call_owner_differs(d: Disagreement) -> bool:
    """A tool call tagged with another owner than the message holding it: the client rejects."""
    return "A tool call belongs to the message that" in d.ref.detail


def _without_empty_content(messages: Any) -> list[str]:
    return [
        canonical({k: v for k, v in m.items() if k != "content" or v != ""})
        if isinstance(m, dict)
        else canonical(m)
        for m in (messages if isinstance(messages, list) else [])
    ]


def empty_content_on_reopen(d: Disagreement) -> bool:
    """An assistant message made by a tool call, then opened for text: ours gives it `content:
    ""`, the client leaves content absent until text arrives."""
    return "messages" in d.fields and _without_empty_content(
        d.ours.messages
    ) == _without_empty_content(d.ref.messages)


def tool_args_inherit_attribution(d: Disagreement) -> bool:
    """Issue 13 item 1: ours calls a tool call's continuation, tagged as the message holding
    the call, a mismatch; the client lets the call inherit the message's owner."""
    event = d.event(_ours_alone_first(d))
    continuation = ("TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_CHUNK")
    if not isinstance(event, dict) or event.get("type") not in continuation:
        return False
    return d.ours.detail == "attribution-mismatch" and any(
        isinstance(e, dict)
        and e.get("type") in ("TOOL_CALL_START", "TOOL_CALL_CHUNK")
        and "subagentRunId" not in e
        and isinstance(e.get("parentMessageId"), str)
        for e in d.case.stream
    )


def snapshot_ownership(d: Disagreement) -> bool:
    """Issue 13 item 2: the client records owners from MESSAGES_SNAPSHOT, ours does not."""
    return (
        _ref_alone_first(d) is not None
        and "opener's subagent" in d.ref.detail
        and any(isinstance(e, dict) and e.get("type") == "MESSAGES_SNAPSHOT" for e in d.case.stream)
    )


def activity_over_message(d: Disagreement) -> bool:
    """Issue 13 item 7: ACTIVITY_SNAPSHOT with replace: false naming a non-activity message,
    which ours turns into an activity message and the client leaves as it was."""

    def roles(messages: Any) -> dict[Any, Any]:
        listed = messages if isinstance(messages, list) else []
        return {json.dumps(m.get("id")): m.get("role") for m in listed if isinstance(m, dict)}

    ours, ref = roles(d.ours.messages), roles(d.ref.messages)
    seen: set[str] = set()  # ids a non-activity event named before
    for e in d.case.stream:
        if not isinstance(e, dict):
            continue
        key = json.dumps(e.get("messageId"))
        if (
            e.get("type") == "ACTIVITY_SNAPSHOT"
            and e.get("replace") is False
            and key in seen
            and ours.get(key) == "activity"
            and ref.get(key) != "activity"
        ):
            return True
        if not str(e.get("type", "")).startswith("ACTIVITY_"):
            seen.add(key)
    return False


# The rule ids issue 13 items 9 and 10 give these rejections (branch `conf`).
IDENTITY_RULES = {"run-id-mismatch", "thread-id-mismatch"}


def boundary_identity(d: Disagreement) -> bool:
    """Issue 13 item 9: ours rejects boundary events naming another run or thread."""
    index = _ours_first(d)
    event = d.event(index)
    if d.ours.detail not in IDENTITY_RULES or not isinstance(event, dict):
        return False
    if event.get("type") not in ("RUN_STARTED", "RUN_FINISHED"):
        return False
    started = [
        e for e in d.case.stream[:index] if isinstance(e, dict) and e.get("type") == "RUN_STARTED"
    ]
    other_run = (
        event["type"] == "RUN_FINISHED"
        and bool(started)
        and (event.get("runId") != started[-1].get("runId"))
    )
    return other_run or event.get("threadId") != d.case.input.get("threadId")


def duplicate_interrupt_ids(d: Disagreement) -> bool:
    """Issue 13 item 10: ours rejects an interrupt outcome repeating an interrupt id."""
    event = d.event(_ours_first(d))
    if d.ours.detail != "duplicate-interrupt-id":
        return False
    outcome = event.get("outcome") if isinstance(event, dict) else None
    interrupts = outcome.get("interrupts") if isinstance(outcome, dict) else None
    ids = (
        [i.get("id") for i in interrupts if isinstance(i, dict)]
        if isinstance(interrupts, list)
        else []
    )
    return len(ids) != len({json.dumps(i) for i in ids})


def snapshot_repeated_id(d: Disagreement) -> bool:
    """A MESSAGES_SNAPSHOT listing one id twice: ours keeps one message, the client both."""
    for e in d.case.stream:
        if isinstance(e, dict) and e.get("type") == "MESSAGES_SNAPSHOT":
            ids = [json.dumps(i) for i in _ids(e.get("messages"))]
            if len(ids) != len(set(ids)):
                return True
    return False


def message_opened_after_its_tool_call(d: Disagreement) -> bool:
    """A tool call names its parent message before that message is opened, and the opener
    is tagged: ours calls the opener a mismatch with the message the call created (parent's),
    the client only the call's later continuations, if any come."""
    opened: set[str] = set()
    early: set[str] = set()
    for index, e in enumerate(d.case.stream):
        if not isinstance(e, dict):
            continue
        parent = e.get("parentMessageId")
        tool_call = e.get("type") in ("TOOL_CALL_START", "TOOL_CALL_CHUNK")
        if tool_call and isinstance(parent, str) and parent not in opened:
            early.add(parent)
        message_id = e.get("messageId")
        if e.get("type") in ("TEXT_MESSAGE_START", "TEXT_MESSAGE_CHUNK") and isinstance(
            message_id, str
        ):
            if "subagentRunId" in e and message_id in early:
                return d.ours.detail == "attribution-mismatch" and d.ours.index == index
            opened.add(message_id)
    return False


def retired_null_translated(d: Disagreement) -> bool:
    """Ours reads a `null` the deprecation registry lists as absent where the client 1.0.0
    still rejects it (inside a TOOL_CALL_RESULT's content parts, say)."""
    index = _ref_alone_first(d)
    event = d.event(index)
    if not isinstance(event, dict) or not d.ref.detail.startswith("ZodError"):
        return False
    nulls = {
        key
        for node in _walk(event)
        if isinstance(node, dict)
        for key, value in node.items()
        if value is None
    }
    translated = any(
        w.startswith(f"event {index} ") and "legacy null" in w for w in d.ours.warnings
    )
    return bool(nulls & RETIRED_NULLS) and translated


def synthesized_ends_before_rejection(d: Disagreement) -> bool:
    """Both reject one event that first closes open chunk streams; the two deliver a
    different set of the synthesized *_END events before the rejection."""
    if d.first_rejection() != ("both", d.ours.index):
        return False
    short, long = sorted((d.ours.types, d.ref.types), key=len)
    tail = long[len(short) :]
    return long[: len(short)] == short and all(str(t).endswith("_END") for t in tail)


def era_shim_after_early_expansion(d: Disagreement) -> bool:
    """A peer pinned at or below 0.0.57 (subagent events dropped, tags stripped) and a stream
    with chunks and subagent material: the client expands chunks inside its middleware
    chain, before the era shim, so a chunk's lane is still its subagent's; ours translates
    first, at the compatibility boundary, so every chunk is in the parent's lane."""
    if d.case.peer is None or tuple(int(p) for p in d.case.peer.split(".")) > (0, 0, 57):
        return False
    kinds = [str(e.get("type")) for e in d.case.stream if isinstance(e, dict)]
    tagged = any(isinstance(e, dict) and "subagentRunId" in e for e in d.case.stream)
    return any(k.endswith("_CHUNK") for k in kinds) and (
        tagged or any(k.startswith("SUBAGENT_") for k in kinds)
    )


def malformed_chunk_expanded_early(d: Disagreement) -> bool:
    """Both reject a malformed chunk, but the client's middleware chain expanded it first and
    delivered the opener it synthesized from it."""
    if d.first_rejection() != ("both", d.ours.index):
        return False
    event = d.event(d.ours.index)
    if not isinstance(event, dict) or not str(event.get("type")).endswith("_CHUNK"):
        return False
    tail = d.ref.types[len(d.ours.types) :]
    return (
        d.ref.types[: len(d.ours.types)] == d.ours.types
        and bool(tail)
        and all(str(t).endswith("_START") for t in tail)
    )


CATEGORIES: list[Category] = [
    Category(
        name="truncated-read-as-success",
        favours=FAVOURS_US,
        page="basic/transports/index",
        sentence=(
            "A truncated run has no outcome. A consumer MUST NOT synthesize a `RUN_FINISHED` "
            "for it and MUST NOT report it as having succeeded"
        ),
        explains=frozenset({"verdict", "runs"}),
        test=truncated_read_as_success,
    ),
    Category(
        name="unknown-closed-set-value-fatal",
        favours=FAVOURS_US,
        page="basic/processing",
        sentence=(
            "A property that is not described on an event MUST NOT abort the run. [...] a field "
            "whose schema is a closed set of string values [...] is checked as a leaf, so an "
            "unrecognised value there is fatal rather than stripped. [...] both are gaps "
            "against it"
        ),
        explains=ALL,
        test=unknown_closed_value_fatal,
    ),
    Category(
        name="non-string-event-type",
        favours=FAVOURS_US,
        page="basic/processing",
        sentence=(
            "A field the protocol DOES describe, carrying a value the schema rejects, MUST be "
            "fatal: the consumer MUST fail the run rather than repair, coerce or ignore the value."
        ),
        explains=ALL,
        test=non_string_type,
    ),
    Category(
        name="retired-null-rejected",
        favours=FAVOURS_REFERENCE,
        page="basic/versioning (and the registry DEPRECATIONS.md it requires)",
        sentence=(
            "A consumer SHOULD translate a retired shape into its replacement rather than drop "
            "it. (DEPRECATIONS.md: `rawEvent: null` on an event — omit the field.)"
        ),
        explains=ALL,
        test=retired_null_rejected,
    ),
    Category(
        name="retired-binary-part-stripped",
        favours=FAVOURS_REFERENCE,
        page="basic/versioning (and the registry DEPRECATIONS.md it requires)",
        sentence=(
            "A consumer SHOULD translate a retired shape into its replacement rather than drop "
            'it. (DEPRECATIONS.md: `{ type: "binary" }` input content part — the media parts.)'
        ),
        explains=frozenset({"messages"}),
        test=binary_part_stripped,
    ),
    Category(
        name="retired-binary-part-upgrade-rejected",
        favours=FAVOURS_REFERENCE,
        page="basic/versioning (and the registry DEPRECATIONS.md it requires)",
        sentence=(
            "A consumer SHOULD translate a retired shape into its replacement [...] A "
            "downgrade MUST NOT repair a malformed value on the way past."
        ),
        explains=ALL,
        test=binary_upgrade_rejected,
    ),
    Category(
        name="malformed-binary-part-stripped",
        favours=FAVOURS_US,
        page="basic/versioning, basic/processing",
        sentence=(
            "A downgrade MUST NOT repair a malformed value on the way past. (basic/processing: "
            "the consumer MUST fail the run rather than repair, coerce or ignore the value.)"
        ),
        explains=ALL,
        test=malformed_binary_stripped,
    ),
    Category(
        name="malformed-union-tag-stripped",
        favours=FAVOURS_US,
        page="basic/processing",
        sentence=(
            "A field the protocol DOES describe, carrying a value the schema rejects, MUST be "
            "fatal [...] `messageId` holding a number is not a newer protocol; it is a defect"
        ),
        explains=ALL,
        test=malformed_tag_stripped,
    ),
    Category(
        name="tool-result-placement",
        favours=SILENT,
        page="events/tool-calls",
        sentence="(where a tool result's message is placed in the list is not stated)",
        explains=frozenset({"messages"}),
        test=tool_result_placement,
    ),
    Category(
        name="tool-result-repeated-message-id",
        favours=SILENT,
        page="basic/index",
        sentence=(
            "(message ids are unique within a thread; what a consumer does with a "
            "TOOL_CALL_RESULT repeating one is not stated)"
        ),
        explains=frozenset({"messages"}),
        test=tool_result_repeated_id,
    ),
    Category(
        name="retired-thinking-message-out-of-shape",
        favours=SILENT,
        page="basic/versioning",
        sentence=(
            "A consumer SHOULD translate a retired shape into its replacement rather than drop "
            "it. (the retired THINKING_TEXT_MESSAGE_* events carried no messageId and came "
            "inside their own START/END; how to translate one that does not is not stated)"
        ),
        explains=ALL,
        test=retired_thinking_out_of_shape,
    ),
    Category(
        name="tool-call-without-parent",
        favours=SILENT,
        page="events/tool-calls",
        sentence=(
            "(`parentMessageId` is optional; which message holds a call that names none is "
            "not stated: ours files it under the latest assistant message, the client makes "
            "a new assistant message with the call's id)"
        ),
        explains=frozenset({"messages"}),
        test=tool_call_without_parent,
    ),
    Category(
        name="text-into-non-text-message",
        favours=SILENT,
        page="basic/index",
        sentence=(
            "(message ids are unique within a thread; what a consumer does with text streamed "
            "under the id of a reasoning, tool or activity message is not stated)"
        ),
        explains=frozenset({"messages"}),
        test=text_into_other_message,
    ),
    Category(
        name="tool-call-owner-differs-from-message",
        favours=SILENT,
        page="events/subagents",
        sentence=(
            "A tool call inherits the attribution of the message that held it. (whether a "
            "consumer rejects a call tagged with another owner is not stated; issue 13 asks "
            "for the decision in the README)"
        ),
        explains=ALL,
        test=tool_call_owner_differs,
    ),
    Category(
        name="empty-content-on-reopened-message",
        favours=SILENT,
        page="events/text-messages",
        sentence=(
            "(whether a TEXT_MESSAGE_START on an assistant message a tool call created gives it "
            "empty content before any text arrives is not stated)"
        ),
        explains=frozenset({"messages"}),
        test=empty_content_on_reopen,
    ),
    Category(
        name="retired-null-translated",
        favours=FAVOURS_US,
        page="basic/versioning (and the registry DEPRECATIONS.md it requires)",
        sentence=(
            "A consumer SHOULD translate a retired shape into its replacement rather than drop "
            "it. (DEPRECATIONS.md: `metadata: null` on a `document` content part — omit the "
            "field; the client 1.0.0 translates it in messages, not in a tool result's parts)"
        ),
        explains=ALL,
        test=retired_null_translated,
    ),
    Category(
        name="message-opened-after-its-tool-call",
        favours=SILENT,
        page="events/subagents",
        sentence=(
            "A tool call inherits the attribution of the message that held it. (which owner a "
            "message has that a tool call named before the message was opened is not stated)"
        ),
        explains=ALL,
        test=message_opened_after_its_tool_call,
    ),
    Category(
        name="tool-call-args-inherit-attribution",
        favours=FAVOURS_REFERENCE,
        page="events/subagents",
        sentence="A tool call inherits the attribution of the message that held it.",
        explains=ALL,
        test=tool_args_inherit_attribution,
    ),
    Category(
        name="snapshot-ownership-not-recorded",
        favours=FAVOURS_REFERENCE,
        page="events/state, events/subagents",
        sentence=(
            "Being conversation-wide, the snapshot carries no `subagentRunId` of its own; it "
            "establishes each message's ownership through the messages it contains."
        ),
        explains=ALL,
        test=snapshot_ownership,
    ),
    Category(
        name="activity-snapshot-overwrites-message",
        favours=FAVOURS_REFERENCE,
        page="events/activity",
        sentence=(
            "An explicit `replace: false` asks the consumer to leave the existing message as "
            "it stands — content *and* `activityType`"
        ),
        explains=frozenset({"messages"}),
        test=activity_over_message,
    ),
    Category(
        name="boundary-identity",
        favours=FAVOURS_US,
        page="basic/run-input",
        sentence=(
            "Every run on the stream carries the input's `threadId` on its boundary events "
            "[...] and each run's two boundary events MUST agree on their `runId`. (the "
            "client 1.0.0 checks neither)"
        ),
        explains=ALL,
        test=boundary_identity,
    ),
    Category(
        name="duplicate-interrupt-ids",
        favours=FAVOURS_US,
        page="basic/patterns/interrupt-resume",
        sentence=(
            "Each interrupt's `id` MUST be unique within the run; a resume entry answers it "
            "by this id. (the client 1.0.0 accepts a repeated id)"
        ),
        explains=ALL,
        test=duplicate_interrupt_ids,
    ),
    Category(
        name="snapshot-repeated-message-id",
        favours=SILENT,
        page="basic/index, events/state",
        sentence=(
            "(message ids are unique within a thread; what a consumer makes of a "
            "MESSAGES_SNAPSHOT that lists one id twice is not stated)"
        ),
        explains=frozenset({"messages"}),
        test=snapshot_repeated_id,
    ),
    Category(
        name="synthesized-ends-before-rejection",
        favours=SILENT,
        page="basic/patterns/streaming",
        sentence=(
            "(a run-level event closes open chunk streams; when that event is itself "
            "rejected, which of the synthesized ends reach the application first is not "
            "stated)"
        ),
        explains=frozenset({"types"}),
        test=synthesized_ends_before_rejection,
    ),
    Category(
        name="era-shim-after-early-expansion",
        favours=SILENT,
        page="basic/processing",
        sentence=(
            "A middleware *chain* MAY expand chunks between its own stages [...] A middleware "
            "therefore MUST be prepared for either form: what it sees depends on where in the "
            "chain it sits."
        ),
        explains=ALL,
        test=era_shim_after_early_expansion,
    ),
    Category(
        name="malformed-chunk-expanded-early",
        favours=FAVOURS_US,
        page="basic/processing",
        sentence=(
            "whichever stage meets a malformed chunk first [...] MUST reject it rather than "
            "repair it, and MUST NOT normalise, default or conceal a malformed known value"
        ),
        explains=frozenset({"types", "messages"}),
        test=malformed_chunk_expanded_early,
    ),
]
