"""Memory measured structurally, never by the clock: the peak an action allocates."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

MiB = 1024 * 1024


def peak_bytes(action: Callable[[], Any]) -> tuple[Any, int]:
    """What ``action`` returns, and the peak of memory it allocated on the way."""
    tracemalloc.start()
    try:
        result = action()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
