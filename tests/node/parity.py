"""The Python half of ``nox -s proto_parity`` (the node half is proto_corpus.mjs).

``python tests/node/parity.py encode EVENTS.json OUT.json`` writes our encoding of each
corpus event (hex); ``python tests/node/parity.py check EVENTS.json DECODED.json`` checks
that @ag-ui/proto decoded those bytes back to the corpus events. The one difference
allowed: protobuf cannot tell an empty list from an absent one, and @ag-ui/proto gives
a RunAgentInput's absent lists as [].

One encoding per event: ``python tests/node/parity.py cases STREAMS_DIR CORPUS.json
GIVEN.json FULL.json`` writes every conformance stream event and corpus event that decodes
as a Struct, as given and written in full (:func:`in_full`); ``python tests/node/parity.py
same GIVEN.json FULL.json GIVEN_FRAMES.json FULL_FRAMES.json`` checks, on each the reference
encodes, that the dict gives the reference's bytes of it as given, and the Struct and the
full dict the reference's bytes of the full event.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from agui_msgspec import encode_proto, v1_1

ROOT = Path(__file__).resolve().parents[2]
_EVENTS = json.loads((ROOT / "schema" / "1.1" / "schema.json").read_text(encoding="utf-8"))["$defs"]


def in_full(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` with every property its event type's schema gives a ``default`` and the
    event leaves out written with that default: the event a Struct of it holds."""
    definition = next(
        (d for d in _EVENTS.values() if _pinned_type(d) == event.get("type")), {"properties": {}}
    )
    defaults = {
        name: prop["default"]
        for name, prop in definition.get("properties", {}).items()
        if "default" in prop
    }
    return {**event, **{k: v for k, v in defaults.items() if k not in event}}


def _pinned_type(definition: dict[str, Any]) -> Any:
    return definition.get("properties", {}).get("type", {}).get("const")


def without_empty_lists(value: Any, like: Any) -> Any:
    """``value`` less the empty lists that ``like`` does not have."""
    if isinstance(value, dict):
        like = like if isinstance(like, dict) else {}
        return {
            k: without_empty_lists(v, like.get(k))
            for k, v in value.items()
            if not (v == [] and k not in like)
        }
    if isinstance(value, list) and isinstance(like, list) and len(like) == len(value):
        return [without_empty_lists(v, w) for v, w in zip(value, like, strict=True)]
    return value


def write_cases(streams: str, corpus: str, given_path: str, full_path: str) -> int:
    events = [
        (f"{path.stem}#{index}", event)
        for path in sorted(Path(streams).glob("*.json"))
        for index, event in enumerate(json.loads(path.read_text(encoding="utf-8"))["stream"])
    ]
    events += [(c["name"], c["event"]) for c in json.loads(Path(corpus).read_text("utf-8"))]
    given, full = [], []
    for name, event in events:
        try:
            v1_1.event_decoder.decode(json.dumps(event))
        except Exception:  # not an event a producer holds as a Struct: nothing to compare
            continue
        given.append({"name": name, "event": event})
        full.append({"name": name, "event": in_full(event)})
    Path(given_path).write_text(json.dumps(given) + "\n")
    Path(full_path).write_text(json.dumps(full) + "\n")
    print(f"{len(given)} of {len(events)} events decode as Structs")
    return 0


def check_same(given_path: str, full_path: str, given_frames: str, full_frames: str) -> int:
    given = json.loads(Path(given_path).read_text(encoding="utf-8"))
    full = {c["name"]: c["event"] for c in json.loads(Path(full_path).read_text("utf-8"))}
    frames = {f["name"]: f.get("hex") for f in json.loads(Path(given_frames).read_text())}
    full_hex = {f["name"]: f.get("hex") for f in json.loads(Path(full_frames).read_text())}
    compared = wrong = 0
    for case in given:
        name, event = case["name"], case["event"]
        if not frames.get(name) or not full_hex.get(name):
            continue  # the reference does not encode it (it writes nothing): no parity to check
        compared += 1
        struct = v1_1.event_decoder.decode(json.dumps(event))
        found = {
            "dict": encode_proto(event).hex(),
            "struct": encode_proto(struct).hex(),
            "full dict": encode_proto(full[name]).hex(),
        }
        expected = {"dict": frames[name], "struct": full_hex[name], "full dict": full_hex[name]}
        differing = [form for form, hex_ in found.items() if hex_ != expected[form]]
        if differing:
            wrong += 1
            print(f"{name}: our {', '.join(differing)} bytes differ from @ag-ui/proto's")
    print(f"Struct, dict and @ag-ui/proto bytes: {compared - wrong} of {compared} events equal")
    return 1 if wrong or not compared else 0


def main(mode: str, events_path: str, other_path: str, *more: str) -> int:
    if mode == "cases":
        return write_cases(events_path, other_path, *more)
    if mode == "same":
        return check_same(events_path, other_path, *more)
    cases = json.loads(Path(events_path).read_text(encoding="utf-8"))
    if mode == "encode":
        ours = [{"name": c["name"], "hex": encode_proto(c["event"]).hex()} for c in cases]
        Path(other_path).write_text(json.dumps(ours, indent=1) + "\n")
        return 0
    decoded = {c["name"]: c["event"] for c in json.loads(Path(other_path).read_text())}
    wrong = [
        c["name"]
        for c in cases
        if without_empty_lists(decoded[c["name"]], c["event"]) != c["event"]
    ]
    for name in wrong:
        print(f"@ag-ui/proto decodes our {name} differently: {decoded[name]}")
    print(f"@ag-ui/proto decoded {len(cases) - len(wrong)} of our {len(cases)} encodings back")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
