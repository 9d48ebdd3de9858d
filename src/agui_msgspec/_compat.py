"""The compatibility boundary (spec: basic/versioning, retired shapes).

The first stage: shapes that earlier protocol versions sent and 1.x retired are
translated into their current form, each with a warning, before enforcement
judges them. Registered here:

- the ``THINKING_*`` events, retired for the reasoning family;
- legacy ``null`` values that upstream clients translate to "absent".

Everything this stage changes is something the strict decoder rejects (a
retired ``type``, a ``null`` on a typed field), so conformant payloads, which
pass the fast path, never need it: the consumer runs it at the head of the slow
path, and on every payload only when middleware asks for documents.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
    "RUN_FINISHED": ("outcome",),
}
TRANSLATED_TYPES = frozenset((*_THINKING, *LEGACY_NULLS))
"""The event types this stage may change: a document of any other type passes untouched."""


class Compatibility:
    """Translates retired shapes in generic event documents, with a warning each."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self._warn = warn
        self._thinking_runs = 0
        self._span_id: str | None = None
        self._message_id: str | None = None

    def translate(self, document: Any, index: int) -> Any:
        if not isinstance(document, dict):
            return document
        event_type = document.get("type")
        if isinstance(event_type, str) and event_type in _THINKING:
            return self._thinking(document, event_type, index)
        for prop in LEGACY_NULLS.get(event_type, ()) if isinstance(event_type, str) else ():
            if prop in document and document[prop] is None:
                del document[prop]
                self._warn(f"event {index} /{prop}: legacy null on {event_type} read as absent")
        return document

    def _thinking(self, document: dict[str, Any], retired: str, index: int) -> dict[str, Any]:
        current, id_kind = _THINKING[retired]
        translated = {key: value for key, value in document.items() if key not in _THINKING_DROPS}
        translated["type"] = current
        if retired == "THINKING_START":
            self._thinking_runs += 1
            self._span_id = f"thinking-{self._thinking_runs}"
        elif retired == "THINKING_TEXT_MESSAGE_START":
            self._message_id = f"{self._span_id or 'thinking'}-message-{index}"
        item_id = self._span_id if id_kind == "span" else self._message_id
        translated.setdefault("messageId", item_id or f"thinking-{index}")
        if current == "REASONING_MESSAGE_START":
            translated["role"] = "reasoning"
        lost = [f"{key} {document[key]!r}" for key in _THINKING_DROPS if key in document]
        dropped = f"; dropped its {', '.join(lost)}" if lost else ""
        self._warn(f"event {index}: translated retired {retired} to {current}{dropped}")
        return translated
