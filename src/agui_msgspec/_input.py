"""Outgoing enforcement: the ``RunAgentInput`` a consumer is about to send.

Spec: basic/processing and basic/run-input. Before anything is sent, what the
version does not recognise is stripped with a warning, a malformed known field
is fatal, activity messages (the application's own) are removed, and the
consumer declares the protocol version it speaks. A resume after an interrupted
run must cover every interrupt (spec: basic/patterns/interrupt-resume), and may
only abandon, never resolve, one that has expired.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from types import ModuleType
from typing import Any

import msgspec

from agui_msgspec._enforce import Enforcer, pointer_from_msgspec
from agui_msgspec._errors import MalformedEvent, UsageError
from agui_msgspec._versions import LATEST_VERSION, bindings_for, version_key


def prepare_input(
    input: Any,
    version: str | ModuleType = LATEST_VERSION,
    warn: Callable[[str], None] | None = None,
    *,
    interrupts: Sequence[Any] = (),
    now: datetime | None = None,
) -> Any:
    """The input as it will be sent, as a ``RunAgentInput`` Struct; raises MalformedEvent.

    ``interrupts`` are those of the run this input resumes (``Run.interrupts`` of an
    interrupted run); ``now`` is when an ``expiresAt`` is judged (default: the clock).
    ``version`` is a version string or a generated bindings module; a module whose
    ``PROTOCOL_VERSION`` is not ``MAJOR.MINOR`` (a draft) declares nothing, with a warning.
    """
    report = warn or (lambda _message: None)
    if isinstance(version, ModuleType):
        bindings = bindings_for(version)
        declared = _declarable(bindings.PROTOCOL_VERSION)
        if declared is None:
            report(
                f"input /protocolVersion: the bindings' version {bindings.PROTOCOL_VERSION!r} "
                "is not MAJOR.MINOR; no version is declared"
            )
    else:
        declared = _declarable(version)
        if declared is None and not _era_pin(version):
            raise UsageError(f"protocol version {version[:40]!r} is not MAJOR.MINOR")
        bindings = bindings_for(declared or LATEST_VERSION)

    def outgoing(document: dict[str, Any]) -> None:
        messages = document.get("messages")
        if isinstance(messages, list):
            kept = [
                m for m in messages if not (isinstance(m, dict) and m.get("role") == "activity")
            ]
            if len(kept) != len(messages):
                report(f"input /messages: removed {len(messages) - len(kept)} activity message(s)")
                document["messages"] = kept
        if declared is None:
            document.pop("protocolVersion", None)  # a pre-1.0 peer predates version negotiation
        else:
            document["protocolVersion"] = declared

    prepared = read_input(input, bindings, report, adjust=outgoing)
    _check_resume(prepared.resume or [], interrupts, now or datetime.now(timezone.utc))
    return prepared


def read_input(
    input: Any,
    bindings: ModuleType,
    warn: Callable[[str], None],
    *,
    adjust: Callable[[dict[str, Any]], None] | None = None,
) -> Any:
    """``input`` (a Struct of any version, or a wire-named dict) as this version's
    ``RunAgentInput``: unknown material stripped with a warning, malformed fields fatal.

    ``adjust`` may change the cleaned document before it is typed.
    """
    document = msgspec.to_builtins(input) if isinstance(input, msgspec.Struct) else input
    if not isinstance(document, dict):
        raise MalformedEvent("malformed-input", "a RunAgentInput is a JSON object")
    try:  # a private copy to clean, in plain JSON types
        document = msgspec.json.decode(msgspec.json.encode(document))
    except (TypeError, ValueError, msgspec.DecodeError) as exc:
        raise MalformedEvent("malformed-input", f"input is not JSON: {exc}") from None
    cleaned = Enforcer(bindings, warn).clean(document, bindings.RunAgentInput, "input")
    if not isinstance(cleaned, dict):
        raise MalformedEvent("malformed-input", f"input: {cleaned.reason}")
    if adjust is not None:
        adjust(cleaned)
    try:
        return msgspec.convert(cleaned, bindings.RunAgentInput)
    except msgspec.ValidationError as exc:
        raise MalformedEvent(
            "malformed-input", f"input: {exc}", path=pointer_from_msgspec(str(exc))
        ) from None


def _check_resume(entries: Sequence[Any], interrupts: Sequence[Any], now: datetime) -> None:
    answered = {entry.interrupt_id: entry for entry in entries}
    for interrupt in interrupts:
        entry = answered.get(interrupt.id)
        if entry is None:
            raise MalformedEvent(
                "resume-uncovered",
                f"input: the resume leaves interrupt {interrupt.id!r} without an entry",
                path="/resume",
            )
        if entry.status == "resolved" and _expired(interrupt.expires_at, now):
            raise MalformedEvent(
                "resume-expired",
                f"input: interrupt {interrupt.id!r} expired at {interrupt.expires_at}; "
                "it may only be cancelled",
                path="/resume",
            )


def _expired(expires_at: Any, now: datetime) -> bool:
    if not isinstance(expires_at, str):
        return False
    try:
        moment = datetime.fromisoformat(expires_at.replace("Z", "+00:00"))
    except ValueError:
        return False  # an unreadable expiry is not grounds to refuse the user's answer
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment <= now


def _declarable(version: str) -> str | None:
    """The MAJOR.MINOR this consumer declares (``1`` declares ``1.0``), or None for a
    pre-versioning era pin (``0.x``) and a version that is not a number (a draft)."""
    key = _version_key(version)
    if key is None or _era_pin(version):
        return None
    major, minor = key
    return f"{major[1]}.{minor[1] or '0'}"


def _era_pin(version: str) -> bool:
    """A version from before negotiation: major 0 (``0.0.39``)."""
    key = _version_key(version)
    return key is not None and key[0][0] == 0


def _version_key(version: str) -> tuple[tuple[int, str], tuple[int, str]] | None:
    return version_key(version if "." in version else f"{version}.0")
