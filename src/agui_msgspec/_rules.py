"""Every rule id the library can name, with the spec page it comes from: the one table.

A :class:`~agui_msgspec.ProtocolViolation` (or a :class:`~agui_msgspec.TransportError`)
carries one of these ids in ``.rule``; the documentation's rule reference, the
conformance runner's page matching and a report's spec links are all read from here.
"""

from __future__ import annotations

from typing import Literal

import msgspec

SPEC_BASE = "https://docs.ag-ui.com/spec/1.1/"
"""Where the 1.1 specification's pages are published; a rule's ``page`` is relative to it."""

ErrorName = Literal[
    "MalformedEvent", "MalformedInput", "LifecycleViolation", "ChunkViolation",
    "ProtocolViolation", "TransportError",
]  # fmt: skip
Severity = Literal["violation", "warning", "hint"]
"""A violation rejects the stream; a warning is what the consumer strips or drops and goes
on; a hint is a likely producer mistake the spec allows (it never changes a verdict)."""


class Rule(msgspec.Struct, frozen=True, kw_only=True):
    """One rule: its stable id, the exception that carries it, and where the spec says it."""

    id: str
    """The stable id, as ``ProtocolViolation.rule``."""
    error: ErrorName | None
    """The class of the exception raised for it; None for a warning or a hint (never raised)."""
    summary: str
    """What breaks the rule, in one line."""
    pages: tuple[str, ...] = ()
    """The spec pages (under ``/spec/1.1/``) the rule comes from, most specific first; empty
    for a bound of this library's own (a resource limit the spec leaves to implementations)."""
    anchor: str = ""
    """The heading on the first page that says it, as the published page's anchor."""
    bound: str | None = None
    """For a resource bound: the option that sets it."""
    severity: Severity = "violation"
    """What a report makes of it; a hint's level can be changed (``verify(levels=...)``)."""

    @property
    def spec_url(self) -> str | None:
        """The published page (and heading) of the rule's first spec page, or None for a
        bound of ours."""
        if not self.pages:
            return None
        return SPEC_BASE + self.pages[0] + (f"#{self.anchor}" if self.anchor else "")


_ITEM_KINDS = {
    "text-message": "a text message",
    "tool-call": "a tool call",
    "reasoning": "a reasoning span",
    "reasoning-message": "a reasoning message",
    "step": "a step",
    "subagent": "a subagent invocation",
}
_STREAMING = ("basic/patterns/streaming",)
_ITEM_PAGES = {
    "text-message": ("events/text-messages", *_STREAMING),
    "tool-call": ("events/tool-calls", *_STREAMING),
    "reasoning": ("events/reasoning", *_STREAMING),
    "reasoning-message": ("events/reasoning", *_STREAMING),
    "step": ("events/lifecycle", *_STREAMING),
    "subagent": ("events/subagents", *_STREAMING),
}
# The heading of each kind's first page that states its sequence rules.
_ITEM_ANCHORS = {"text-message": "error-handling", "tool-call": "error-handling", "step": "steps"}
_TRANSPORT = ("basic/transports/http-sse", "basic/transports")


def _item_rules() -> list[Rule]:
    rules = []
    for kind, what in _ITEM_KINDS.items():
        pages = _ITEM_PAGES[kind]
        rules.append(
            Rule(
                id=f"{kind}-already-open",
                error="LifecycleViolation",
                summary=f"{what} is opened again while it is open",
                pages=pages,
                anchor=_ITEM_ANCHORS.get(kind, ""),
            )
        )
        rules.append(
            Rule(
                id=f"{kind}-not-open",
                error="LifecycleViolation",
                summary=f"an event continues or closes {what} that is not open",
                pages=pages,
                anchor=_ITEM_ANCHORS.get(kind, ""),
            )
        )
    return rules


