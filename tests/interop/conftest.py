"""The interop cases: the harness gets pytest's assertion messages, and a framework's own
session (``AGUI_INTEROP`` names it) runs that framework's cases only."""

from __future__ import annotations

import os

import pytest

pytest.register_assert_rewrite("interop_harness")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    session = os.environ.get("AGUI_INTEROP")
    if session is None:
        return
    others = [item for item in items if _producer_of(item) not in (None, session)]
    if others:
        config.hook.pytest_deselected(items=others)
        dropped = set(others)
        items[:] = [item for item in items if item not in dropped]


def _producer_of(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    producer = callspec.params.get("producer") if callspec is not None else None
    return getattr(producer, "name", None)
