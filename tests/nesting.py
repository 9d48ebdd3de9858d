"""Values nested past a depth bound, for the tests of the bounds that refuse them."""

from __future__ import annotations

from typing import Any


def nested_lists(depth: int) -> list[Any]:
    """``[[...[]...]]``: ``depth`` lists, each the only item of the one around it."""
    outer: list[Any] = []
    inner = outer
    for _ in range(depth - 1):
        inner.append([])
        inner = inner[0]
    return outer
