"""Content codings a response body may arrive in, undone a bounded piece at a time.

The agent asks for gzip or deflate only (``ACCEPT_ENCODING``), and inflates what arrives in
pieces of at most a set size, so the reader frames and bounds each piece before the next is
made: a small compressed body cannot become a large allocation (a gzip bomb).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Any

from agui_msgspec._errors import TransportError

# What the agent can inflate piece by piece: nothing stacked, nothing else (br, zstd, ...).
ACCEPT_ENCODING = "gzip, deflate"
_GZIP_CODINGS = frozenset({"gzip", "x-gzip"})


def content_coding(codings: list[str]) -> str | None:
    """The one coding to undo (None for identity), or the TransportError the codings earn."""
    named = [c.strip().lower() for c in codings if c.strip().lower() not in ("", "identity")]
    if len(named) > 1:
        raise TransportError(
            "stacked-encoding",
            f"Content-Encoding {', '.join(named)}: the agent asked for one of gzip, "
            "deflate at most, and does not undo stacked codings",
        )
    if named and named[0] not in _GZIP_CODINGS and named[0] != "deflate":
        raise TransportError(
            "unknown-encoding",
            f"Content-Encoding {named[0]}: the agent asked for gzip or deflate only",
        )
    return named[0] if named else None


class Inflater:
    """Undoes gzip or deflate a piece at a time: no piece is longer than ``piece`` bytes, so
    the reader frames (and bounds) each before the next one is made. A corrupt body raises
    ``zlib.error``."""

    def __init__(self, coding: str, piece: int) -> None:
        self._gzip = coding in _GZIP_CODINGS
        self._inflate = zlib.decompressobj(zlib.MAX_WBITS | 16 if self._gzip else zlib.MAX_WBITS)
        self._piece = piece
        self._started = False
        # deflate is zlib-wrapped by the RFC, raw in practice: the wrapper's two-byte header
        # tells which, so a first byte is held until the second comes, however the reads split.
        self._head: bytes | None = None if self._gzip else b""

    @property
    def complete(self) -> bool:
        """Whether the compressed stream reached its end (or never began: an empty body)."""
        return self._inflate.eof or not self._started

    def feed(self, data: bytes) -> Iterator[bytes]:
        self._started = self._started or bool(data)
        if self._head is not None:
            data = self._head + data
            if len(data) < 2:
                self._head = data
                return
            self._head = None
            if not _zlib_header(data[:2]):
                self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
        piece = self._piece
        while True:
            # A copy to go back to should this call fail: what inflates before the fault is
            # then recovered, so no event that arrived whole is lost with the corrupt rest.
            before = self._inflate.copy()
            try:
                out = self._inflate.decompress(data, piece)
            except zlib.error:
                yield from _up_to_the_fault(before, data, piece)
                raise
            if self._inflate.eof and self._gzip and self._inflate.unused_data:
                data = self._inflate.unused_data  # another gzip member follows (RFC 1952)
                self._inflate = zlib.decompressobj(zlib.MAX_WBITS | 16)
            else:
                data = self._inflate.unconsumed_tail
            if out:
                yield out
            if not data and len(out) < piece:
                return


def _zlib_header(head: bytes) -> bool:
    """Whether the first two bytes of a deflate body are a zlib header zlib accepts."""
    try:
        zlib.decompressobj().decompress(head)
    except zlib.error:
        return False
    return True


def _up_to_the_fault(inflate: Any, data: bytes, piece: int) -> Iterator[bytes]:
    """What ``data`` inflates to before the byte where it stops being deflate, in pieces of
    at most ``piece`` bytes. A byte at a time: one byte of deflate makes at most a few KiB,
    and this runs once, on a body that is about to be refused."""
    inflated = bytearray()
    for position in range(len(data)):
        try:
            inflated += inflate.decompress(data[position : position + 1])
        except zlib.error:
            break
        if len(inflated) >= piece:
            yield bytes(inflated[:piece])
            del inflated[:piece]
        if inflate.eof:
            break
    if inflated:
        yield bytes(inflated)
