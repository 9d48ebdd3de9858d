"""The transport readers frame response bodies into event payloads, and only that.

Each SSE rule is the WHATWG "Interpreting an event stream" algorithm as AG-UI's
http-sse binding uses it; each JSON lines rule is jsonlines.org's. Wherever a rule
has a failing side (a line end that is not one, a prefix that is not stripped, an
event too large) a test shows it next to the passing one.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_msgspec._errors import TransportError, UsageError
from agui_msgspec._wire.text import (
    DEFAULT_MAX_EVENT_SIZE,
    JSONLinesReader,
    SSEReader,
    iter_payloads,
    sniff_format,
)

BOM = b"\xef\xbb\xbf"
EOLS = (b"\n", b"\r\n", b"\r")
MiB = 1024 * 1024


def sse(body: bytes, **options: int) -> list[bytes]:
    """Everything an SSE reader makes of ``body`` fed whole."""
    reader = SSEReader(**options)
    return reader.feed(body) + reader.close()


def sse_bytewise(body: bytes) -> list[bytes]:
    """The same body fed one byte at a time: every split a network can make."""
    return list(iter_payloads((body[i : i + 1] for i in range(len(body))), SSEReader()))


def jsonl(body: bytes, **options: int) -> list[bytes]:
    reader = JSONLinesReader(**options)
    return reader.feed(body) + reader.close()


# --- SSE: line ends ---------------------------------------------------------------------


@pytest.mark.parametrize("eol", EOLS, ids=["LF", "CRLF", "CR"])
def test_every_sse_line_end_frames_the_same_events(eol: bytes) -> None:
    body = b"data: {}" + eol + eol + b"data: [1]" + eol + eol
    assert sse(body) == [b"{}", b"[1]"]
    assert sse_bytewise(body) == [b"{}", b"[1]"]


def test_line_ends_may_be_mixed_in_one_stream() -> None:
    assert sse(b"data: a\r\n\rdata: b\n\r\ndata: c\r\r") == [b"a", b"b", b"c"]


def test_cr_then_lf_across_chunks_is_one_line_end() -> None:
    reader = SSEReader()
    assert reader.feed(b"data: a\r") == []
    assert reader.feed(b"\n") == []  # the LF completes the CRLF: no blank line yet
    assert reader.feed(b"\r\n") == [b"a"]


def test_cr_then_lf_stays_one_line_end_across_an_empty_chunk() -> None:
    reader = SSEReader()
    assert reader.feed(b"data: a\r") == []
    assert reader.feed(b"") == []
    assert reader.feed(b"\ndata: b\n\n") == [b"a\nb"]


def test_two_crs_across_chunks_are_two_line_ends() -> None:
    reader = SSEReader()
    assert reader.feed(b"data: a\r") == []
    assert reader.feed(b"\r") == [b"a"]


def test_lf_then_cr_is_two_line_ends() -> None:
    assert sse(b"data: a\n\r") == [b"a"]


# --- SSE: chunks split anywhere ---------------------------------------------------------


def test_a_split_at_any_byte_gives_the_same_payloads() -> None:
    body = 'data: {"delta":"héllo 🌍"}\r\n\r\n: ping\ndata: {"n":1}\n\n'.encode()
    expected = sse(body)
    assert expected == ['{"delta":"héllo 🌍"}'.encode(), b'{"n":1}']
    for cut in range(len(body) + 1):
        reader = SSEReader()
        assert reader.feed(body[:cut]) + reader.feed(body[cut:]) + reader.close() == expected


def test_payloads_stay_bytes_even_when_split_inside_a_utf8_sequence() -> None:
    event = {"delta": "héllo 🌍"}
    body = b"data: " + msgspec.json.encode(event) + b"\n\n"
    (payload,) = sse_bytewise(body)
    assert type(payload) is bytes
    assert msgspec.json.decode(payload) == event


# --- SSE: fields ------------------------------------------------------------------------


def test_data_lines_join_with_lf() -> None:
    (payload,) = sse(b'data: {"a":\ndata: 1,\ndata: "b": 2}\n\n')
    assert payload == b'{"a":\n1,\n"b": 2}'
    assert msgspec.json.decode(payload) == {"a": 1, "b": 2}


def test_exactly_one_space_after_the_colon_is_stripped() -> None:
    assert sse(b"data:{}\n\n") == [b"{}"]
    assert sse(b"data: {}\n\n") == [b"{}"]
    assert sse(b"data:  {}\n\n") == [b" {}"]
    assert sse(b"data:\t{}\n\n") == [b"\t{}"]


def test_only_the_first_colon_separates_the_field() -> None:
    assert sse(b'data: {"a":"b: c"}\n\n') == [b'{"a":"b: c"}']


def test_comments_and_other_fields_are_ignored() -> None:
    body = b": keep-alive\nevent: message\nid: 41\nretry: 1000\ncustom: x\ndata: {}\n:\n\n"
    assert sse(body) == [b"{}"]


def test_field_names_are_case_sensitive() -> None:
    assert sse(b"Data: {}\n\nDATA: {}\n\n") == []


def test_an_event_without_data_lines_is_not_dispatched() -> None:
    assert sse(b"event: ping\nid: 1\n\n: keep-alive\n\n\n\ndata: {}\n\n") == [b"{}"]


def test_a_line_without_colon_is_a_field_with_the_empty_value() -> None:
    assert sse(b"data: a\ndata\ndata: b\n\n") == [b"a\n\nb"]
    # An event of one empty data line is dispatched (empty): the JSON decoder judges it.
    assert sse(b"data\n\n") == [b""]
    assert sse(b"data:\n\n") == [b""]
    # Any other name without a colon is an unknown field.
    assert sse(b"datum\ndata x\n\n") == []


# --- SSE: BOM ---------------------------------------------------------------------------


def test_a_leading_bom_is_skipped() -> None:
    assert sse(BOM + b"data: {}\n\n") == [b"{}"]


def test_a_bom_split_across_chunks_is_skipped() -> None:
    reader = SSEReader()
    assert reader.feed(BOM[:1]) == []
    assert reader.feed(BOM[1:2]) == []
    assert reader.feed(BOM[2:] + b"data: {}\n\n") == [b"{}"]


def test_only_one_bom_is_skipped() -> None:
    # The second BOM belongs to the first line's field name, which is then not "data".
    assert sse(BOM + BOM + b"data: {}\n\ndata: []\n\n") == [b"[]"]


def test_a_body_shorter_than_a_bom_is_just_bytes() -> None:
    reader = SSEReader()
    assert reader.feed(BOM[:2]) == []
    assert reader.close() == []
    assert not reader.discarded_partial


# --- SSE: dispatch and end of stream ----------------------------------------------------


def test_an_event_is_dispatched_only_by_a_blank_line() -> None:
    reader = SSEReader()
    assert reader.feed(b"data: {}") == []
    assert reader.feed(b"\n") == []
    assert reader.feed(b"\n") == [b"{}"]


def test_a_clean_end_discards_nothing() -> None:
    reader = SSEReader()
    assert reader.feed(b"data: {}\n\n: bye\nevent: end\n") == [b"{}"]
    assert reader.close() == []
    assert not reader.discarded_partial


@pytest.mark.parametrize(
    "ending",
    [b"data: {}\n", b"data: {}", b"data: {}\r", b"data: {}\nevent: x\n", b"data", b"data:"],
)
def test_an_event_cut_before_its_blank_line_is_discarded_and_reported(ending: bytes) -> None:
    reader = SSEReader()
    assert reader.feed(b"data: [1]\n\n" + ending) == [b"[1]"]
    assert reader.close() == []
    assert reader.discarded_partial


def test_a_reader_serves_one_stream() -> None:
    reader = SSEReader()
    reader.close()
    with pytest.raises(UsageError, match="closed"):
        reader.feed(b"data: {}\n\n")
    with pytest.raises(UsageError, match="closed"):
        reader.close()


# --- SSE: event size --------------------------------------------------------------------


def test_a_payload_of_exactly_max_event_size_passes() -> None:
    reader = SSEReader(max_event_size=10)
    # Fed in pieces, so the unterminated line is measured too, not only whole lines.
    assert reader.feed(b"data: 01234") == []
    assert reader.feed(b"56789") == []
    assert reader.feed(b"\n\n") == [b"0123456789"]
    # Joined lines count their LF: 4 + 1 + 5 = 10.
    assert sse(b"data: 0123\ndata: 56789\n\n", max_event_size=10) == [b"0123\n56789"]


def test_one_byte_more_is_event_too_large() -> None:
    reader = SSEReader(max_event_size=10)
    assert reader.feed(b"data: a\n\ndata: b\n\n") == [b"a", b"b"]
    with pytest.raises(TransportError) as info:
        reader.feed(b"data:0123456789X")
    assert info.value.rule == "event-too-large"
    assert info.value.index == 2
    assert info.value.path == ""
    assert "10 bytes" in str(info.value)


def test_data_lines_growing_past_the_limit_are_too_large() -> None:
    with pytest.raises(TransportError, match="event-too-large"):
        sse(b"data: 01234\ndata: 56789\n\n", max_event_size=10)


def test_an_oversized_ignored_line_is_too_large_however_it_is_chunked() -> None:
    with pytest.raises(TransportError, match="event-too-large"):
        sse(b": 0123456789\n", max_event_size=10)
    reader = SSEReader(max_event_size=10)
    assert reader.feed(b": 01234") == []
    with pytest.raises(TransportError, match="event-too-large"):
        reader.feed(b"56789")


def test_payloads_before_an_oversized_event_in_the_same_chunk_are_delivered_first() -> None:
    reader = SSEReader(max_event_size=10)
    assert reader.feed(b"data: a\n\ndata: b\n\ndata: 0123456789X\n\n") == [b"a", b"b"]
    with pytest.raises(TransportError) as info:
        reader.close()
    assert info.value.index == 2
    # The same error on every later call: the stream is dead.
    with pytest.raises(TransportError) as again:
        reader.feed(b"data: c\n\n")
    assert again.value is info.value


def test_iter_payloads_yields_everything_before_the_error() -> None:
    seen: list[bytes] = []
    body = [b"data: a\n\ndata: 0123456789X\n\n"]
    with pytest.raises(TransportError):
        seen.extend(iter_payloads(body, SSEReader(max_event_size=10)))
    assert seen == [b"a"]


@pytest.mark.parametrize(("reader_type", "start"), [(SSEReader, b"data: "), (JSONLinesReader, b"")])
def test_an_oversized_line_fails_before_it_is_buffered(
    reader_type: type[SSEReader | JSONLinesReader], start: bytes
) -> None:
    limit = 10 * MiB
    piece = b"x" * (64 * 1024)
    sent: list[int] = []

    def twenty_mib_line() -> Iterator[bytes]:
        yield start
        for _ in range(20 * MiB // len(piece)):
            sent.append(len(piece))
            yield piece

    tracemalloc.start()
    try:
        with pytest.raises(TransportError) as info:
            list(iter_payloads(twenty_mib_line(), reader_type(max_event_size=limit)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.rule == "event-too-large"
    assert info.value.index == 0
    # Exactly the limit was held; the very next chunk raised, long before 20 MiB.
    assert sum(sent) == limit + len(piece)
    assert peak < 1.5 * limit


@pytest.mark.parametrize("line", [b"data:\n", b"data\n"])
def test_an_event_of_many_empty_data_lines_holds_what_it_counts(line: bytes) -> None:
    # Each line counts one byte (its LF) against max_event_size; a slot per line held
    # about 90 bytes each (500,000 lines: 43 MiB).
    lines = 500_000
    body = b'data: "\n' + line * lines + b'data: "\n\n'
    piece = 64 * 1024
    tracemalloc.start()
    try:
        payloads = list(
            iter_payloads((body[i : i + piece] for i in range(0, len(body), piece)), SSEReader())
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert payloads == [b'"' + b"\n" * (lines + 1) + b'"']
    assert peak < 4 * MiB


def test_max_event_size_must_be_positive() -> None:
    assert SSEReader().max_event_size == DEFAULT_MAX_EVENT_SIZE == 10 * MiB
    with pytest.raises(UsageError, match="max_event_size"):
        SSEReader(max_event_size=0)
    with pytest.raises(UsageError, match="max_event_size"):
        JSONLinesReader(max_event_size=-1)


# --- JSON lines -------------------------------------------------------------------------


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"], ids=["LF", "CRLF"])
def test_each_json_line_is_a_payload(eol: bytes) -> None:
    body = b'{"a":1}' + eol + b"[2]" + eol
    assert jsonl(body) == [b'{"a":1}', b"[2]"]


def test_crlf_split_across_chunks_leaves_no_cr_in_the_payload() -> None:
    reader = JSONLinesReader()
    assert reader.feed(b"{}\r") == []
    assert reader.feed(b"\n") == [b"{}"]


def test_a_lone_cr_does_not_end_a_json_line() -> None:
    (payload,) = jsonl(b'{"a":1}\r{"b":2}\n')
    assert payload == b'{"a":1}\r{"b":2}'
    with pytest.raises(msgspec.DecodeError):
        msgspec.json.decode(payload)


def test_blank_and_whitespace_lines_are_skipped() -> None:
    assert jsonl(b"\n{}\n\r\n  \t\n\n[]\n") == [b"{}", b"[]"]


def test_a_last_line_without_newline_is_an_event() -> None:
    reader = JSONLinesReader()
    assert reader.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert reader.feed(b":2}") == []
    assert reader.close() == [b'{"b":2}']
    assert not reader.discarded_partial


def test_a_last_line_cut_short_reaches_the_decoder_which_rejects_it() -> None:
    (payload,) = jsonl(b'{"b":')
    with pytest.raises(msgspec.DecodeError):
        msgspec.json.decode(payload)


def test_a_trailing_cr_or_blank_last_line_adds_nothing() -> None:
    assert jsonl(b"{}\r") == [b"{}"]
    assert jsonl(b"{}\n  ") == [b"{}"]


def test_json_lines_skip_a_leading_bom() -> None:
    assert jsonl(BOM + b"{}\n") == [b"{}"]


def test_a_json_line_of_exactly_max_event_size_passes() -> None:
    reader = JSONLinesReader(max_event_size=4)
    assert reader.feed(b"[10]\r") == []  # the CR may belong to a CRLF: not counted yet
    assert reader.feed(b"\n[123]") == [b"[10]"]
    with pytest.raises(TransportError) as info:
        reader.close()
    assert info.value.rule == "event-too-large"
    assert info.value.index == 1


def test_a_long_json_line_is_too_large_whole_or_in_pieces() -> None:
    with pytest.raises(TransportError) as info:
        jsonl(b"[1]\n[1234]\n", max_event_size=4)
    assert info.value.index == 1
    reader = JSONLinesReader(max_event_size=4)
    with pytest.raises(TransportError, match="event-too-large"):
        reader.feed(b"[1234")


def test_json_lines_reader_serves_one_stream() -> None:
    reader = JSONLinesReader()
    assert reader.close() == []
    with pytest.raises(UsageError):
        reader.feed(b"{}\n")


# --- sniffing ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'{"type":"RUN_STARTED"}', "jsonl"),
        (BOM + b' \r\n\t{"type"', "jsonl"),
        (b"data: {}", "sse"),
        (b": keep-alive\n", "sse"),
        (BOM + b"event: x", "sse"),
        (b"[1]", "sse"),
        (b"", "sse"),
        (b"\n\n", "sse"),
    ],
)
def test_sniff_format(head: bytes, expected: str) -> None:
    assert sniff_format(head) == expected


# --- properties: chunking never changes the payloads ------------------------------------

TEXT = st.text(max_size=12) | st.sampled_from(
    ["héllo 🌍", "\n", "\r\n", "data: x", ": c", "\ufeff"]
)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=12,
)
EVENTS = st.lists(st.dictionaries(TEXT, JSON_VALUES, max_size=5), max_size=6)
LINE_TEXT = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"), max_size=10
)
SSE_NOISE = st.sampled_from(
    [":", ": keep-alive", "event: message", "id: 7", "retry: 1000", "Data: no", "x"]
) | LINE_TEXT.map(lambda text: ":" + text)


@st.composite
def sse_bodies(draw: st.DrawFn) -> tuple[bytes, list[dict[str, Any]], list[bytes]]:
    """An SSE body for random events, with the payloads a reader must make of it."""
    events = draw(EVENTS)
    eol = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    lines: list[str] = []
    payloads: list[bytes] = []
    for event in events:
        lines.extend(draw(st.lists(SSE_NOISE | st.just(""), max_size=2)))
        if draw(st.booleans()):  # pretty-printed JSON spreads one event over several data lines
            text = json.dumps(event, ensure_ascii=False, indent=1)
        else:
            text = msgspec.json.encode(event).decode()
        values = []
        for part in text.split("\n"):
            prefix = draw(st.sampled_from(["data: ", "data:"]))
            lines.append(prefix + part)
            values.append(part[1:] if prefix == "data:" and part.startswith(" ") else part)
            lines.extend(draw(st.lists(SSE_NOISE, max_size=1)))
        lines.append("")
        payloads.append("\n".join(values).encode())
    bom = "\ufeff" if draw(st.booleans()) else ""
    body = (bom + "".join(line + eol for line in lines)).encode()
    return body, events, payloads


@st.composite
def jsonl_bodies(draw: st.DrawFn) -> tuple[bytes, list[dict[str, Any]], list[bytes]]:
    """A JSON lines body for random events, with the payloads a reader must make of it."""
    events = draw(EVENTS)
    payloads = [msgspec.json.encode(event) for event in events]
    body = BOM if draw(st.booleans()) else b""
    for number, payload in enumerate(payloads, 1):
        body += b"".join(
            blank + draw(st.sampled_from([b"\n", b"\r\n"]))
            for blank in draw(st.lists(st.sampled_from([b"", b" ", b"\t "]), max_size=2))
        )
        body += payload
        if number < len(payloads) or draw(st.booleans()):  # the last newline is optional
            body += draw(st.sampled_from([b"\n", b"\r\n"]))
    return body, events, payloads


def chunked(data: st.DataObject, body: bytes) -> list[bytes]:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=24), label="cuts"))
    return [body[start:end] for start, end in pairwise([0, *cuts, len(body)])]


@settings(deadline=None)
@given(st.data())
def test_sse_any_chunking_gives_the_whole_body_payloads(data: st.DataObject) -> None:
    body, events, payloads = data.draw(sse_bodies(), label="body")
    reader = SSEReader()
    got = list(iter_payloads(chunked(data, body), reader))
    assert got == sse(body) == payloads
    assert all(type(payload) is bytes for payload in got)
    assert [msgspec.json.decode(payload) for payload in got] == events
    assert not reader.discarded_partial


@settings(deadline=None)
@given(st.data())
def test_jsonl_any_chunking_gives_the_whole_body_payloads(data: st.DataObject) -> None:
    body, events, payloads = data.draw(jsonl_bodies(), label="body")
    got = list(iter_payloads(chunked(data, body), JSONLinesReader()))
    assert got == jsonl(body) == payloads
    assert all(type(payload) is bytes for payload in got)
    assert [msgspec.json.decode(payload) for payload in got] == events


# --- SSE: the one-split framing of plain events --------------------------------------------

SSE_PIECES = st.sampled_from(
    [b"data: ", b"data:", b"data", b"\n", b"\n\n", b"\n\ndata: ", b"\r", b": c", b"{}", b"x"]
)


def frames(body: bytes, chunks: list[bytes], max_event_size: int) -> tuple[object, ...]:
    """Everything a caller sees of an SSE reader: payloads, the error with its index, and
    whether the end discarded an event."""
    reader = SSEReader(max_event_size=max_event_size)
    payloads: list[bytes] = []
    try:
        for chunk in chunks:
            payloads += reader.feed(chunk)
        payloads += reader.close()
    except TransportError as error:
        return (payloads, error.rule, error.index)
    return (payloads, reader.discarded_partial)


@settings(deadline=None)
@given(st.data())
def test_plain_events_split_at_once_frame_as_the_line_loop_does(data: st.DataObject) -> None:
    """Most bodies are ``data: <json>\\n\\n`` events, framed with one split per chunk; any
    body, however cut and whatever the size limit, must frame as if line by line."""
    body = b"data: " + b"".join(data.draw(st.lists(SSE_PIECES, max_size=30), label="pieces"))
    chunks = chunked(data, body)
    max_event_size = data.draw(st.sampled_from([1, 3, 8, DEFAULT_MAX_EVENT_SIZE]), label="max")
    fast = frames(body, chunks, max_event_size)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(SSEReader, "_frame_plain_events", lambda self, text, out: text)
        line_by_line = frames(body, chunks, max_event_size)
    assert fast == line_by_line


def test_plain_events_are_framed_with_one_split() -> None:
    reader = SSEReader()
    body = b'data: {"a":1}\n\ndata: \n\ndata: {"b":2}\n\ndata: {"c"'
    assert reader.feed(body) == [b'{"a":1}', b"", b'{"b":2}']
    assert reader.feed(b":3}\n\n") == [b'{"c":3}']


def test_a_body_not_all_plain_events_is_framed_line_by_line() -> None:
    body = b'data: {"a":1}\n\n: keep-alive\n\ndata: {"b":\ndata: 2}\n\n'
    assert sse(body) == [b'{"a":1}', b'{"b":\n2}']
