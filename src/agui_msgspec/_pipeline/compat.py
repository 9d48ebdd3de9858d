"""The compatibility boundary (spec: basic/versioning, retired shapes).

The first stage: shapes that earlier protocol versions sent and 1.x retired are
translated into their current form, each with a warning, before enforcement
judges them. Registered here (upstream's DEPRECATIONS.md lists them):

- the ``THINKING_*`` events, retired for the reasoning family;
- ``null`` where older producers meant "absent", on the optional fields the
  registry lists, in events, in ``RUN_STARTED.input`` and in the input a run
  starts from;
- the ``{"type": "binary"}`` content part, upgraded to the media part its
  ``mimeType`` names, with a ``url``, ``data`` or ``file`` source.

Everything this stage changes is something the strict decoder rejects (a
retired ``type``, a ``null`` on a typed field, an unknown part), so conformant
payloads, which pass the fast path, never need it: the consumer runs it at the
head of the slow path, and on every payload only when middleware asks for
documents or a peer's era needs a shim on every event.

Era shims, for a peer known to speak an older version (``peer_version``):

- up to 0.0.57 (before subagents): its ``SUBAGENT_*`` events are dropped with a
  warning, and ``subagentRunId`` is removed from what it sends and, outgoing,
  from its input's messages (``downgrade_for_peer``);
- up to 0.0.39 (before content parts): outgoing message content is flattened
  to text, with a warning when a part is lost (``downgrade_for_peer``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agui_msgspec._errors import UsageError, wrong_type
from agui_msgspec._versions import ProtocolVersion, parse_version

Warn = Callable[[str], None]

# retired type → (current type, the id it needs: "span" or "message", or None)
_THINKING: dict[str, tuple[str, str | None]] = {
    "THINKING_START": ("REASONING_START", "span"),
    "THINKING_END": ("REASONING_END", "span"),
    "THINKING_TEXT_MESSAGE_START": ("REASONING_MESSAGE_START", "message"),
    "THINKING_TEXT_MESSAGE_CONTENT": ("REASONING_MESSAGE_CONTENT", "message"),
    "THINKING_TEXT_MESSAGE_END": ("REASONING_MESSAGE_END", "message"),
}
# What a retired event carried that its replacement has no field for.
_THINKING_DROPS = ("title",)

# event type → optional properties that older producers sent as null to mean "absent"
LEGACY_NULLS: dict[str, tuple[str, ...]] = {
    "TOOL_CALL_START": ("parentMessageId",),
    "TOOL_CALL_CHUNK": ("parentMessageId",),
    "RUN_FINISHED": ("outcome", "result"),
    "SUBAGENT_FINISHED": ("result",),
}
DROPPED: Any = object()
"""What ``translate`` returns for an event an era shim drops (with a warning)."""
RAW_EVENT = "rawEvent"
"""Every event's optional ``rawEvent``: a legacy null there is read as absent too."""
# Events that carry messages or content parts, where nulls and binary parts are translated.
_CARRIERS = ("RUN_STARTED", "MESSAGES_SNAPSHOT", "TOOL_CALL_RESULT")
TRANSLATED_TYPES = frozenset((*_THINKING, *LEGACY_NULLS, *_CARRIERS))
"""The event types this stage may change (besides a null ``rawEvent`` on any event): a
document of any other type passes untouched."""


def needs_translation(document: dict[str, Any]) -> bool:
    """Whether this stage may change ``document``: one of :data:`TRANSLATED_TYPES`, or any
    event with a null ``rawEvent``; any other passes untouched, so need not be offered."""
    event_type = document.get("type")
    return (isinstance(event_type, str) and event_type in TRANSLATED_TYPES) or (
        RAW_EVENT in document and document[RAW_EVENT] is None
    )


_MEDIA_PARTS = ("image", "audio", "video", "document")
# a retired binary part's member → the source it becomes, in order of preference
_BINARY_SOURCES = (("url", "url"), ("data", "data"), ("id", "file"))
_BINARY_MEMBERS = frozenset({"type", "mimeType", "url", "data", "id", "filename"})
_SUBAGENT_EVENTS = frozenset({"SUBAGENT_STARTED", "SUBAGENT_FINISHED", "SUBAGENT_ERROR"})
_SUBAGENTS_SINCE = ProtocolVersion("0", "0", "58")  # the first version after the 0.0.57 era
_PARTS_SINCE = ProtocolVersion("0", "0", "40")  # the first version after the 0.0.39 era


def read_peer_version(peer_version: str) -> ProtocolVersion:
    """The version a peer is known to speak (``"0.0.39"``, ``"1.1"``); raises UsageError
    for one that is not MAJOR.MINOR or MAJOR.MINOR.PATCH."""
    if not isinstance(peer_version, str):
        raise wrong_type("peer_version=", peer_version, "a version string")
    version = parse_version(peer_version, "peer")
    if version is None:
        raise UsageError(f"peer_version {peer_version!r} is not MAJOR.MINOR or MAJOR.MINOR.PATCH")
    return version


