"""The warnings a stream leaves: bounded in count and length, repeats collapsed.

A hostile or merely chatty producer can make a warning per event; what is kept
must not grow with the stream. The same kind of warning on the same path within
a run is kept once, with a count (the ``on_warning`` callback still sees each).
A warning is one line: a control character in a name it quotes is shown escaped, as a
warning goes to logs (``on_warning=logger.warning``) that a stream must not write lines in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agui_msgspec._errors import checked_bound, checked_callback, inert

DEFAULT_MAX_WARNINGS = 1000
"""Distinct warnings kept per stream; past it, one summary line counts the rest."""
MAX_WARNING_LENGTH = 1000
"""Characters kept of one warning; a longer one (a huge property name, say) is cut."""


def cut(message: str) -> str:
    """``message``, cut to :data:`MAX_WARNING_LENGTH` characters."""
    if len(message) <= MAX_WARNING_LENGTH:
        return message
    return message[: MAX_WARNING_LENGTH - 1] + "\u2026"


def told(on_warning: Callable[[str], None] | None) -> Callable[[str], None]:
    """What a stage warns with where no :class:`WarningLog` keeps the warnings: each one said
    to ``on_warning`` (checked: a callable or None) as one line, or to no one."""
    checked_callback("on_warning=", on_warning)
    if on_warning is None:
        return _ignore
    return lambda message: on_warning(inert(message))


def _ignore(_message: str) -> None:
    pass


def _split(message: str) -> tuple[str, str]:
    """The warning's "event N" prefix (empty if it has none), and the rest: its kind and path."""
    if not message.startswith("event "):
        return "", message
    rest = message[6:].lstrip("0123456789")  # in C: a loop here costs more than the rest
    return message[: len(message) - len(rest)], rest


class _Seen:
    """A kept warning: where it is in the list, its first text, how many times it came."""

    __slots__ = ("count", "first", "position")

    def __init__(self, position: int, first: str) -> None:
        self.position, self.first, self.count = position, first, 1


class WarningLog:
    """The kept warnings, in :attr:`kept`, a list the caller may hand out as it grows.

    :meth:`warn` is what the stages are given to warn with: the log, not the consumer, so
    a consumer and its stages form no reference cycle and a dropped one is freed at once.
    """

    def __init__(
        self,
        max_warnings: object = DEFAULT_MAX_WARNINGS,  # object: checked_bound says what is wrong
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self.max_warnings: int = checked_bound("max_warnings", max_warnings)
        checked_callback("on_warning=", on_warning)
        self.on_warning = on_warning
        self.run: int = 0
        """The number of the run warnings are said in: 0 before the first."""
        self.kept: list[str] = []
        self._seen: dict[tuple[int, str], _Seen] = {}  # by (run, kind)
        self._not_kept = 0
        # The warnings about the latest event, which may turn out to start a new run: its
        # "event N" prefix and (message, kind, the kept warning it made or repeated, whether
        # it made it). All were said in the current run.
        self._latest_event = ""
        self._latest: list[tuple[str, str, _Seen | None, bool]] = []

    def warn(self, message: str) -> None:
        """Say ``message``: cut, kept as a warning of the current run, and passed on."""
        message = cut(inert(message))
        event, kind = _split(message)
        self._say(message, event, kind)

    def warn_about(self, index: int, detail: str) -> None:
        """``warn(f"event {index}{detail}")`` for a ``detail`` that starts with neither a digit
        nor a letter, without finding the event number again (a warning per event is the
        path of a producer one version ahead)."""
        event = f"event {index}"
        detail = inert(detail)
        message = event + detail
        if len(message) > MAX_WARNING_LENGTH:  # cut first: the kind is what is left of it
            self.warn(message)
        else:
            self._say(message, event, detail)

    def warn_each(self, index: int, count: int, details: Sequence[str]) -> None:
        """``warn_about`` each of ``details`` about each of ``count`` events from ``index`` on,
        in that order. With no ``on_warning`` to tell each, the events between the first and
        the last are only counted: they repeat the first's warnings within one run."""
        said = [inert(detail) for detail in details]  # as warn_about keys them
        longest = len(f"event {index + count}") + max(map(len, said), default=0)
        if self.on_warning is not None or count < 3 or longest > MAX_WARNING_LENGTH:
            for event in range(index, index + count):
                for detail in details:
                    self.warn_about(event, detail)
            return
        for detail in details:
            self.warn_about(index, detail)
        for detail in said:
            self._repeat(detail, count - 2)
        for detail in details:
            self.warn_about(index + count - 1, detail)

    def _repeat(self, detail: str, times: int) -> None:
        """What ``times`` more of the warning just said about ``detail`` would leave."""
        seen = self._seen.get((self.run, detail))
        if seen is not None:
            seen.count += times
        else:  # past the bound: each would be one more not kept
            self._not_kept += times

    def _say(self, message: str, event: str, kind: str) -> None:
        if event != self._latest_event:
            self._latest_event, self._latest = event, []
        seen = self._keep(message, (self.run, kind))
        if len(self._latest) < self.max_warnings:  # past it, the rest stay with the earlier run
            self._latest.append((message, kind, seen, seen is not None and seen.count == 1))
        if self.on_warning is not None:
            self.on_warning(message)

    def run_started(self, index: int, run: int) -> None:
        """Event ``index`` started run number ``run``, which later warnings are said in; the
        warnings about the event, said while it was still decoding, belong to it too."""
        earlier_run, self.run = self.run, run
        if self._latest_event != f"event {index}" or earlier_run == run:
            return
        latest, self._latest = self._latest, []
        made_here = [seen for *_, seen, made in latest if made]
        for message, kind, seen, made in latest:
            if seen is None:
                continue
            if made:  # the same line, under the new run
                del self._seen[(earlier_run, kind)]
                self._seen[(run, kind)] = seen
            elif not any(seen is own for own in made_here):  # it repeated an earlier run's
                seen.count -= 1
                self._show(seen)
                self._keep(message, (run, kind))

    def _keep(self, message: str, key: tuple[int, str]) -> _Seen | None:
        """Keep ``message`` under ``key``, or count it as a repeat; the kept warning it made or
        repeated, None once the bound is reached."""
        seen = self._seen.get(key)
        if seen is not None:
            seen.count += 1
            self._show(seen)
            return seen
        if len(self._seen) < self.max_warnings:
            seen = self._seen[key] = _Seen(len(self.kept), message)
            self.kept.append(message)
            return seen
        self._not_kept += 1
        summary = f"{self._not_kept} more warnings not kept (max_warnings={self.max_warnings})"
        if self._not_kept == 1:
            self.kept.append(summary)
        else:
            self.kept[-1] = summary
        return None

    def _show(self, seen: _Seen) -> None:
        """Write a kept warning's line: its first text, and how often it came if more than once."""
        repeats = f" ({seen.count} times in this run)" if seen.count > 1 else ""
        self.kept[seen.position] = seen.first + repeats