_TABLE = [
    Rule(
        id="invalid-json",
        error="MalformedEvent",
        summary="the payload is not JSON",
        pages=("basic/processing", "basic/transports"),
        anchor="the-rule",
    ),
    Rule(
        id="invalid-utf8",
        error="MalformedEvent",
        summary="the payload is not UTF-8",
        pages=("basic/processing", "basic/transports"),
        anchor="the-rule",
    ),
    Rule(
        id="not-an-object",
        error="MalformedEvent",
        summary="the payload is JSON but not one object",
        pages=("basic/processing", "basic/transports"),
        anchor="the-rule",
    ),
    Rule(
        id="malformed-event",
        error="MalformedEvent",
        summary="a known field has a value the schema rejects (wrong type, missing, out of "
        "range, null on an optional field, a malformed JSON Patch)",
        pages=("basic/processing", "schema"),
        anchor="the-rule",
    ),
    Rule(
        id="malformed-message",
        error="MalformedEvent",
        summary="a message given to decode_message has a known field the schema rejects",
        pages=("basic/processing", "schema"),
        anchor="the-rule",
    ),
    Rule(
        id="too-deep",
        error="MalformedEvent",
        summary="the event, or the state it would make, nests deeper than the bound",
        bound="max_state_depth (state); the interpreter's recursion limit (events)",
    ),
    Rule(
        id="state-too-large",
        error="ProtocolViolation",
        summary="the state or an activity's content would pass max_state_size, or one patch "
        "would build more than its allowance",
        bound="max_state_size",
    ),
    Rule(
        id="event-too-large",
        error="TransportError",
        summary="one event exceeds the reader's max_event_size",
        bound="max_event_size",
    ),
    Rule(
        id="too-many-open-items",
        error="LifecycleViolation",
        summary="more items are open at once in a run than max_open_items",
        bound="max_open_items",
    ),
    Rule(
        id="too-many-closed-items",
        error="LifecycleViolation",
        summary="a run would remember the owners of more closed items than max_closed_items",
        bound="max_closed_items",
    ),
    Rule(
        id="malformed-frame",
        error="TransportError",
        summary="a protobuf frame's bytes are not an Event message",
        pages=("basic/transports/http-protobuf",),
    ),
    Rule(
        id="first-event",
        error="LifecycleViolation",
        summary="the stream does not begin with RUN_STARTED or RUN_ERROR",
        pages=("events/lifecycle",),
        anchor="the-run",
    ),
    Rule(
        id="nested-run",
        error="LifecycleViolation",
        summary="RUN_STARTED while a run is active",
        pages=("events/lifecycle",),
        anchor="several-runs-on-one-stream",
    ),
    Rule(
        id="event-after-run-finished",
        error="LifecycleViolation",
        summary="after RUN_FINISHED, anything but RUN_STARTED or one late RUN_ERROR",
        pages=("events/lifecycle",),
        anchor="after-a-run-closes",
    ),
    Rule(
        id="event-after-run-error",
        error="LifecycleViolation",
        summary="after RUN_ERROR, anything but RUN_STARTED",
        pages=("events/lifecycle",),
        anchor="after-a-run-closes",
    ),
    Rule(
        id="open-at-run-finished",
        error="LifecycleViolation",
        summary="RUN_FINISHED while something of the run is still open",
        pages=("events/lifecycle", *_STREAMING),
        anchor="several-runs-on-one-stream",
    ),
    *_item_rules(),
    Rule(
        id="attribution-mismatch",
        error="LifecycleViolation",
        summary="a continuation names another subagent than its opener",
        pages=("events/subagents", "events/tool-calls", "events/activity"),
    ),
    Rule(
        id="run-id-mismatch",
        error="LifecycleViolation",
        summary="RUN_FINISHED names another runId than its run's RUN_STARTED",
        pages=("basic/run-input", "events/lifecycle"),
        anchor="identity",
    ),
    Rule(
        id="thread-id-mismatch",
        error="LifecycleViolation",
        summary="a run names another thread than the stream's first run (or the input)",
        pages=("basic/run-input", "events/lifecycle"),
        anchor="identity",
    ),
    Rule(
        id="duplicate-interrupt-id",
        error="LifecycleViolation",
        summary="two interrupts of one interrupt outcome share an id",
        pages=("basic/patterns/interrupt-resume", "events/lifecycle"),
        anchor="interrupting",
    ),
    Rule(
        id="chunk-missing-first-field",
        error="ChunkViolation",
        summary="the first chunk of an item lacks its id (or a tool call's name)",
        pages=_STREAMING,
        anchor="the-first-chunk",
    ),
    Rule(
        id="chunk-conflicting-repeat",
        error="ChunkViolation",
        summary="a continuation chunk repeats an opener field with another value",
        pages=(*_STREAMING, "events/tool-calls"),
        anchor="continuation-chunks",
    ),
    Rule(
        id="chunk-ambiguous",
        error="ChunkViolation",
        summary="an untagged, id-less chunk could continue several subagents' streams",
        pages=(*_STREAMING, "events/subagents"),
        anchor="closing-a-chunk-stream",
    ),
    Rule(
        id="truncated",
        error="ProtocolViolation",
        summary="the stream ended with a run still active, or inside an event",
        pages=("basic/transports", "events/lifecycle"),
        anchor="truncation",
    ),
    Rule(
        id="malformed-input",
        error="MalformedInput",
        summary="a RunAgentInput the schema rejects",
        pages=("basic/run-input", "basic/processing"),
        anchor="error-handling",
    ),
    Rule(
        id="resume-uncovered",
        error="MalformedInput",
        summary="a resume does not answer every open interrupt of the run it resumes",
        pages=("basic/patterns/interrupt-resume",),
        anchor="resuming",
    ),
    Rule(
        id="resume-expired",
        error="MalformedInput",
        summary="a resume answers an interrupt whose expiry has passed",
        pages=("basic/patterns/interrupt-resume",),
        anchor="resuming",
    ),
    Rule(
        id="unrecognised-content",
        error="ProtocolViolation",
        summary="a producer is about to send material a consumer would strip",
        pages=("basic/processing", "architecture"),
        anchor="what-a-consumer-does-with-unrecognised-material",
    ),
    Rule(
        id="connect",
        error="TransportError",
        summary="no connection to the agent",
        pages=_TRANSPORT,
    ),
    Rule(
        id="timeout",
        error="TransportError",
        summary="a wait on the transport passed its timeout",
        pages=_TRANSPORT,
        bound="timeout",
    ),
    Rule(
        id="event-timeout",
        error="TransportError",
        summary="one event took longer than event_timeout to arrive",
        pages=_TRANSPORT,
        bound="event_timeout",
    ),
    Rule(
        id="deadline",
        error="TransportError",
        summary="the run took longer than its deadline",
        pages=_TRANSPORT,
        bound="deadline",
    ),
    Rule(
        id="cut",
        error="TransportError",
        summary="the connection broke during the response",
        pages=_TRANSPORT,
    ),
    Rule(
        id="bad-redirect",
        error="TransportError",
        summary="the response redirects to a Location that is not a URL",
        pages=_TRANSPORT,
    ),
    Rule(
        id="decode",
        error="TransportError",
        summary="the response body does not decode (its content coding is corrupt)",
        pages=_TRANSPORT,
    ),
    Rule(
        id="stacked-encoding",
        error="TransportError",
        summary="the response names more than one content coding",
        pages=_TRANSPORT,
    ),
    Rule(
        id="unknown-encoding",
        error="TransportError",
        summary="the response names a content coding that was not asked for",
        pages=_TRANSPORT,
    ),
]

