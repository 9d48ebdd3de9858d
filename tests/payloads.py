"""Event payloads for tests, as a producer would send them: wire-named JSON bytes."""

from __future__ import annotations

from typing import Any

import msgspec


def wire_event(**fields: Any) -> bytes:
    """One event's payload: ``wire_event(type="RUN_STARTED", threadId="t", runId="r")``."""
    return msgspec.json.encode(fields)


def in_run(*payloads: bytes) -> list[bytes]:
    """``payloads`` inside one run of thread ``t``, run ``r``: RUN_STARTED first, RUN_FINISHED last."""
    return [
        wire_event(type="RUN_STARTED", threadId="t", runId="r"),
        *payloads,
        wire_event(type="RUN_FINISHED", threadId="t", runId="r"),
    ]
