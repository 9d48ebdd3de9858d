"""``verify()``: every finding of a stream in one pass, for the people who produce it.

A :class:`Consumer` stops at the first violation, as the specification asks of a client.
A producer's author wants them all: here the stream is read on after a violation, the
offending event set aside, as a consumer that logged the violation and went on would.
The consumer has no such mode, so after a violation a fresh one is given every payload
accepted so far (the set-aside ones left out) and reading goes on with it: the state it
continues from is exactly that of a stream that never had the offending events. That
replay costs the stream so far per violation, hence the ``max_violations`` bound.

Warnings are what the consumer said while taking each payload (what it stripped or
dropped, with the event and the path); hints are read from the delivered events after.
"""

from __future__ import annotations

import dataclasses
import difflib
import reprlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal

import msgspec

from agui_msgspec._documents import Payload, decode_document
from agui_msgspec._errors import (
    MalformedEvent,
    ProtocolViolation,
    TransportError,
    UsageError,
    checked_bound,
    wrong_type,
)
from agui_msgspec._pipeline.consumer import (
    MEDIA_TYPES,
    READERS,
    BodyFormat,
    Consumer,
    Result,
    told_format,
)
from agui_msgspec._pipeline.containers import TextParts
from agui_msgspec._rules import RULES, Severity, spec_url
from agui_msgspec._versions import LATEST_VERSION, Bindings, VersionLike, bindings_for
from agui_msgspec._wire.text import (
    DEFAULT_MAX_EVENT_SIZE,
    PayloadReader,
)

Level = Literal["violation", "warning", "hint", "off"]
DEFAULT_MAX_VIOLATIONS = 100
"""Violations set aside before :func:`verify` stops reading (each costs a replay of the
stream so far, so a stream of nothing but violations would cost its length squared)."""
DEFAULT_MAX_STATE_HISTORY = 16 * 1024 * 1024
"""Bytes of JSON of the states :attr:`Report.states` keeps (each is a whole copy, so a big
state and many small deltas would cost their product)."""

_RANK: dict[str, int] = {"hint": 0, "warning": 1, "violation": 2}


