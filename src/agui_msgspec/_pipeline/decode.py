"""The tolerant decode: a payload in, the version's typed event (or nothing) out.

Exactly the consumer-side enforcement the specification requires (basic/processing,
basic/versioning) and nothing after it: what the version does not recognise is
removed with a warning naming its JSON Pointer (an unknown property or union member,
an unknown value of a closed set, an unknown outcome), an event of an unknown type is
dropped, a retired shape is translated into its current form, and a malformed known
value raises :class:`MalformedEvent` with its rule, path and event index. There is no
run lifecycle (a lone ``TEXT_MESSAGE_CONTENT`` decodes), no reducer, and no chunk
expansion: a ``*_CHUNK`` event comes back as the typed chunk event it is.

:class:`Consumer` decodes through a :class:`Decoder`, so the two never disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, overload

import msgspec

from agui_msgspec._documents import Payload, decode_document, encode_document
from agui_msgspec._errors import (
    MalformedEvent,
    UsageError,
    checked_bound,
    too_deep,
    wrong_type,
)
from agui_msgspec._json import json_kind, pointer_from_msgspec
from agui_msgspec._pipeline.compat import DROPPED, Compatibility, translate_message
from agui_msgspec._pipeline.enforce import Enforcer
from agui_msgspec._pipeline.warnings import DEFAULT_MAX_WARNINGS, WarningLog, told
from agui_msgspec._versions import LATEST_VERSION, Bindings, VersionLike, bindings_for

if TYPE_CHECKING:
    from typing_extensions import TypeVar

    from agui_msgspec import v1_0, v1_1

    # Defaulted to the newest version's, as ``Decoder()`` and ``Consumer()`` make: a bare
    # annotation means those; the runtime's TypeVar takes no default before Python 3.13.
    EventT = TypeVar("EventT", default=v1_1.Event)
    MessageT = TypeVar("MessageT", bound="Identified", default=v1_1.Message)
    # What a version known only at run time (a ``str``) gives: either shipped version's.
    EventOfEither = v1_1.Event | v1_0.Event
    MessageOfEither = v1_1.Message | v1_0.Message
else:
    from typing import TypeVar

    EventT = TypeVar("EventT")
    MessageT = TypeVar("MessageT", bound="Identified")


class Identified(Protocol):
    """A message of any version: each has its id."""

    @property
    def id(self) -> str: ...


Repeats = tuple[int, int, list[str]]
"""Warnings left to say: each detail about each of ``count`` events from ``index`` on."""

Middleware = Callable[[dict[str, Any], int], dict[str, Any] | None]
"""A stage before enforcement: gets each event as a wire-named dict and its index,
returns the (possibly changed) dict, or None to drop the event."""


class Decoder(Generic[EventT]):
    """The tolerant decode for one stream of payloads, in order.

    ``version`` is the protocol version (``"1.1"``, ``"1.0"``) or generated bindings;
    :meth:`decode` returns that version's event union (``v1_1.Event`` for the default, both
    versions' for a ``str`` known only at run time).
    ``on_warning`` is called with each warning as it happens; they are also kept in
    :attr:`warnings`, at most ``max_warnings`` distinct ones (then one line counts the
    rest). ``peer_version`` is that of a producer known to speak an older protocol
    (``"0.0.57"``): the era shims it needs run. ``middleware`` stages see each event as a
    wire-named dict after the compatibility boundary and before enforcement; with any, or
    with an era shim that must see every event, each payload costs a generic JSON decode
    on top of the typed one.

    A payload is JSON text (bytes, str), a wire-named dict, an event Struct or an official
    ``ag_ui.core`` model. A Struct of this version's own event classes is trusted as it
    is: it was typed when it was made.
    """

    @overload
    def __init__(
        self: Decoder[v1_1.Event],
        version: Literal["1.1"] = "1.1",
        on_warning: Callable[[str], None] | None = None,
        *,
        peer_version: str | None = None,
        max_warnings: int = DEFAULT_MAX_WARNINGS,
        middleware: Iterable[Middleware] = (),
    ) -> None: ...
    @overload
    def __init__(
        self: Decoder[v1_0.Event],
        version: Literal["1.0"],
        on_warning: Callable[[str], None] | None = None,
        *,
        peer_version: str | None = None,
        max_warnings: int = DEFAULT_MAX_WARNINGS,
        middleware: Iterable[Middleware] = (),
    ) -> None: ...
    @overload
    def __init__(
        self: Decoder[EventOfEither],
        version: str,
        on_warning: Callable[[str], None] | None = None,
        *,
        peer_version: str | None = None,
        max_warnings: int = DEFAULT_MAX_WARNINGS,
        middleware: Iterable[Middleware] = (),
    ) -> None: ...
    @overload
    def __init__(
        self: Decoder[Any],
        version: Bindings,
        on_warning: Callable[[str], None] | None = None,
        *,
        peer_version: str | None = None,
        max_warnings: int = DEFAULT_MAX_WARNINGS,
        middleware: Iterable[Middleware] = (),
    ) -> None: ...
    def __init__(
        self,
        version: VersionLike = LATEST_VERSION,
        on_warning: Callable[[str], None] | None = None,
        *,
        peer_version: str | None = None,
        max_warnings: int = DEFAULT_MAX_WARNINGS,
        middleware: Iterable[Middleware] = (),
    ) -> None:
        self.bindings: Bindings = bindings_for(version)
        self.warning_log: WarningLog = WarningLog(max_warnings, on_warning)
        """The bounded log behind :attr:`warnings` (a consumer says its own warnings there too)."""
        self.warnings: list[str] = self.warning_log.kept
        warn = self.warning_log.warn
        self._compat = Compatibility(warn, peer_version)
        self._middleware = _checked_middleware(middleware)
        # With middleware or an era shim, every event is a document the boundary sees first;
        # else the boundary runs on the slow path only.
        self._documents = bool(self._middleware) or self._compat.every_event
        translate = None if self._documents else self._compat.translate
        self._enforcer = Enforcer(self.bindings, warn, translate, self.warning_log.warn_about)
        self._run_started: type[msgspec.Struct] = self.bindings.RunStartedEvent
        self._index = 0

    @property
    def event_index(self) -> int:
        """The index the next payload gets: the payloads decoded so far, dropped ones included."""
        return self._index

    @property
    def slow_path_count(self) -> int:
        """Payloads that needed the slow path; conformant traffic leaves this at 0."""
        return self._enforcer.slow_path_count

    def decode(self, payload: Payload, index: int | None = None) -> EventT | None:
        """The typed event, or None for an event that was dropped (with a warning).

        ``index`` is the payload's position in its stream, which warnings and a
        ``MalformedEvent`` name (default: :attr:`event_index`); the next one follows it.
        """
        if index is None:
            index = self._index
        elif type(index) is not int or index < 0:
            checked_bound("index", index)
        self._index = index + 1  # counted before decoding: a callback may raise from in there
        try:
            if self._documents:
                document = self._before_enforcement(payload, index)
                event = None if document is None else self._enforcer.decode(document, index)
            else:
                event = self._enforcer.decode(payload, index)
        except RecursionError:
            raise too_deep(index) from None
        if type(event) is self._run_started:
            self._compat.run_id = event.run_id  # type: ignore[attr-defined]
        return event  # type: ignore[return-value]

    def decode_many(self, payloads: Iterable[Payload]) -> list[EventT]:
        """The typed events of ``payloads`` in order, those dropped left out; a list or tuple
        of conformant JSON text costs one strict decode per payload, in one call."""
        decode = self.decode
        if not isinstance(payloads, (list, tuple)):
            if not isinstance(payloads, Iterable):
                raise wrong_type("decode_many()", payloads, "an iterable of payloads")
            return [event for event in map(decode, payloads) if event is not None]
        taken: list[EventT] = []
        for batch, events, repeats in self._batches(payloads, max(len(payloads), 1)):
            if events is None:
                taken += [event for event in map(decode, batch) if event is not None]
                continue
            taken += events
            if repeats is not None:
                self.warning_log.warn_each(*repeats)
        return taken

    def _batches(
        self, payloads: Sequence[Payload], size: int
    ) -> Iterator[tuple[Sequence[Payload], list[EventT] | None, Repeats | None]]:
        """``payloads`` in slices of ``size``, each with its events if the batch decode took
        it (else None: decode it payload by payload) and its warnings left to say
        (:meth:`_decode_batch_deferring`). A slice the batch decode refuses before any payload
        told what a producer one version ahead adds (none has gone before, or the last was
        conformant) sends its first payload alone, then the rest: the caller takes the first
        through its stages before asking for the next (a consumer's run start moves its
        warnings to the run)."""
        for start in range(0, len(payloads), size):
            batch = payloads[start : start + size]
            first_alone = not (
                self._documents or self._enforcer.extras or self.warning_log.on_warning
            )
            decoded = self._decode_batch_deferring(batch)
            if decoded is None and first_alone and len(batch) > 1:
                yield batch[:1], None, None
                batch = batch[1:]
                decoded = self._decode_batch_deferring(batch)
            yield (batch, None, None) if decoded is None else (batch, *decoded)

    def decode_conformant(self, payloads: Sequence[Payload]) -> list[EventT] | None:
        """Every event of ``payloads`` if each is conformant as it stands (the strict decode
        alone takes it), and they are counted as decoded; else None, and nothing is."""
        payloads = _payload_sequence("decode_conformant()", payloads)
        if self._documents:
            return None
        decoded = self._enforcer.decode_conformant(payloads)
        if decoded is None:
            return None
        events, kinds = decoded
        self._index += len(events)
        run_started = self._run_started
        if run_started in kinds:  # the boundary mints ids with the run's id
            latest = next(event for event in reversed(events) if type(event) is run_started)
            self._compat.run_id = latest.run_id  # type: ignore[attr-defined]
        return events  # type: ignore[return-value]

    def decode_batch(self, payloads: Sequence[Payload]) -> list[EventT] | None:
        """:meth:`decode_conformant`, else, for a producer one version ahead, the batch whose
        only unrecognised material is the top-level properties the payload before had too
        (each removed with its warning); None: decode them one by one. With ``on_warning``
        the latter always, so the callback hears each warning in the order its event has
        the properties."""
        decoded = self._decode_batch_deferring(_payload_sequence("decode_batch()", payloads))
        if decoded is None:
            return None
        events, repeats = decoded
        if repeats is not None:
            self.warning_log.warn_each(*repeats)
        return events

    def _decode_batch_deferring(
        self, payloads: Sequence[Payload]
    ) -> tuple[list[EventT], Repeats | None] | None:
        """:meth:`decode_batch`, saying the warnings of a batch one version ahead for its first
        event only: the rest come back as ``(index, count, details)`` (``WarningLog.warn_each``'s
        arguments) for a caller that takes the events one at a time to say for those it took.
        A consumer that rejects an event says none for the events after it, as one by one."""
        events = self.decode_conformant(payloads)
        if events is not None:
            return events, None
        if self._documents or self.warning_log.on_warning is not None:
            return None
        decoded = self._enforcer.decode_with_extras(payloads)
        if decoded is None:
            return None
        taken, details = decoded
        index, count = self._index, len(taken)
        self._index += count
        self.warning_log.warn_each(index, 1, details)
        repeats = (index + 1, count - 1, details) if count > 1 else None
        return taken, repeats  # type: ignore[return-value]

    def _before_enforcement(self, payload: Payload, index: int) -> bytes | None:
        """Compatibility, then the middleware; the JSON bytes for enforcement, or None if dropped."""
        document = self._compat.translate(decode_document(payload, index), index)
        if document is DROPPED:  # an era shim dropped it, with a warning
            return None
        for stage in self._middleware:
            if not isinstance(document, dict):
                break
            document = stage(document, index)
            if document is None:
                return None
        return encode_document(document, index)  # anything but an object is not-an-object


@overload
def decode(
    payload: Payload,
    version: Literal["1.1"] = "1.1",
    on_warning: Callable[[str], None] | None = ...,
) -> v1_1.Event | None: ...
@overload
def decode(
    payload: Payload, version: Literal["1.0"], on_warning: Callable[[str], None] | None = ...
) -> v1_0.Event | None: ...
@overload
def decode(
    payload: Payload, version: str, on_warning: Callable[[str], None] | None = ...
) -> EventOfEither | None: ...
@overload
def decode(
    payload: Payload, version: Bindings, on_warning: Callable[[str], None] | None = ...
) -> Any: ...
def decode(
    payload: Payload,
    version: VersionLike = LATEST_VERSION,
    on_warning: Callable[[str], None] | None = None,
) -> Any:
    """One payload, decoded tolerantly as event 0 (see :class:`Decoder`): the typed event,
    or None for a dropped one. Warnings go to ``on_warning``."""
    return Decoder(version, on_warning).decode(payload)


@overload
def decode_message(
    message: Any, version: Literal["1.1"] = "1.1", on_warning: Callable[[str], None] | None = ...
) -> v1_1.Message | None: ...
@overload
def decode_message(
    message: Any, version: Literal["1.0"], on_warning: Callable[[str], None] | None = ...
) -> v1_0.Message | None: ...
@overload
def decode_message(
    message: Any, version: str, on_warning: Callable[[str], None] | None = ...
) -> MessageOfEither | None: ...
@overload
def decode_message(
    message: Any, version: Bindings, on_warning: Callable[[str], None] | None = ...
) -> Any: ...
def decode_message(
    message: Any,
    version: VersionLike = LATEST_VERSION,
    on_warning: Callable[[str], None] | None = None,
) -> Any:
    """One message (JSON text, a wire-named dict, a Struct or an official model) as this
    version's ``Message`` union, tolerantly: unknown material stripped with a warning, a
    retired binary part upgraded, None (with a warning) for a role the version does not
    know; a malformed known value raises ``MalformedEvent(rule="malformed-message")``."""
    bindings = bindings_for(version)
    warn = told(on_warning)
    try:
        document = decode_document(message, 0)
    except MalformedEvent as unreadable:
        raise _malformed_message(unreadable.detail) from None
    except RecursionError:
        raise _malformed_message("the message nests too deeply") from None
    if not isinstance(document, dict):
        raise _malformed_message(f"a message is a JSON object, got {json_kind(document)}")
    tag_field, members = bindings.UNIONS["Message"]
    tag = document.get(tag_field)
    struct = members.get(tag) if isinstance(tag, str) else None
    if struct is None:
        if isinstance(tag, str):
            warn(f"message: dropped message of unrecognised {tag_field} {tag!r}")
            return None
        raise _malformed_message(f"the message has no string `{tag_field}`", f"/{tag_field}")
    enforcer = Enforcer(bindings, warn)
    try:
        translate_message(document, warn, "message")
        cleaned = enforcer.clean(document, struct, "message")
        if not isinstance(cleaned, dict):
            warn(f"message: dropped {tag} message: {cleaned.reason}")
            return None
        return msgspec.convert(cleaned, struct)
    except RecursionError:
        raise _malformed_message("the message nests too deeply") from None
    except msgspec.ValidationError as exc:
        path = enforcer.as_received(pointer_from_msgspec(str(exc)), cleaned)
        raise _malformed_message(str(exc).partition(" - at `")[0], path) from None


def _payload_sequence(caller: str, payloads: object) -> Sequence[Payload]:
    """``payloads`` if a list or tuple, any other sequence of payloads as a list; else the
    ``UsageError`` (a batch is sliced and indexed, which an iterator is not)."""
    if isinstance(payloads, (list, tuple)):
        return payloads
    if isinstance(payloads, (str, bytes, bytearray, memoryview)) or not isinstance(
        payloads, Sequence
    ):
        raise wrong_type(caller, payloads, "a list of payloads")
    return list(payloads)


def _checked_middleware(middleware: object) -> tuple[Middleware, ...]:
    """The stages of ``middleware``, if it is an iterable of callables; else a ``UsageError``."""
    if isinstance(middleware, (str, bytes)) or not isinstance(middleware, Iterable):
        raise wrong_type("middleware=", middleware, "a sequence of callables")
    stages = tuple(middleware)
    for stage in stages:
        if not callable(stage):
            raise UsageError(f"middleware= takes callables, not {type(stage).__name__}")
    return stages


def _malformed_message(detail: str, path: str = "") -> MalformedEvent:
    return MalformedEvent("malformed-message", detail, path=path, subject="message")