class Compatibility:
    """Translates retired shapes in generic event documents, with a warning each."""

    def __init__(self, warn: Warn, peer_version: str | None = None) -> None:
        self._warn = warn
        peer = None if peer_version is None else read_peer_version(peer_version)
        self._peer_version = peer_version
        self._drops_subagents = peer is not None and peer < _SUBAGENTS_SINCE
        self._stripped_attribution = False
        self.run_id = ""
        """The run in progress (the consumer sets it at RUN_STARTED): minted ids carry it."""
        self._thinking_spans = 0
        self._span_id: str | None = None
        self._message_id: str | None = None

    @property
    def every_event(self) -> bool:
        """Whether an era shim must see every event, not only those the strict decoder rejects."""
        return self._drops_subagents

    def translate(self, document: Any, index: int) -> Any:
        """The document in its current form, or DROPPED for an event an era shim drops."""
        if not isinstance(document, dict):
            return document
        event_type = document.get("type")
        if not isinstance(event_type, str):
            return document
        if self._drops_subagents and not self._strip_subagents(document, event_type, index):
            return DROPPED
        if event_type in _THINKING:
            document = self._thinking(document, event_type, index)
        origin, warn = f"event {index}", self._warn
        _read_nulls(document, (RAW_EVENT, *LEGACY_NULLS.get(event_type, ())), origin, "", warn)
        if event_type == "RUN_STARTED" and isinstance(document.get("input"), dict):
            translate_input(document["input"], warn, origin, "/input")
        elif event_type == "MESSAGES_SNAPSHOT":
            _translate_messages(document.get("messages"), origin, "/messages", warn)
        elif event_type == "TOOL_CALL_RESULT":
            _translate_parts(document.get("content"), origin, "/content", warn)
        return document

    def _strip_subagents(self, document: dict[str, Any], event_type: str, index: int) -> bool:
        """The 0.0.57 shim: False for an event to drop; else removes attribution in place."""
        if event_type in _SUBAGENT_EVENTS:
            self._warn(
                f"event {index}: dropping {event_type}: the peer speaks {self._peer_version}, "
                "from before subagents, and its subagent lifecycle is not kept"
            )
            return False
        holders = [document]
        if event_type == "MESSAGES_SNAPSHOT":
            holders += _dicts(document.get("messages"))
        elif event_type == "RUN_STARTED" and isinstance(document.get("input"), dict):
            holders += _dicts(document["input"].get("messages"))
        elif event_type == "RUN_FINISHED" and isinstance(document.get("outcome"), dict):
            holders += _dicts(document["outcome"].get("interrupts"))
        stripped = [holder.pop("subagentRunId") for holder in holders if "subagentRunId" in holder]
        if stripped and not self._stripped_attribution:
            self._stripped_attribution = True  # once: the same loss on every event says nothing new
            self._warn(
                f"event {index}: removing subagentRunId: the peer speaks {self._peer_version}, "
                "from before subagents"
            )
        return True

    def _thinking(self, document: dict[str, Any], retired: str, index: int) -> dict[str, Any]:
        current, id_kind = _THINKING[retired]
        # The retired shapes carry no messageId: one there is the producer's own material,
        # stripped as any unrecognised property is, so the events pair by the ids minted here.
        if "messageId" in document:
            self._warn(
                f"event {index} /messageId: removed unrecognised property "
                f"(the retired {retired} has none)"
            )
        translated = {
            key: value
            for key, value in document.items()
            if key not in _THINKING_DROPS and key != "messageId"
        }
        translated["type"] = current
        # Minted ids carry the run's id, so no two runs of a thread mint the same one.
        if retired == "THINKING_START":
            self._thinking_spans += 1
            self._span_id = f"thinking-{self.run_id}-{self._thinking_spans}"
        elif retired == "THINKING_TEXT_MESSAGE_START":
            self._message_id = f"thinking-{self.run_id}-message-{index}"
        item_id = self._span_id if id_kind == "span" else self._message_id
        translated["messageId"] = item_id or f"thinking-{self.run_id}-{index}"
        if current == "REASONING_MESSAGE_START":
            translated["role"] = "reasoning"
        lost = [f"{key} {document[key]!r}" for key in _THINKING_DROPS if key in document]
        dropped = f"; dropped its {', '.join(lost)}" if lost else ""
        self._warn(f"event {index}: translated retired {retired} to {current}{dropped}")
        return translated


