"""The reducer's own containers: each a ``list`` or ``dict`` subclass, which mypyc cannot
compile as a native class, so they live here and ``reduce.py`` compiles (``hatch_build.py``).
"""

from __future__ import annotations

from typing import Any


class MergedMetadata(dict[str, Any]):
    """Metadata the reducer merged, so its own to update in place: a merge costs the
    incoming keys, not the whole map. What an event or the input brought is copied first."""

    __slots__ = ()


COMPACT_PARTS = 128
"""Deltas an open text holds as they came before they are joined into one string: a string
object per 2-character delta costs about 30 times its text; one per 128 about 1.3 times."""


class TextParts(list[str]):
    """A text as the parts streamed into it, joined when read. The parts from ``tail`` on
    came since the item was last (re)opened: closing it joins those, not the whole text.
    The parts from ``joined`` on are deltas as they came, which :meth:`compact` joins."""

    __slots__ = ("joined", "tail")

    def __init__(self, parts: list[str]) -> None:
        self.extend(parts)  # not super().__init__: a call less on every item opened
        self.tail = self.joined = len(parts)

    def compact(self) -> None:
        """Join the newest deltas into one part, so an open text held unread costs about its
        length; each delta is copied once this way, and once more when the text is read."""
        if len(self) - self.joined >= COMPACT_PARTS:
            self[self.joined :] = ["".join(self[self.joined :])]
            self.joined = len(self)

    def reopen(self) -> None:
        self.tail = self.joined = len(self)

    def text(self) -> str:
        if len(self) > 1:
            self[:] = ["".join(self)]
            self.tail, self.joined = 0, 1
        return self[0] if self else ""

    def close(self) -> bool:
        """Join what came since the item opened; True if the whole text is now one part
        (it is, when what came is at least as long as what was there)."""
        if len(self) - self.tail > 1:
            self[self.tail :] = ["".join(self[self.tail :])]
        if len(self) == 2 and len(self[0]) <= len(self[1]):
            self[:] = ["".join(self)]
        self.reopen()
        return len(self) == 1


class MessageList(list[Any]):
    """``Consumer.messages``: the reducer's own list, live and read-only to the application,
    so a read costs O(1) however long the conversation (``list(...)`` keeps a moment)."""

    __slots__ = ()

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("Consumer.messages is read-only: copy it with list() to change it")

    append = extend = insert = remove = pop = clear = sort = reverse = _read_only
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
