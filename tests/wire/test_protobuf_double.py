"""A JSON Schema ``number`` on the protobuf wire: a ``double`` (wire type 1, 8 bytes
little-endian), an array of them a packed ``repeated double``. Bindings are generated from 1.1
with number properties added to RUN_STARTED; both decoders read what the encoder writes, and
refuse alike a double that is no JSON number (NaN, the infinities)."""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from protobuf_by_hand import generated_with, length_delimited, read_alike, run_started

from agui_msgspec import TransportError, UsageError, consume_body, encode_proto, proto_frame
from agui_msgspec._wire.protobuf import decode_frame, wire_tables
from agui_msgspec._wire.protobuf.decode import Malformed

MODULE = "numbers_v1_2"
NUMBERS = {
    "share": {"type": "number"},  # required: a plain double, left out at 0
    "weight": {"type": "number", "exclusiveMinimum": 0},  # optional: written even at 0
    "scores": {"type": "array", "items": {"type": "number"}},  # required: [] when absent
}


@pytest.fixture(scope="module")
def bindings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    directory = tmp_path_factory.mktemp("numbers")
    yield from generated_with(directory, MODULE, NUMBERS, ["share", "scores"])


def started(bindings: Any, **numbers: Any) -> Any:
    return bindings.RunStartedEvent(
        thread_id="t", run_id="r", **{"share": 0.0, "scores": [], **numbers}
    )


def double(number: float) -> bytes:
    return struct.pack("<d", number)


def test_a_number_is_a_double_in_the_proto_and_the_bindings(bindings: Any) -> None:
    proto = Path(bindings.__file__).with_suffix(".proto").read_text(encoding="utf-8")
    assert "  double share = 7;" in proto
    assert "  optional double weight = 8;" in proto
    assert "  repeated double scores = 9;" in proto
    fields = {f.name: f.type for f in msgspec.structs.fields(bindings.RunStartedEvent)}
    assert fields["share"] is float
    assert fields["scores"] == list[float]


@pytest.mark.parametrize(
    "numbers",
    [
        {"share": 0.0, "weight": 0.5, "scores": []},
        {"share": -0.5, "weight": 1e300, "scores": [2.0, -0.5, 0.0, 1e300]},
        {"share": 2.0, "scores": [-1e-300]},
        {"share": 1e300},
    ],
)
def test_doubles_read_back_as_written_by_both_decoders(
    bindings: Any, numbers: dict[str, Any]
) -> None:
    event = started(bindings, **numbers)
    message = encode_proto(event, bindings)
    kind, decoded = read_alike(wire_tables(bindings), message)
    assert kind == "read"
    assert msgspec.convert(msgspec.json.decode(decoded), bindings.RunStartedEvent) == event
    assert all(type(n) is float for n in msgspec.json.decode(decoded)["scores"])


def test_a_plain_double_at_zero_is_left_out_and_reads_as_zero(bindings: Any) -> None:
    at_zero = encode_proto(started(bindings, share=0.0), bindings)
    assert at_zero == run_started(wire_tables(bindings), b"")
    assert encode_proto(started(bindings, share=1.0), bindings) == run_started(
        wire_tables(bindings),
        b"\x39" + double(1.0),  # field 7, fixed64
    )
    assert decode_frame(at_zero, bindings) == {
        "type": "RUN_STARTED",
        "threadId": "t",
        "runId": "r",
        "share": 0.0,
        "scores": [],
    }
    with_weight = encode_proto(started(bindings, weight=0.0), bindings)
    assert with_weight == run_started(
        wire_tables(bindings), b"\x41" + double(0.0)
    )  # optional: present


def test_a_repeated_double_reads_packed_or_unpacked(bindings: Any) -> None:
    packed = encode_proto(started(bindings, scores=[2.0, -0.5]), bindings)
    assert packed == run_started(
        wire_tables(bindings), length_delimited(9, double(2.0) + double(-0.5))
    )
    unpacked = run_started(wire_tables(bindings), b"\x49" + double(2.0) + b"\x49" + double(-0.5))
    assert read_alike(wire_tables(bindings), unpacked) == read_alike(wire_tables(bindings), packed)
    assert decode_frame(unpacked, bindings)["scores"] == [2.0, -0.5]  # type: ignore[index]


def verdict(result: Any) -> tuple[str, str] | None:
    return None if result.violation is None else (result.violation.rule, result.violation.detail)


def test_a_bound_on_a_number_is_judged_on_the_wire_as_in_sse(bindings: Any) -> None:
    finished = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
    for weight, rule in ((0.5, None), (0.0, "malformed-event")):  # exclusiveMinimum 0
        numbers = {"share": 0.5, "weight": weight, "scores": [1.5]}
        run: list[dict[str, Any]] = [
            {"type": "RUN_STARTED", "threadId": "t", "runId": "r", **numbers},
            finished,
        ]
        proto = consume_body(b"".join(proto_frame(e, bindings) for e in run), bindings)
        sse = b"".join(b"data: " + msgspec.json.encode(e) + b"\n\n" for e in run)
        assert verdict(proto) == verdict(consume_body(sse, bindings))
        assert (proto.violation.rule if proto.violation else None) == rule


NOT_JSON = [math.nan, math.inf, -math.inf]


@pytest.mark.parametrize("number", NOT_JSON, ids=str)
@pytest.mark.parametrize(
    "field",
    [
        lambda number: b"\x39" + double(number),  # share
        lambda number: b"\x41" + double(number),  # weight
        lambda number: length_delimited(9, double(0.5) + double(number)),  # scores, packed
        lambda number: b"\x49" + double(0.5) + b"\x49" + double(number),  # scores, unpacked
    ],
    ids=["share", "weight", "packed", "unpacked"],
)
def test_a_nan_or_infinite_double_is_malformed_to_both_decoders(
    bindings: Any, number: float, field: Any
) -> None:
    message = run_started(wire_tables(bindings), field(number))
    assert read_alike(wire_tables(bindings), message) == (
        "refused",
        Malformed,
        "a number is not finite",
    )
    assert (
        read_alike(wire_tables(bindings), run_started(wire_tables(bindings), field(1.5)))[0]
        == "read"
    )
    with pytest.raises(TransportError, match=r"malformed-frame.*a number is not finite"):
        decode_frame(message, bindings)


def test_a_packed_run_of_partial_doubles_is_malformed_to_both_decoders(bindings: Any) -> None:
    cut = run_started(wire_tables(bindings), length_delimited(9, double(2.0)[:7]))
    assert read_alike(wire_tables(bindings), cut)[:2] == ("refused", Malformed)
    with pytest.raises(TransportError, match=r"malformed-frame.*8-byte values"):
        decode_frame(cut, bindings)


@pytest.mark.parametrize("number", NOT_JSON, ids=str)
def test_the_encoder_refuses_a_nan_or_infinite_double(bindings: Any, number: float) -> None:
    with pytest.raises(UsageError, match="no JSON number"):
        encode_proto(started(bindings, share=number), bindings)
    with pytest.raises(UsageError, match="no JSON number"):
        encode_proto(started(bindings, scores=[1.0, number]), bindings)
