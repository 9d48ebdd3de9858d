"""The protobuf binding against SSE, and against the alternatives for its codec.

``nox -s proto_bench`` (``-- --quick`` for small workloads) prints one markdown table:
per workload (text, tools, mixed), microseconds per event to consume the same events from
an SSE body and from a protobuf body (64 KiB chunks, the whole pipeline), the protobuf
reader alone (frames to event JSON), Google's ``protobuf`` runtime on the same frames
(parse, then ``MessageToDict``: the least a consumer needs to reach the JSON the pipeline
takes), and ``@ag-ui/proto``'s ``decode`` in node. Then the install weight of each codec
and its correctness on the parity corpus. Timings are medians of repeats, in CPU time of
the process for the Python columns (node times itself, in wall time).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
from workloads import Workload, build, mixed_events, text_events, tool_events

import agui_msgspec
from agui_msgspec import ProtobufReader, consume_body, proto_frame
from agui_msgspec import v1_1_wire as wire

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "proto"
CHUNK = 64 * 1024


def chunks(body: bytes) -> Iterator[bytes]:
    return (body[i : i + CHUNK] for i in range(0, len(body), CHUNK))


def google_event_class() -> Any:
    """The Event message class of Google's runtime, its descriptor built from our tables."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, struct_pb2  # noqa: PLC0415

    field = descriptor_pb2.FieldDescriptorProto
    scalar = {"string": field.TYPE_STRING, "int64": field.TYPE_INT64, "bool": field.TYPE_BOOL}
    well_known = {"value": ".google.protobuf.Value", "struct": ".google.protobuf.Struct"}
    file = descriptor_pb2.FileDescriptorProto(
        name="agui_bench.proto", package="agui", syntax="proto3",
        dependency=["google/protobuf/struct.proto"],
    )  # fmt: skip
    for name, values in wire.ENUMS.items():
        enum = file.enum_type.add(name=name)
        for number, value in sorted(values.items()):
            enum.value.add(name=value if name == "EventType" else f"{name}_{value}", number=number)
    messages: dict[str, Any] = {}
    for name, (shape, _tag, rows) in wire.MESSAGES.items():
        parent, _, child = name.rpartition(".")
        message = (messages[parent].nested_type if parent else file.message_type).add(
            name=child or name
        )
        messages[name] = message
        if shape in ("oneof", "envelope"):
            message.oneof_decl.add(name="arm")
        for number, proto_name, kind, label, _json, ref, _required in rows:
            f = message.field.add(name=proto_name, number=number)
            f.label = field.LABEL_REPEATED if label == "repeated" else field.LABEL_OPTIONAL
            if kind in scalar:
                f.type = scalar[kind]
            elif kind == "enum":
                f.type, f.type_name = field.TYPE_ENUM, f".agui.{ref}"
            else:
                f.type = field.TYPE_MESSAGE
                f.type_name = well_known.get(kind, f".agui.{ref}")
            if shape in ("oneof", "envelope"):
                f.oneof_index = 0
            elif label == "optional" and kind in (*scalar, "enum"):
                f.proto3_optional = True
                f.oneof_index = len(message.oneof_decl)
                message.oneof_decl.add(name=f"_{proto_name}")
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(struct_pb2.DESCRIPTOR.serialized_pb)
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("agui.Event"))


def median_us(run: Callable[[], object], events: int, repeat: int) -> float:
    """CPU time of this process, not wall time: on a shared machine, time spent waiting for
    a core is not the code's."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return statistics.median(times) / events * 1e6


def node_us(body: bytes, repeat: int) -> float | None:
    node_dir = os.environ.get("AGUI_NODE_PROTO_DIR")
    if not node_dir:
        return None
    with tempfile.NamedTemporaryFile(suffix=".bin") as file:
        file.write(body)
        file.flush()
        script = str(Path(node_dir) / "proto_timing.mjs")
        out = subprocess.run(
            ["node", script, file.name, str(repeat)], capture_output=True, text=True, check=True
        )
    return float(json.loads(out.stdout)["us_per_event"])


def package_size(module: Any) -> int:
    root = Path(module.__file__).parent
    return sum(
        p.stat().st_size for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    )


def row(workload: Workload, event_class: Any, repeat: int) -> str:
    """One workload's line of the table."""
    events = [msgspec.json.decode(p) for p in workload.payloads]
    body = b"".join(proto_frame(event) for event in events)
    frames = [proto_frame(event)[4:] for event in events]
    n = len(events)
    sse = median_us(lambda: consume_body(chunks(workload.body), keep_events=False), n, repeat)
    binary = median_us(lambda: consume_body(chunks(body), keep_events=False), n, repeat)
    reader = median_us(lambda: ProtobufReader().feed(body), n, repeat)
    google = "—"
    if event_class is not None:
        from google.protobuf.json_format import MessageToDict  # noqa: PLC0415

        parse = event_class.FromString
        google = f"{median_us(lambda: [MessageToDict(parse(f)) for f in frames], n, repeat):.2f}"
    node = node_us(body, repeat)
    return (
        f"| {workload.name} | {n:,} | {len(workload.body):,} B | {len(body):,} B | {sse:.2f} "
        f"| {binary:.2f} | {reader:.2f} | {google} | {'—' if node is None else f'{node:.2f}'} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small workloads, fewer repeats")
    args = parser.parse_args()
    scale, repeat = (10, 3) if args.quick else (1, 5)
    workloads = {
        "text": text_events(200 // scale),
        "tools": tool_events(2_000 // scale),
        "mixed": mixed_events(200 // scale) if args.quick else mixed_events(),
    }
    try:
        event_class = google_event_class()
        from google.protobuf import __version__ as google_version  # noqa: PLC0415
    except ImportError:
        event_class, google_version = None, None
    print(f"agui-msgspec at {agui_msgspec.__name__}, Python {sys.version.split()[0]}, "
          f"protobuf {google_version or 'not installed'}, quick={args.quick}")  # fmt: skip
    print()
    print("| workload | events | SSE body | protobuf body | consume SSE µs/event | consume protobuf µs/event"
          " | ProtobufReader alone | google protobuf parse + MessageToDict | @ag-ui/proto decode (node) |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, documents in workloads.items():
        print(row(build(name, documents), event_class, repeat))
    print()
    package = Path(agui_msgspec.__file__).parent
    codec = [*(package / "_wire" / "protobuf").glob("*.py"), package / "v1_1_wire.py"]
    ours = sum(f.stat().st_size for f in codec)
    print(f"install weight: agui-msgspec's codec {ours:,} B of source (no dependency)", end="")
    if event_class is not None:
        import google.protobuf  # noqa: PLC0415

        print(f"; google protobuf {package_size(google.protobuf):,} B installed")
    else:
        print()
    cases = json.loads((CORPUS / "corpus-frames.json").read_text())
    if event_class is not None:
        same = sum(
            event_class.FromString(bytes.fromhex(c["hex"])).SerializeToString()
            == bytes.fromhex(c["hex"])
            for c in cases
        )
        print(f"corpus: google protobuf re-serializes {same}/{len(cases)} frames byte for byte "
              "(its MessageToDict output still needs the wire-to-event mapping our codec does)")  # fmt: skip
    decoded = sum(
        agui_msgspec._wire.protobuf.decode_frame(bytes.fromhex(c["hex"])) == e["event"]
        for c, e in zip(cases, json.loads((CORPUS / "corpus-events.json").read_text()), strict=True)
    )
    print(
        f"corpus: agui-msgspec decodes {decoded}/{len(cases)} frames to the events they came from"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
