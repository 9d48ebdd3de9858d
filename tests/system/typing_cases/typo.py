"""What the types must catch: a misspelt field of the input a server reads (test_typing)."""

from __future__ import annotations

import agui_msgspec as agui


def server(body: bytes) -> str:
    inp = agui.parse_run_input(body)
    return inp.thread_idd
