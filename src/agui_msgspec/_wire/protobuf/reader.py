"""Reading the HTTP + Protobuf binding: a body of length-prefixed frames in, one payload (the
event's JSON) per frame out; and one frame's message decoded alone."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import msgspec

from agui_msgspec._errors import (
    TransportError,
    UsageError,
    checked_bound,
    checked_callback,
    wrong_type,
)
from agui_msgspec._versions import LATEST_VERSION, VersionLike
from agui_msgspec._wire.protobuf.decode import Malformed, TooLarge
from agui_msgspec._wire.protobuf.fast import FastDecoder
from agui_msgspec._wire.protobuf.tables import wire_tables
from agui_msgspec._wire.text import DEFAULT_MAX_EVENT_SIZE

PROTOBUF_MEDIA_TYPE = "application/vnd.ag-ui.event+proto"
"""The media type of the HTTP + Protobuf binding's body (spec: basic/transports/http-protobuf)."""
_unpack_length = struct.Struct(">I").unpack_from
_HOT_NAMES = 512
"""More than the JSON a hot event's names, type and timestamp take."""
_json_encode = msgspec.json.Encoder().encode


class ProtobufReader:
    """Incremental reader of an ``application/vnd.ag-ui.event+proto`` body: frames in, one
    payload per event out, the event's JSON (wire names), as :class:`SSEReader` gives.

    Frames split across chunks and several frames in one chunk both work. A frame's length
    is checked against ``max_event_size`` as soon as its 4-byte header is in, before its
    bytes are held: a larger one raises ``TransportError(rule="event-too-large")``, and so
    does a frame that decodes into more than ``max_event_size`` of JSON (what the event
    is on the text wire, where the same bound holds), as soon as its decoding passes it:
    what a frame makes is bounded by the bound, not by its byte count. Bytes
    that do not decode raise ``TransportError(rule="malformed-frame")``; payloads completed
    earlier in the same chunk are returned first, and the error is raised by the next
    ``feed`` or ``close``. A frame carrying only an event type this build does not know, or
    no event at all (a zero-length frame: what a decoder sees for an arm its build
    predates), is dropped, and ``on_warning`` says so as the frame is decoded, as
    ``event N: ...``, N the index of the payload it comes before (counted from this
    reader's first). ``on_warning_before`` gets the same warning with that index: a consumer
    says it once it has taken the payloads before that one, so a body gives the same
    warnings in the same order however it is chunked. :attr:`warnings` keeps each kind of
    warning once, with a count, so it is bounded by the wire schema, not by the body.
    ``close()`` never returns a payload; :attr:`discarded_partial` is then True if the body
    ended inside a frame, which the consumer reports as truncation.
    """

    def __init__(
        self,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        version: VersionLike = LATEST_VERSION,
        on_warning: Callable[[str], None] | None = None,
        *,
        on_warning_before: Callable[[int, str], None] | None = None,
    ) -> None:
        self.max_event_size: int = checked_bound("max_event_size", max_event_size, 1)
        checked_callback("on_warning=", on_warning)
        checked_callback("on_warning_before=", on_warning_before)
        self.discarded_partial: bool = False
        self.warnings: list[str] = []
        # By kind (the warning less its "event N"): where it is kept, its first text, its count.
        self._kinds: dict[str, tuple[int, str, int]] = {}
        # The latest warning's kind and payload index, and its repeats not yet said.
        self._repeating = ""
        self._repeat_position = 0
        self._repeats = 0
        self._on_warning = on_warning
        self._on_warning_before = on_warning_before
        self._position = 0  # the index of the payload the frame being decoded would be
        self._decoder = FastDecoder(wire_tables(version), self._warn, max_event_size, compact=True)
        # A hot frame this long or shorter cannot make more JSON than max_event_size (a byte
        # escapes to 6 at most, and the names are short): the hot path needs no other check.
        self._hot_limit = max(0, (max_event_size - _HOT_NAMES) // 6)
        # Bytes after the last whole frame, in pieces; _need is what the next step waits for.
        self._pieces: list[bytes] = []
        self._held = 0
        self._need = 4
        self._emitted = 0
        self._closed = False
        self._violation: TransportError | None = None

    @property
    def inside_event(self) -> bool:
        """Whether the bytes read so far end inside a frame."""
        return self._held > 0

    def _warn(self, kind: str) -> None:
        """Say a warning about the frame being decoded: its kind, as ``event N: kind``. The
        same kind again before the same payload is counted, and said once, as a count, when
        the next payload comes (or another warning, or the end): a body of repeats costs a
        warning, not one a frame."""
        position = self._position
        if kind == self._repeating and position == self._repeat_position:
            self._repeats += 1
            return
        self._say_repeats()
        self._repeating, self._repeat_position = kind, position
        self._say(kind, f"event {position}: {kind}", 1)

    def _say_repeats(self) -> None:
        if self._repeats:
            kind, count, self._repeats = self._repeating, self._repeats, 0
            message = f"event {self._repeat_position}: {kind} ({count} more times)"
            self._say(kind, message, count)

    def _say(self, kind: str, message: str, count: int) -> None:
        kept = self._kinds.get(kind)
        if kept is None:
            self._kinds[kind] = (len(self.warnings), message, count)
            self.warnings.append(message)
        else:  # its first text stays, which says where it first came
            place, first, seen = kept
            self._kinds[kind] = (place, first, seen + count)
            self.warnings[place] = f"{first} ({seen + count} times)"
        if self._on_warning is not None:
            self._on_warning(message)
        if self._on_warning_before is not None:
            self._on_warning_before(self._repeat_position, message)

    def feed(self, chunk: bytes) -> list[bytes]:
        """Take the next bytes of the body; return the payloads they complete, in order."""
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise wrong_type("feed()", chunk, "bytes")
        self._check_usable()
        if self._held + len(chunk) < self._need:
            if chunk:
                self._pieces.append(bytes(chunk))
                self._held += len(chunk)
            return []
        data = b"".join((*self._pieces, chunk)) if self._pieces else bytes(chunk)
        out: list[bytes] = []
        try:
            pos = self._frames(data, out)
        except TransportError as violation:
            self._say_repeats()
            self._violation = violation
            self._pieces, self._held = [], 0
            if not out:
                raise
            self._emitted += len(out)
            return out
        rest = data[pos:]
        self._pieces = [rest] if rest else []
        self._held = len(rest)
        self._emitted += len(out)
        return out

    def _frames(self, data: bytes, out: list[bytes]) -> int:
        pos, end, limit, hot_limit = 0, len(data), self.max_event_size, self._hot_limit
        event, hot_frames = self._decoder.event, self._decoder.hot_frames
        hot_starts = self._decoder.hot_starts
        while end - pos >= 4:
            if end - pos > 4 and data[pos + 4] in hot_starts:
                emitted = len(out)
                pos = hot_frames(data, pos, end, hot_limit, out)
                if self._repeats and len(out) > emitted:
                    self._say_repeats()  # before the payload they come before is taken
            if end - pos < 4:
                break
            length = _unpack_length(data, pos)[0]
            if length > limit:
                raise TransportError(
                    "event-too-large",
                    f"a frame of {length} bytes is larger than max_event_size ({limit} bytes)",
                    index=self._emitted + len(out),
                )
            if end - pos - 4 < length:
                self._need = 4 + length
                return pos
            self._position = self._emitted + len(out)
            try:
                decoded = event(data[pos + 4 : pos + 4 + length])
            except Malformed as problem:
                raise TransportError(
                    "malformed-frame",
                    f"the frame does not decode: {problem}",
                    index=self._emitted + len(out),
                ) from None
            except TooLarge:
                raise self._too_large(len(out)) from None
            except RecursionError:
                raise TransportError(
                    "malformed-frame", "the frame nests too deeply", index=self._emitted + len(out)
                ) from None
            if decoded is not None:  # None: dropped, and the decoder said why
                payload = _json_encode(decoded)
                if len(payload) > limit:
                    raise self._too_large(len(out))
                self._say_repeats()
                out.append(payload)
            pos += 4 + length
        self._need = 4
        return pos

    def _too_large(self, emitted_in_chunk: int) -> TransportError:
        return TransportError(
            "event-too-large",
            f"a frame decodes into more than max_event_size ({self.max_event_size} bytes) of "
            "JSON, the event's size on the text wire",
            index=self._emitted + emitted_in_chunk,
        )

    def close(self) -> list[bytes]:
        """The body has ended: nothing more to return; a frame cut short is discarded."""
        self._check_usable()
        self._closed = True
        self._say_repeats()
        self.discarded_partial = self._held > 0
        self._pieces, self._held = [], 0
        return []

    def _check_usable(self) -> None:
        if self._violation is not None:
            raise self._violation
        if self._closed:
            raise UsageError("the reader is closed; use a new reader for each stream")


def decode_frame(
    frame: bytes,
    version: VersionLike = LATEST_VERSION,
    on_warning: Callable[[str], None] | None = None,
) -> dict[str, Any] | None:
    """One encoded ``Event`` message (no length prefix) as its wire-named JSON object, or
    None for an event whose arm this build does not know or a message with no arm (empty
    bytes included), which ``on_warning`` is told of. Raises ``TransportError``
    (``malformed-frame``) for bytes that are not such a message."""
    decoder = FastDecoder(wire_tables(version), on_warning or (lambda _: None))
    try:
        return decoder.event(bytes(frame))
    except Malformed as problem:
        raise TransportError("malformed-frame", f"the frame does not decode: {problem}") from None
    except TooLarge:
        raise TransportError(
            "event-too-large",
            f"the frame decodes into more than {DEFAULT_MAX_EVENT_SIZE} bytes of JSON",
        ) from None
