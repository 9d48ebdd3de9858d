"""The HTTP + Protobuf binding: length-prefixed protobuf frames, read and written.

AG-UI basic/transports/http-protobuf: a response of ``application/vnd.ag-ui.event+proto``
is a run of frames, each a 4-byte big-endian length and one encoded ``Event`` message.
The wire schema is generated from the JSON Schema (``agui_msgspec._codegen.proto``); this
package is a table-driven codec over the generated tables (``agui_msgspec.v1_1_wire``), pure Python,
so the binding needs no dependency. One job a module, each importing only those before it:

- ``tables``: the wire tables of a protocol version, loaded once;
- ``decode``: the rules every decoder applies, and the general decoder (every message shape);
- ``fast``: the single-pass decoder and the hot path, reading frames as ``decode`` does;
- ``reader``: :class:`ProtobufReader` over a body of frames, and :func:`decode_frame`;
- ``encode``: :func:`encode_proto` and :func:`proto_frame` (from ``tables`` alone).

Decoding turns a frame back into the event's JSON, wire names and all, and the reader
hands that JSON on: a frame enters the consumer exactly where an SSE payload does
(compatibility, middleware, enforcement, expansion, verification, reducer), so one event
gets one verdict on both wires. Open payloads (outcome, metadata, state, ``rawEvent``)
reach enforcement as they came: an unknown outcome is stripped there with a warning.

What the binary wire narrows, as the spec admits:

- a field this build's wire schema predates is skipped by decoding, silently, and so is
  material the wire schema does not model (a JSON Patch operation's extension members);
- an empty list and an absent optional one are the same bytes (absent on decode, ``[]``
  where the field is required); a required string left out reads as ``""``;
- a JSON number is a double: an integral value within 2^53 decodes as an int, as JSON
  readers do;
- an ``Event`` whose only arm this build does not know is dropped with a warning, and so
  is one with no arm at all (a zero-length frame), which is what a proto3 decoder reads an
  arm its build predates as, and what ``@ag-ui/proto`` writes for an event it cannot encode;
- a content part whose ``oneof`` arm this build does not know is dropped with a warning.

Decided here: bytes that are not a well-formed ``Event`` message (a bad varint, a length
past the frame, a known field with the wrong wire type, invalid UTF-8, groups, a frame
naming two event types, a non-finite number, nesting past ``MAX_NESTING``) are fatal:
``TransportError(rule="malformed-frame")``.
"""

from agui_msgspec._wire.protobuf.encode import encode_proto, proto_frame
from agui_msgspec._wire.protobuf.reader import PROTOBUF_MEDIA_TYPE, ProtobufReader, decode_frame
from agui_msgspec._wire.protobuf.tables import wire_tables

__all__ = [
    "PROTOBUF_MEDIA_TYPE",
    "ProtobufReader",
    "decode_frame",
    "encode_proto",
    "proto_frame",
    "wire_tables",
]
