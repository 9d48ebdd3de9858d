"""The Python half of ``nox -s proto_parity`` (the node half is proto_corpus.mjs).

``python tests/node/parity.py encode EVENTS.json OUT.json`` writes our encoding of each
corpus event (hex); ``python tests/node/parity.py check EVENTS.json DECODED.json`` checks
that @ag-ui/proto decoded those bytes back to the corpus events. The one difference
allowed: protobuf cannot tell an empty list from an absent one, and @ag-ui/proto gives
a RunAgentInput's absent lists as [].
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from agui_msgspec import encode_proto


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


def main(mode: str, events_path: str, other_path: str) -> int:
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
    sys.exit(main(*sys.argv[1:4]))
