"""The warnings a stream leaves: bounded in count and length, repeats collapsed.

A hostile or merely chatty producer can make a warning per event; what is kept
must not grow with the stream. The same kind of warning on the same path within
a run is kept once, with a count (the ``on_warning`` callback still sees each).
"""

from __future__ import annotations

DEFAULT_MAX_WARNINGS = 1000
"""Distinct warnings kept per stream; past it, one summary line counts the rest."""
MAX_WARNING_LENGTH = 1000
"""Characters kept of one warning; a longer one (a huge property name, say) is cut."""


def cut(message: str) -> str:
    """``message``, cut to :data:`MAX_WARNING_LENGTH` characters."""
    if len(message) <= MAX_WARNING_LENGTH:
        return message
    return message[: MAX_WARNING_LENGTH - 1] + "\u2026"


def _kind(message: str) -> str:
    """The warning without its "event N" prefix: its kind and path."""
    if not message.startswith("event "):
        return message
    end = 6
    while end < len(message) and "0" <= message[end] <= "9":
        end += 1
    return message[end:]


class _Seen:
    """A kept warning: where it is in the list, its first text, how many times it came."""

    __slots__ = ("count", "first", "position")

    def __init__(self, position: int, first: str) -> None:
        self.position, self.first, self.count = position, first, 1


class WarningLog:
    """The kept warnings, in :attr:`kept`, a list the caller may hand out as it grows."""

    def __init__(self, max_warnings: int = DEFAULT_MAX_WARNINGS) -> None:
        self.max_warnings = max_warnings
        self.kept: list[str] = []
        self._seen: dict[tuple[int, str], _Seen] = {}  # by (run, kind)
        self._not_kept = 0

    def add(self, message: str, run: int) -> None:
        """Keep ``message`` (already :func:`cut`) as a warning of run number ``run``."""
        key = (run, _kind(message))
        seen = self._seen.get(key)
        if seen is not None:
            seen.count += 1
            self.kept[seen.position] = f"{seen.first} ({seen.count} times in this run)"
            return
        if len(self._seen) < self.max_warnings:
            self._seen[key] = _Seen(len(self.kept), message)
            self.kept.append(message)
            return
        self._not_kept += 1
        summary = f"{self._not_kept} more warnings not kept (max_warnings={self.max_warnings})"
        if self._not_kept == 1:
            self.kept.append(summary)
        else:
            self.kept[-1] = summary