# What a consumer strips or drops and goes on with: a report's warnings, by kind.
_WARNINGS = [
    Rule(
        id="dropped-event",
        error=None,
        summary="the consumer dropped an event: an unrecognised type, or a value it cannot keep",
        pages=("basic/processing",),
        anchor="what-a-consumer-does-with-unrecognised-material",
        severity="warning",
    ),
    Rule(
        id="stripped-content",
        error=None,
        summary="the consumer removed unrecognised properties or values from an event",
        pages=("basic/processing",),
        anchor="what-a-consumer-does-with-unrecognised-material",
        severity="warning",
    ),
    Rule(
        id="consumer-warning",
        error=None,
        summary="anything else the consumer warned about and went on (a state delta that does "
        "not apply, a newer declared version, a translated retired event)",
        pages=("basic/processing",),
        severity="warning",
    ),
    Rule(
        id="too-many-violations",
        error=None,
        summary="verify() stopped reading after max_violations violations",
        bound="max_violations",
        severity="warning",
    ),
    Rule(
        id="state-history-too-large",
        error=None,
        summary="verify() kept no more states in Report.states after max_state_history bytes",
        bound="max_state_history",
        severity="warning",
    ),
]

# Likely producer mistakes the spec allows: a report's hints, never a verdict.
_HINTS = [
    Rule(
        id="tool-arguments-not-json",
        error=None,
        summary="a tool call's arguments, as they stand at its last TOOL_CALL_END of the run, "
        "do not parse as JSON",
        pages=("events/tool-calls",),
        anchor="tool_call_end",
        severity="hint",
    ),
    Rule(
        id="near-miss-event-type",
        error=None,
        summary="an unrecognised event type that is close to a known one (dropped as unknown)",
        pages=("basic/processing",),
        anchor="what-a-producer-must-not-do",
        severity="hint",
    ),
    Rule(
        id="raw-wraps-typed-event",
        error=None,
        summary="a RAW event whose payload is itself an AG-UI event, which could be sent typed",
        pages=("events/passthrough",),
        anchor="raw",
        severity="hint",
    ),
    Rule(
        id="unknown-parent-message",
        error=None,
        summary="a parentMessageId that names no message of the input or the stream",
        pages=("events/tool-calls",),
        anchor="tool_call_start",
        severity="hint",
    ),
    Rule(
        id="timestamp-in-seconds",
        error=None,
        summary="a timestamp that reads as seconds since the epoch where the schema says "
        "milliseconds",
        pages=("schema",),
        severity="hint",
    ),
    Rule(
        id="snapshot-renames-messages",
        error=None,
        summary="a MESSAGES_SNAPSHOT gives new ids to messages the input or the stream already "
        "gave ids to",
        pages=("events/state",),
        anchor="messages_snapshot",
        severity="hint",
    ),
]

RULES: dict[str, Rule] = {rule.id: rule for rule in (*_TABLE, *_WARNINGS, *_HINTS)}
"""Every rule by id, in the order the documentation lists them."""


def spec_url(rule_id: str) -> str | None:
    """The spec page of ``rule_id``; None for a bound of this library's own or an unknown id."""
    rule = RULES.get(rule_id)
    return rule.spec_url if rule is not None else None