class Finding(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One thing :func:`verify` found: a violation, a warning or a hint."""

    rule: str
    """A rule id of ``RULES``: a violation's, a warning's kind, or a hint's."""
    severity: Severity
    message: str
    received_index: int | None
    """The payload (SSE event, JSON line, protobuf frame, or payload given) as received,
    from 0; None at the end of the stream or before any payload."""
    delivered_index: int | None
    """The event's index in ``Report.events`` as delivered (chunks expanded, dropped events
    out); None for an event set aside or dropped, or none at all."""
    path: str = ""
    """A JSON Pointer into the event."""
    related_index: int | None = None
    """The delivered index of the event the finding is about as well: the opener of the item
    a second opener repeats, the event that closed what a late event continues, the
    RUN_FINISHED a late event follows, the RUN_STARTED of a run that did not end."""
    spec_url: str | None = None
    after_violation: bool = False
    """Found after the stream's first violation: a consumer would not have read this far."""


ReportEventStatus = Literal["delivered", "dropped", "set-aside"]


class ReportEvent(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One event as read: delivered (a chunk payload gives one per expanded event), dropped
    by the consumer (with a warning), or set aside (the event of a violation)."""

    received_index: int
    delivered_index: int | None
    """The index among the delivered events; None when dropped or set aside."""
    type: str
    """The event's ``type`` ("" when the payload has none, or is not JSON)."""
    event: dict[str, Any]
    """The event as wire JSON: what the application sees for a delivered event, the payload
    as sent for the others (``{"payload": text}`` when it is not a JSON object)."""
    status: ReportEventStatus = "delivered"
    arrived: float | None = None
    """Seconds since the first byte, when the reader knows (a live probe)."""


class StateStep(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The agent state after a delivered STATE_SNAPSHOT or STATE_DELTA."""

    delivered_index: int
    state: Any


class Report(msgspec.Struct, kw_only=True):
    """What :func:`verify` found in a stream."""

    findings: list[Finding]
    """Every finding, in the order the stream gave them (hints after the reading)."""
    events: list[ReportEvent]
    """Every event read, those after a violation too, in order."""
    verdict: Literal["accepted", "rejected"]
    """The consumer's verdict: its first violation is fatal. Hints and warnings never change it."""
    result: Result
    """What ``consume_body`` (or ``consume``) gives for the same input."""
    states: list[StateStep] = msgspec.field(default_factory=list)
    """The state after each delivered state event, for a history with per-delta diffs; up to
    ``max_state_history`` bytes of them, then none (a ``state-history-too-large`` warning
    says from which event)."""

    @property
    def violations(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity == "violation"]

    @property
    def warnings(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity == "warning"]

    @property
    def hints(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity == "hint"]

    def failed(self, fail_on: Severity = "violation", max_warnings: int | None = None) -> bool:
        """Whether a CI policy fails the stream: rejected, or a finding at ``fail_on`` or
        above, or more than ``max_warnings`` warnings."""
        if fail_on not in _RANK:
            raise UsageError(f"fail_on is one of violation, warning, hint, not {fail_on!r}")
        floor = _RANK[fail_on]
        if self.verdict == "rejected" or any(_RANK[f.severity] >= floor for f in self.findings):
            return True
        return max_warnings is not None and len(self.warnings) > max_warnings

    def up_to_first_violation(self) -> Report:
        """The report a consumer's reading gives: nothing after the first violation."""
        findings = [finding for finding in self.findings if not finding.after_violation]
        first = next((f for f in findings if f.severity == "violation"), None)
        if first is None:
            return self
        end = first.received_index
        events = self.events if end is None else [e for e in self.events if e.received_index <= end]
        last = max((e.delivered_index for e in events if e.delivered_index is not None), default=-1)
        findings = [
            f
            for f in findings
            if f is first
            or (f.severity != "hint" and f.received_index is not None and end is not None
                and f.received_index < end)
            or (f.severity == "hint" and f.delivered_index is not None
                and f.delivered_index <= last)
        ]  # fmt: skip
        states = [step for step in self.states if step.delivered_index <= last]
        return Report(
            findings=findings, events=events, verdict=self.verdict, result=self.result,
            states=states,
        )  # fmt: skip


Source = bytes | bytearray | memoryview | Iterable[bytes] | Iterable[str | Mapping[str, Any] | Any]


def verify(
    source: Source,
    *,
    version: VersionLike = LATEST_VERSION,
    input: Any = None,
    media_type: str | None = None,
    peer_version: str | None = None,
    levels: Mapping[str, Level] | None = None,
    first: bool = False,
    max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
    max_violations: int = DEFAULT_MAX_VIOLATIONS,
    max_state_history: int = DEFAULT_MAX_STATE_HISTORY,
) -> Report:
    """Every finding of a stream: its violations (read on past the first, unless ``first``),
    the consumer's warnings and the hints, each with its indexes and spec link.

    ``source`` is a response body (bytes, or an iterable of byte chunks: SSE, JSON lines
    or protobuf frames, told as ``consume_body`` tells them, or by ``media_type``) or the
    payloads of a stream (an iterable of JSON text, dicts, event Structs or official models;
    an iterable of ``bytes`` is a body's chunks). ``levels`` sets a hint's or a warning's
    severity by rule id, or ``"off"``; a violation's cannot be changed. ``max_state_history``
    bounds the bytes of JSON ``Report.states`` keeps.
    """
    table = _levels(levels or {})
    bindings = bindings_for(version)
    if media_type is not None and not isinstance(media_type, str):
        raise wrong_type("media_type=", media_type, "a media type (str) or None")
    verifier = _Verifier(
        bindings, input, peer_version, first, max_violations, table,
        max_state_history=checked_bound("max_state_history", max_state_history),
    )  # fmt: skip
    if isinstance(source, (bytes, bytearray, memoryview)):
        verifier.read_body((bytes(source),), media_type, max_event_size)
    else:
        if not isinstance(source, Iterable) or isinstance(source, str):
            raise wrong_type("verify()", source, "a body (bytes) or an iterable of payloads")
        items = iter(source)
        head = next(items, None)
        if head is None:
            verifier.read_payloads(())
        elif isinstance(head, (bytes, bytearray, memoryview)):
            verifier.read_body(_chained(bytes(head), items), media_type, max_event_size)
        else:
            if media_type is not None:
                raise UsageError("media_type is for a body, not for payloads")
            verifier.read_payloads(_chained(head, items))
    return verifier.report()


def checked_report(caller: str, report: object, **names: object) -> None:
    """A ``UsageError`` unless ``report`` is a :class:`Report` and each of ``names`` text."""
    if not isinstance(report, Report):
        raise wrong_type(caller, report, "a Report")
    for option, value in names.items():
        if not isinstance(value, str):
            raise wrong_type(f"{option}=", value, "a str")
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeError:
                raise UsageError(f"{option}= is not text: it holds a lone surrogate") from None


def _chained(head: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield head
    yield from rest


def _levels(levels: Mapping[str, Level]) -> dict[str, Level]:
    if not isinstance(levels, Mapping):
        raise wrong_type("levels=", levels, "a mapping of rule id to level")
    for rule_id, level in levels.items():
        rule = RULES.get(rule_id)
        if rule is None:
            raise UsageError(f"no rule {rule_id!r}")
        if rule.severity == "violation":
            raise UsageError(f"{rule_id} is a violation: its level cannot be changed")
        if level not in (*_RANK, "off"):
            raise UsageError(f"a level is violation, warning, hint or off, not {level!r}")
    return dict(levels)


class _Stop(Exception):
    """Reading ends here (``first``, or ``max_violations``)."""


class _Verifier:
    """The reading: payloads in, findings and events out."""

    def __init__(
        self,
        bindings: Bindings,
        input: Any,
        peer_version: str | None,
        first: bool,
        max_violations: int,
        levels: dict[str, Level],
        *,
        keep_events: bool = True,
        on_event: Callable[[ReportEvent], object] | None = None,
        on_finding: Callable[[Finding], None] | None = None,
        max_state_history: int = DEFAULT_MAX_STATE_HISTORY,
    ) -> None:
        self.bindings = bindings
        self.levels = levels
        self.first = first
        self.max_violations = max_violations
        # check's live timeline: each event and finding as found, the events kept or not
        self.keep_events = keep_events
        self.on_event = on_event
        self.on_finding = on_finding

        def make() -> Consumer:
            return Consumer(bindings, self._on_warning, input, peer_version=peer_version)

        self.make_consumer = make
        self.findings: list[Finding] = []
        self.events: list[ReportEvent] = []
        self.states: list[StateStep] = []
        self.max_state_history = max_state_history
        self.state_bytes = 0  # of JSON, in self.states
        self.keep_states = keep_events  # until they pass max_state_history
        self.accepted: list[Payload] = []  # what a replay feeds
        self.received = 0
        self.delivered = 0
        self.replaying = False
        self.said: list[str] = []  # warnings said while taking the current payload
        self.violations = 0
        self.result: Result | None = None  # fixed at the first violation
        self.result_events: list[Any] = []
        self.tracker = _Related()
        self.hints = _Hints(input, bindings)
        try:
            self.consumer: Consumer | None = make()
        except ProtocolViolation as violation:  # the input the run started from is malformed
            self.consumer = None
            self.result = Result(outcome="failed", violation=violation)
            self._add(violation.rule, "violation", str(violation), None, None, violation.path)

    # -- reading

    def read_payloads(self, payloads: Iterable[Any]) -> None:
        if self.consumer is None:
            return
        try:
            for payload in payloads:
                self._take(payload)
            self._close(False)
        except _Stop:
            pass

    def read_body(
        self, chunks: Iterable[bytes], media_type: str | None, max_event_size: int
    ) -> None:
        if self.consumer is None:
            return
        reader: PayloadReader | None = None
        if media_type is not None:
            name = media_type.partition(";")[0].strip().lower()
            if name not in MEDIA_TYPES:
                raise UsageError(f"no reader for media type {name!r}")
            reader = self._reader(MEDIA_TYPES[name], max_event_size)
        head = b""
        try:
            for chunk in chunks:
                piece = chunk
                if reader is None:
                    head += chunk
                    told = told_format(head)
                    if told is None:
                        continue
                    reader, piece, head = self._reader(told, max_event_size), head, b""
                if not self._frame(reader.feed, piece):
                    return
            if reader is None:
                self._close(False)
                return
            if self._frame(lambda _: reader.close(), b""):
                self._close(reader.discarded_partial)
        except _Stop:
            pass

    def _reader(self, body_format: BodyFormat, max_event_size: int) -> PayloadReader:
        return READERS[body_format](max_event_size, self.bindings, self._reader_warning)

    def _frame(self, feed: Callable[[bytes], list[bytes]], chunk: bytes) -> bool:
        """The chunk's payloads, taken; False if the body cannot be framed further."""
        try:
            payloads = feed(chunk)
        except (ProtocolViolation, TransportError) as violation:  # the reader's
            self._violated(violation, self.received, None, ends=True)
            return False
        for payload in payloads:
            self._take(payload)
        return True

    def _reader_warning(self, before: int, message: str) -> None:
        """The protobuf reader dropped a frame (an event type this build does not know)."""
        if self.consumer is not None and self.result is None:
            self.replaying = True  # said here, not as the next payload's
            try:
                self.consumer.warn(message)  # the result says it, as consume_body's does
            finally:
                self.replaying = False
        self._add("dropped-event", "warning", message, None, None)

    def _take(self, payload: Any) -> None:
        consumer = self.consumer
        assert consumer is not None
        received = self.received
        self.received += 1
        self.said = []
        try:
            events = consumer.feed(payload)
        except ProtocolViolation as violation:
            self._violated(violation, received, payload)
            return
        if not self.first:  # only a reading that goes on replays
            self.accepted.append(payload)
        if self.result is None and self.keep_events:
            self.result_events += events
        first_delivered = self.delivered if events else None
        dropped = None
        if not events:
            document = _document(payload, received)
            dropped = ReportEvent(
                received_index=received,
                delivered_index=None,
                type=_type_of(document),
                event=document,
                status="dropped",
            )
            self._event(dropped)
        for event in events:
            self._delivered(event, received, consumer)
        for message in self.said:
            self._warned(message, received, first_delivered)
        if dropped is not None:
            self._hinted(dropped)

    def _delivered(self, event: Any, received: int, consumer: Consumer) -> None:
        document = msgspec.to_builtins(event)
        index = self.delivered
        self.delivered += 1
        delivered = ReportEvent(
            received_index=received, delivered_index=index, type=event.type, event=document
        )
        self._event(delivered)
        self.tracker.saw(document, index)
        if self.keep_states and event.type in ("STATE_SNAPSHOT", "STATE_DELTA"):
            self._kept_state(consumer.state, received, index)
        self._hinted(delivered)

    def _kept_state(self, state: Any, received: int, index: int) -> None:
        """A copy of the state in the history, while it fits in ``max_state_history``; past
        that, no state is copied again: each copy costs the whole state."""
        encoded = msgspec.json.encode(state)
        if self.state_bytes + len(encoded) > self.max_state_history:
            self.keep_states = False
            self._add(
                "state-history-too-large", "warning",
                f"the states kept hold {self.state_bytes} bytes of JSON and this one "
                f"{len(encoded)}: past max_state_history ({self.max_state_history}), the state "
                "history stops before this event", received, index, after=self.violations > 0,
            )  # fmt: skip
            return
        self.state_bytes += len(encoded)
        self.states.append(StateStep(delivered_index=index, state=msgspec.json.decode(encoded)))

    def _event(self, event: ReportEvent) -> None:
        if self.keep_events:
            self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)

    def _hinted(self, event: ReportEvent) -> None:
        self._hint(self.hints.saw(event))

    def _hint(self, hints: Iterable[Hint]) -> None:
        for rule, message, path, about in hints:
            self._add(
                rule, "hint", message, about.received_index, about.delivered_index, path,
                after=self.violations > 0,
            )  # fmt: skip

    def _close(self, inside_event: bool) -> None:
        consumer = self.consumer
        assert consumer is not None
        self._hint(self.hints.run_ended())  # the calls of a run the stream did not end
        self.said = []
        try:
            events = consumer.close(inside_event=inside_event)
        except ProtocolViolation as violation:
            self._violated(violation, None, None)
            events = []
        if self.result is None:
            self.result = consumer.result(self.result_events + events)
        for message in self.said:
            self._warned(message, None, None)

    def _on_warning(self, message: str) -> None:
        if not self.replaying:
            self.said.append(message)

    # -- findings

    def _violated(
        self,
        violation: ProtocolViolation | TransportError,
        received: int | None,
        payload: Any,
        *,
        ends: bool = False,
    ) -> None:
        """Report a violation, set its event aside, and go on with a consumer that never
        saw it; ``ends``: nothing can be read after it (the body cannot be framed)."""
        after = self.result is not None
        if not after and self.consumer is not None:
            delivered = list(getattr(violation, "delivered", []))
            result = self.consumer.result(self.result_events + delivered)
            if result.violation is None:  # the reader's: consume_body's consumer owns its reader
                result = dataclasses.replace(result, outcome="failed", violation=violation)
            self.result = result
        rule, path = str(violation.rule), str(getattr(violation, "path", ""))
        document = None if payload is None else _document(payload, received or 0)
        related = self.tracker.related(rule, document)
        if document is not None and received is not None:
            aside = ReportEvent(
                received_index=received,
                delivered_index=None,
                type=_type_of(document),
                event=document,
                status="set-aside",
            )
            self._event(aside)
        for message in self.said:  # said before the event broke a rule
            self._warned(message, received, None)
        self._add(rule, "violation", violation.detail, received, None, path, related, after=after)
        self.violations += 1
        if self.first or ends or received is None:
            raise _Stop
        if self.violations >= self.max_violations:
            self._add(
                "too-many-violations",
                "warning",
                f"reading stopped after {self.violations} violations (max_violations)",
                received,
                None,
                after=True,
            )
            raise _Stop
        self.consumer = self._replayed()

    def _replayed(self) -> Consumer:
        """A fresh consumer that has taken every payload accepted so far."""
        consumer = self.make_consumer()
        self.replaying = True
        try:
            consumer.feed_many(self.accepted)
        finally:
            self.replaying = False
        return consumer

    def _warned(self, message: str, received: int | None, delivered: int | None) -> None:
        path, text = _warning_parts(message)
        kind = (
            "dropped-event"
            if text.startswith("dropped")
            else "stripped-content"
            if text.startswith("removed")
            else "consumer-warning"
        )
        self._add(kind, "warning", text, received, delivered, path, after=self.violations > 0)

    def _add(
        self,
        rule: str,
        severity: Severity,
        message: str,
        received: int | None,
        delivered: int | None,
        path: str = "",
        related: int | None = None,
        *,
        after: bool = False,
    ) -> None:
        if severity != "violation":
            level = self.levels.get(rule, severity)
            if level == "off":
                return
            severity = level
        finding = Finding(
            rule=rule,
            severity=severity,
            message=message,
            received_index=received,
            delivered_index=delivered,
            path=path,
            related_index=related,
            spec_url=spec_url(rule),
            after_violation=after,
        )
        self.findings.append(finding)
        if self.on_finding is not None:
            self.on_finding(finding)

    def report(self) -> Report:
        assert self.result is not None or self.consumer is None
        result = self.result or Result(outcome="failed", violation=None)
        # In stream order; what is about no one event (the end, a dropped frame) last.
        self.findings.sort(key=_stream_order)
        return Report(
            findings=self.findings,
            events=self.events,
            verdict="accepted" if result.outcome == "completed" else "rejected",
            result=result,
            states=self.states,
        )


def _stream_order(finding: Finding) -> float:
    return float("inf") if finding.received_index is None else finding.received_index


_SHOWN = reprlib.Repr()  # its defaults: 6 levels deep, a few items of each container
_SHOWN.maxstring = _SHOWN.maxother = 200


def _document(payload: Any, index: int) -> dict[str, Any]:
    """The payload as sent, as a JSON object if it is one."""
    try:
        document = decode_document(payload, index)
    except (ProtocolViolation, RecursionError, TypeError, ValueError):
        document = None
    if isinstance(document, dict):
        return document
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return {"payload": bytes(payload)[:1000].decode("utf-8", "replace")}
    if isinstance(payload, str):  # a lone surrogate is shown escaped: a report is UTF-8
        text = str.__str__(payload)[:1000].encode("utf-8", "backslashreplace")
        return {"payload": text.decode("utf-8")}
    try:  # bounded in depth and length: a payload nested past the stack, or huge, is refused
        shown = _SHOWN.repr(payload)
    except Exception:  # an application object's own __repr__ runs here: anything
        shown = f"<{type(payload).__name__}>"
    return {"payload": shown}


def _type_of(document: Mapping[str, Any]) -> str:
    kind = document.get("type")
    return kind if isinstance(kind, str) else ""


def _warning_parts(message: str) -> tuple[str, str]:
    """A consumer warning's JSON Pointer and its text, the "event N" it starts with left out
    (the finding's indexes say which event, counted as the report counts)."""
    if message.startswith("event "):
        rest = message[6:].lstrip("0123456789")
        if rest.startswith(" /"):
            path, _, text = rest[1:].partition(": ")
            return path, text
        return "", rest.removeprefix(": ")
    return "", message


# -- related events

# event type → (item kind, the property naming the item, what the event does to it)
_ITEM_EVENTS: dict[str, tuple[str, str, str]] = {
    "TEXT_MESSAGE_START": ("text-message", "messageId", "open"),
    "TEXT_MESSAGE_CONTENT": ("text-message", "messageId", "continue"),
    "TEXT_MESSAGE_END": ("text-message", "messageId", "close"),
    "TEXT_MESSAGE_CHUNK": ("text-message", "messageId", "continue"),
    "TOOL_CALL_START": ("tool-call", "toolCallId", "open"),
    "TOOL_CALL_ARGS": ("tool-call", "toolCallId", "continue"),
    "TOOL_CALL_END": ("tool-call", "toolCallId", "close"),
    "TOOL_CALL_CHUNK": ("tool-call", "toolCallId", "continue"),
    "REASONING_START": ("reasoning", "messageId", "open"),
    "REASONING_END": ("reasoning", "messageId", "close"),
    "REASONING_MESSAGE_START": ("reasoning-message", "messageId", "open"),
    "REASONING_MESSAGE_CONTENT": ("reasoning-message", "messageId", "continue"),
    "REASONING_MESSAGE_END": ("reasoning-message", "messageId", "close"),
    "REASONING_MESSAGE_CHUNK": ("reasoning-message", "messageId", "continue"),
    "STEP_STARTED": ("step", "stepName", "open"),
    "STEP_FINISHED": ("step", "stepName", "close"),
    "SUBAGENT_STARTED": ("subagent", "subagentRunId", "open"),
    "SUBAGENT_FINISHED": ("subagent", "subagentRunId", "close"),
    "SUBAGENT_ERROR": ("subagent", "subagentRunId", "close"),
}
_RUN_EVENTS = ("RUN_STARTED", "RUN_FINISHED", "RUN_ERROR")
# rule → the run event whose latest delivery the rule's finding relates to
_RELATED_RUN_EVENT = {
    "event-after-run-finished": "RUN_FINISHED",
    "event-after-run-error": "RUN_ERROR",
    "nested-run": "RUN_STARTED",
    "run-id-mismatch": "RUN_STARTED",
    "truncated": "RUN_STARTED",
    "duplicate-interrupt-id": "RUN_STARTED",
}


class _Related:
    """The delivered events a finding can point to: each item's opener and closer, the
    latest run events, and what is open in the current run."""

    def __init__(self) -> None:
        self.opened: dict[tuple[str, Any], int] = {}
        self.closed: dict[tuple[str, Any], int] = {}
        self.open: dict[tuple[str, Any], int] = {}
        self.latest: dict[str, int] = {}
        self.first_run: int | None = None

    def saw(self, document: Mapping[str, Any], index: int) -> None:
        kind = document.get("type")
        if kind in _RUN_EVENTS:
            self.latest[kind] = index
            self.open.clear()
            if kind == "RUN_STARTED" and self.first_run is None:
                self.first_run = index
            return
        item = _ITEM_EVENTS.get(kind)  # type: ignore[arg-type]
        if item is None:
            return
        key = (item[0], document.get(item[1]))
        if item[2] == "open":
            self.opened[key] = self.open[key] = index
        elif item[2] == "close":
            self.closed[key] = index
            self.open.pop(key, None)

    def related(self, rule: str, document: Mapping[str, Any] | None) -> int | None:
        if rule in _RELATED_RUN_EVENT:
            return self.latest.get(_RELATED_RUN_EVENT[rule])
        if rule == "thread-id-mismatch":
            return self.first_run
        if rule == "open-at-run-finished":
            return next(iter(self.open.values()), None)
        item = None if document is None else _ITEM_EVENTS.get(_type_of(document))
        if item is None or document is None:
            return None
        key = (item[0], document.get(item[1]))
        if rule.endswith("-already-open"):
            return self.open.get(key, self.opened.get(key))
        if rule.endswith("-not-open"):
            return self.closed.get(key)
        if rule in ("attribution-mismatch", "chunk-conflicting-repeat"):
            return self.opened.get(key)
        return None


# -- hints

Hint = tuple[str, str, str, ReportEvent]
"""A hint's rule, message, path into the event, and the event it is about."""
# Milliseconds since the epoch are past this from 1973 on; seconds stay below it until 5138.
_SECONDS_CEILING = 10**11
_SECONDS_FLOOR = 10**8  # 1973 in seconds: below it, a small test value, not an epoch time


class _Hints:
    """Likely producer mistakes the spec allows, read from the events as they are read."""

    def __init__(self, input: Any, bindings: Bindings) -> None:
        self.known_types = frozenset(bindings.EVENT_TYPES)
        self.sorted_types = sorted(self.known_types)
        # Each tool call's argument text this run, and each streamed message's text: joined as
        # it grows, as a str per delta held about 30 times the text (59 bytes for 2 characters)
        self.arguments: dict[Any, TextParts] = {}
        # The calls whose latest event is their TOOL_CALL_END, with it: judged when the run
        # ends, as a call may be reopened until then (interleaved chunks are).
        self.ended: dict[Any, ReportEvent] = {}
        self.streamed = ""  # the assistant message the run last streamed
        # id → (role, content), both hashable; content None while a streamed one is open
        self.messages: dict[str, tuple[Any, Any]] = {}
        # (role, content) → the ids that have it, the latest last: a snapshot's new id is
        # looked up here, not in every message seen (that made a stream of snapshots quadratic)
        self.holders: dict[tuple[Any, Any], dict[str, None]] = {}
        self.texts: dict[str, TextParts] = {}
        for message in _input_messages(input):
            if isinstance(message, Mapping) and isinstance(message.get("id"), str):
                self._know(message["id"], message.get("role"), message.get("content"))

    def saw(self, event: ReportEvent) -> Iterator[Hint]:
        document, kind = event.event, event.type
        if event.status == "dropped":
            near = self._near_miss(kind)
            if near is not None:
                yield ("near-miss-event-type",
                       f"unrecognised event type {kind!r}: did you mean {near}?", "/type",
                       event)  # fmt: skip
            return
        timestamp = document.get("timestamp")
        if isinstance(timestamp, (int, float)) and _SECONDS_FLOOR <= timestamp < _SECONDS_CEILING:
            yield ("timestamp-in-seconds",
                   f"timestamp {timestamp} reads as seconds since the epoch; the schema says "
                   "milliseconds", "/timestamp", event)  # fmt: skip
        if kind == "TOOL_CALL_START":
            call_id = document.get("toolCallId")
            self.arguments.setdefault(call_id, TextParts([]))
            self.ended.pop(call_id, None)  # reopened: its arguments go on
            parent = document.get("parentMessageId")
            # A new id is how a call mints its own assistant message; after the run streamed
            # an assistant message, it more likely meant that one and lands apart from it.
            if isinstance(parent, str) and parent not in self.messages and self.streamed:
                yield ("unknown-parent-message",
                       f"parentMessageId {parent!r} names no message, so the call gets an "
                       f"assistant message of its own, apart from {self.streamed!r} streamed "
                       "before it in this run", "/parentMessageId", event)  # fmt: skip
        elif kind == "TOOL_CALL_ARGS":
            call_id = document.get("toolCallId")
            _grow(self.arguments.setdefault(call_id, TextParts([])), document)
        elif kind == "TOOL_CALL_END":
            self.ended[document.get("toolCallId")] = event
        elif kind == "RAW":
            inner = document.get("event")
            if isinstance(inner, Mapping) and inner.get("type") in self.known_types:
                yield ("raw-wraps-typed-event",
                       f"RAW wraps a {inner['type']} event, which could be sent as itself",
                       "/event", event)  # fmt: skip
        elif kind == "MESSAGES_SNAPSHOT":
            yield from self._renames(document, event)
        elif kind in _RUN_ENDS:
            yield from self.run_ended()
        self._learn(kind, document)

    def run_ended(self) -> Iterator[Hint]:
        """The hints about the calls ended in the run, each at its last TOOL_CALL_END:
        once the run (or the stream) ends, no call of it can be reopened."""
        for call_id, end in self.ended.items():
            arguments = self.arguments.get(call_id)
            text = "" if arguments is None else arguments.text()
            if text and not _parses(text):
                yield ("tool-arguments-not-json",
                       f"the arguments of tool call {call_id!r} do not parse as JSON: "
                       f"{text[:80]!r}", "", end)  # fmt: skip
        self.arguments.clear()
        self.ended.clear()

    def _near_miss(self, kind: str) -> str | None:
        if not kind:
            return None
        wanted = kind.upper().replace("-", "_").replace(" ", "_")
        if wanted in self.known_types:
            return wanted
        close = difflib.get_close_matches(wanted, self.sorted_types, n=1, cutoff=0.8)
        return close[0] if close else None

    def _learn(self, kind: str, document: Mapping[str, Any]) -> None:
        if kind == "RUN_STARTED":
            self.streamed = ""
        elif kind == "TEXT_MESSAGE_START" and document.get("role", "assistant") == "assistant":
            self.streamed = str(document.get("messageId"))
        if kind == "MESSAGES_SNAPSHOT":
            for message in document.get("messages") or ():
                if isinstance(message, Mapping) and isinstance(message.get("id"), str):
                    self._know(message["id"], message.get("role"), message.get("content"))
            return
        message_id = document.get("parentMessageId" if kind == "TOOL_CALL_START" else "messageId")
        if not isinstance(message_id, str):
            return
        if kind in _STREAMED_ROLES:  # a streamed message: its content is known at its end
            if message_id not in self.messages:
                self._know(message_id, document.get("role", _STREAMED_ROLES[kind]), None)
            if self.messages[message_id][1] is None and message_id not in self.texts:
                self.texts[message_id] = TextParts([])
        elif kind in _STREAMED_TEXT and message_id in self.texts:
            _grow(self.texts[message_id], document)
        elif kind in _STREAMED_ENDS and message_id in self.texts:
            self._know(message_id, self.messages[message_id][0], self.texts[message_id].text())
        elif message_id in self.messages:
            return  # a tool call or result names a message anew: the first one stands
        elif kind == "TOOL_CALL_START":  # the message that carries the call: no content to tell
            self._know(message_id, "assistant", None)
        elif kind == "TOOL_CALL_RESULT":
            self._know(message_id, "tool", document.get("content"))

    def _know(self, message_id: str, role: Any, content: Any) -> None:
        """Learn a message's role and content (None: not known yet), in ``holders`` too."""
        known = self.messages.get(message_id)
        if known is not None and known[1] is not None:
            holder = self.holders[known]
            del holder[message_id]
            if not holder:
                del self.holders[known]
        key = self.messages[message_id] = (_hashable(role), _hashable(content))
        if key[1] is not None:
            self.holders.setdefault(key, {})[message_id] = None

    def _renames(self, document: Mapping[str, Any], event: ReportEvent) -> Iterator[Hint]:
        snapshot = [m for m in document.get("messages") or () if isinstance(m, Mapping)]
        ids = {m.get("id") for m in snapshot}
        renamed: dict[tuple[Any, Any], str | None] = {}  # each key looked up once a snapshot
        for position, message in enumerate(snapshot):
            if message.get("id") in self.messages:
                continue
            key = (_hashable(message.get("role")), _hashable(message.get("content")))
            if key not in renamed:  # the latest holder the snapshot does not keep
                holders = reversed(self.holders.get(key, {}))
                renamed[key] = next((i for i in holders if i not in ids), None)
            earlier = renamed[key]
            if earlier is not None:
                yield ("snapshot-renames-messages",
                       f"the snapshot gives message {earlier!r} the new id "
                       f"{message.get('id')!r}", f"/messages/{position}/id", event)  # fmt: skip


_RUN_ENDS = frozenset({"RUN_FINISHED", "RUN_ERROR"})
# The events that stream a message's text, by the role a start without one gives
_STREAMED_ROLES = {"TEXT_MESSAGE_START": "assistant", "REASONING_MESSAGE_START": "reasoning"}
_STREAMED_TEXT = frozenset({"TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT"})
_STREAMED_ENDS = frozenset({"TEXT_MESSAGE_END", "REASONING_MESSAGE_END"})


def _grow(text: TextParts, document: Mapping[str, Any]) -> None:
    text.append(str(document.get("delta", "")))
    text.compact()


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, type(None))) else repr(value)


def _parses(text: str) -> bool:
    try:
        msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):
        return False
    return True


def _input_messages(input: Any) -> list[Any]:
    if input is None:
        return []
    try:  # JSON text, a dict, a Struct or an official model, as the consumer reads it
        document = decode_document(input, 0)
    except (MalformedEvent, RecursionError):
        return []  # the consumer says what is wrong with it
    messages = document.get("messages") if isinstance(document, Mapping) else None
    return list(messages) if isinstance(messages, list) else []