def translate_input(
    document: dict[str, Any],
    warn: Warn,
    origin: str = "input",
    path: str = "",
    *,
    own: bool = False,
) -> None:
    """A ``RunAgentInput`` document's retired shapes, in place: its legacy nulls, and those of
    its tools, resume entries and messages. Warnings name ``origin`` and the JSON Pointer.

    ``own``: the consumer's own input, whose binary parts are upgraded without a warning,
    as the upgrade loses nothing (DEPRECATIONS.md: outbound, only lossy conversions warn).
    """
    _read_nulls(document, ("forwardedProps",), origin, path, warn)
    for position, entry in _entries(document.get("tools")):
        _read_nulls(entry, ("parameters",), origin, f"{path}/tools/{position}", warn)
    for position, entry in _entries(document.get("resume")):
        _read_nulls(entry, ("payload",), origin, f"{path}/resume/{position}", warn)
    announce = _silent if own else warn
    for position, message in _entries(document.get("messages")):
        where = f"{path}/messages/{position}/content"
        _translate_parts(message.get("content"), origin, where, warn, announce)


def translate_message(document: dict[str, Any], warn: Warn, origin: str = "message") -> None:
    """One message document's retired shapes, in place: its binary content parts upgraded."""
    _translate_parts(document.get("content"), origin, "/content", warn)


def downgrade_for_peer(document: dict[str, Any], peer_version: str, warn: Warn) -> None:
    """The era shims for outgoing input, in place. A peer from before subagents (0.0.57)
    gets no ``subagentRunId`` on its messages; one from before content parts (0.0.39) gets
    each message's text parts joined into a string. A loss is announced, never replaced."""
    peer = read_peer_version(peer_version)
    if peer < _SUBAGENTS_SINCE:
        stripped = [m for _, m in _entries(document.get("messages")) if "subagentRunId" in m]
        for message in stripped:
            del message["subagentRunId"]
        if stripped:
            warn(
                f"input /messages: the peer speaks {peer_version}, from before subagents; "
                f"removed subagentRunId from {len(stripped)} message(s)"
            )
    if peer >= _PARTS_SINCE:
        return
    for position, message in _entries(document.get("messages")):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        texts = [part.get("text") for part in _dicts(content) if part.get("type") == "text"]
        message["content"] = "".join(text for text in texts if isinstance(text, str))
        lost = [part.get("type") if isinstance(part, dict) else part for part in content]
        lost = [kind for kind in lost if kind != "text"]
        if lost:
            warn(
                f"input /messages/{position}/content: the peer speaks {peer_version}, from "
                f"before content parts; flattening to text DROPS non-text parts ({lost})"
            )


def _translate_messages(messages: Any, origin: str, path: str, warn: Warn) -> None:
    for position, message in _entries(messages):
        _translate_parts(message.get("content"), origin, f"{path}/{position}/content", warn)


def _silent(_message: str) -> None:
    pass


def _translate_parts(
    content: Any, origin: str, path: str, warn: Warn, announce: Warn | None = None
) -> None:
    """Parts in place: legacy null metadata read as absent (``warn``), binary parts upgraded
    (``announce``, by default ``warn`` too)."""
    if not isinstance(content, list):
        return
    for position, part in _entries(content):
        if part.get("type") in _MEDIA_PARTS:
            _read_nulls(part, ("metadata",), origin, f"{path}/{position}", warn)
        elif part.get("type") == "binary":
            content[position] = upgraded = _upgraded_binary(part)
            kind = upgraded["type"]
            (announce or warn)(
                f"{origin} {path}/{position}: upgraded retired binary part to {kind!r}"
            )


def _upgraded_binary(part: dict[str, Any]) -> dict[str, Any]:
    """A ``{type: "binary", mimeType, url | data | id, filename?}`` part as the media part its
    mimeType names. Values are carried as they are, never repaired (basic/versioning): a
    malformed or missing one is enforcement's to reject, in the upgraded part."""
    mime_type = part.get("mimeType")
    # media types ignore case
    family = mime_type.partition("/")[0].strip().lower() if isinstance(mime_type, str) else ""
    upgraded: dict[str, Any] = {
        key: value for key, value in part.items() if key not in _BINARY_MEMBERS
    }  # members the binary shape never had: enforcement strips them, with a warning
    upgraded["type"] = family if family in ("image", "audio", "video") else "document"
    found = next(((key, kind) for key, kind in _BINARY_SOURCES if key in part), None)
    if found is not None:  # else the part has no source: malformed then and now
        key, source_type = found
        # the binary shape required mimeType: an absent one goes on as null, to be rejected
        upgraded["source"] = {"type": source_type, "value": part[key], "mimeType": mime_type}
    if "filename" in part:
        upgraded["metadata"] = {"filename": part["filename"]}
    return upgraded


def _read_nulls(
    holder: dict[str, Any], props: tuple[str, ...], origin: str, path: str, warn: Warn
) -> None:
    for prop in props:
        if prop in holder and holder[prop] is None:
            del holder[prop]
            warn(f"{origin} {path}/{prop}: legacy null read as absent")


def _entries(items: Any) -> list[tuple[int, dict[str, Any]]]:
    if not isinstance(items, list):
        return []
    return [(position, item) for position, item in enumerate(items) if isinstance(item, dict)]


def _dicts(items: Any) -> list[dict[str, Any]]:
    return [item for _, item in _entries(items)]
