"""The ``RunAgentInput``: read on the receiving end, enforced before it is sent.

``parse_run_input`` is the server's side: the request body as a typed input, with
what the version does not recognise stripped (spec: basic/run-input, Error
Handling). ``build_run_input`` is the client's outgoing check. (``read_input`` and
``prepare_input``, their names before, warn and work for one release.)

``build_run_input`` (spec: basic/processing and basic/run-input): before anything is sent, what the
version does not recognise is stripped with a warning, a malformed known field
is fatal, activity messages (the application's own) are removed, and the
consumer declares the protocol version it speaks. A resume after an interrupted
run must cover every interrupt (spec: basic/patterns/interrupt-resume), and may
only abandon, never resolve, one that has expired.
"""

from __future__ import annotations

import decimal
import re
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date, datetime, time, timedelta, timezone
from typing import TYPE_CHECKING, Any, Literal, overload

import msgspec

from agui_msgspec._documents import is_official, official_document, plain_text, strict_json
from agui_msgspec._errors import (
    MalformedEvent,
    MalformedInput,
    UsageError,
    checked_callback,
    wrong_type,
)
from agui_msgspec._json import json_kind, pointer_from_msgspec, pointer_token
from agui_msgspec._pipeline.compat import downgrade_for_peer, read_peer_version, translate_input
from agui_msgspec._pipeline.enforce import Enforcer
from agui_msgspec._pipeline.warnings import DEFAULT_MAX_WARNINGS, WarningLog, told
from agui_msgspec._versions import (
    LATEST_VERSION,
    Bindings,
    VersionLike,
    bindings_for,
    parse_version,
)

if TYPE_CHECKING:
    from agui_msgspec import v1_0, v1_1

_TOO_DEEP = "the input nests too deeply"
# Values msgspec writes as JSON strings of its own choosing: an input holding one is refused.
_NOT_JSON = (
    bytes,
    bytearray,
    memoryview,
    datetime,
    date,
    time,
    timedelta,
    uuid.UUID,
    decimal.Decimal,
)
_MISSING_FIELD = re.compile(r"Object missing required field `((?:[^`\\]|\\.)*)`")


@overload
def build_run_input(
    input: Any,
    version: Literal["1.1"] = ...,
    *,
    on_warning: Callable[[str], None] | None = None,
    peer_version: str | None = None,
    interrupts: Iterable[Any] = (),
    now: datetime | None = None,
) -> v1_1.RunAgentInput: ...
@overload
def build_run_input(
    input: Any,
    version: Literal["1.0"],
    *,
    on_warning: Callable[[str], None] | None = None,
    peer_version: str | None = None,
    interrupts: Iterable[Any] = (),
    now: datetime | None = None,
) -> v1_0.RunAgentInput: ...
# A version string names a shipped version (any other raises UsageError): one of theirs.
@overload
def build_run_input(
    input: Any,
    version: str,
    *,
    on_warning: Callable[[str], None] | None = None,
    peer_version: str | None = None,
    interrupts: Iterable[Any] = (),
    now: datetime | None = None,
) -> v1_1.RunAgentInput | v1_0.RunAgentInput: ...
@overload
def build_run_input(
    input: Any,
    version: Bindings,
    *,
    on_warning: Callable[[str], None] | None = None,
    peer_version: str | None = None,
    interrupts: Iterable[Any] = (),
    now: datetime | None = None,
) -> Any: ...
def build_run_input(
    input: Any,
    version: VersionLike = LATEST_VERSION,
    *,
    on_warning: Callable[[str], None] | None = None,
    peer_version: str | None = None,
    interrupts: Iterable[Any] = (),
    now: datetime | None = None,
) -> Any:
    """The client's side: the input as it will be sent, as a ``RunAgentInput`` Struct; raises
    :class:`MalformedInput`. Each warning (a stripped path, a removed activity message) goes
    to ``on_warning``.

    ``version`` is the protocol version the consumer speaks (or generated bindings; a
    module whose ``PROTOCOL_VERSION`` is not ``MAJOR.MINOR``, a draft, declares nothing,
    with a warning); ``peer_version`` that of a peer known to speak an older one: a peer
    from before 1.0 is not sent ``protocolVersion``, and one from before content parts
    (0.0.39) gets message content flattened to text. ``interrupts`` are those of the run
    this input resumes (``Run.interrupts`` of an interrupted run); ``now`` is when an
    ``expiresAt`` is judged (default: the clock).
    """
    report = told(on_warning)
    interrupts = _checked_interrupts(interrupts)
    if now is not None and not isinstance(now, datetime):
        raise wrong_type("now=", now, "a datetime or None")
    if now is not None and now.tzinfo is None:  # read as UTC, as an expiresAt without a zone is
        now = now.replace(tzinfo=timezone.utc)
    if peer_version is not None:
        read_peer_version(peer_version)  # a UsageError for one that is no version
    if isinstance(version, str):
        if parse_version(version, "pin") is None:
            raise UsageError(f"protocol version {version[:40]!r} is not MAJOR.MINOR")
        if _declarable(version) is None:  # an era pin (0.0.39): the peer's, not ours
            peer_version, version = peer_version or version, LATEST_VERSION
    bindings = bindings_for(version)
    declared = None
    if peer_version is None or _declarable(peer_version) is not None:
        declared = _declarable(bindings.PROTOCOL_VERSION)
        if declared is None:
            report(
                f"input /protocolVersion: the bindings' version {bindings.PROTOCOL_VERSION!r} "
                "is not MAJOR.MINOR; no version is declared"
            )

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
        if peer_version is not None:
            downgrade_for_peer(document, peer_version, report)

    prepared = typed_input(input, bindings, report, adjust=outgoing)
    _check_resume(prepared.resume or [], interrupts, now or datetime.now(timezone.utc))
    return prepared


def _checked_interrupts(interrupts: object) -> list[Any]:
    """``interrupts`` as a list, if each is an ``Interrupt`` (a Struct with a string ``id``)."""
    if isinstance(interrupts, (str, bytes, Mapping)) or not isinstance(interrupts, Iterable):
        raise wrong_type("interrupts=", interrupts, "a sequence of interrupts (Run.interrupts)")
    taken = list(interrupts)
    for interrupt in taken:
        is_interrupt = isinstance(interrupt, msgspec.Struct) and "id" in interrupt.__struct_fields__
        if not (is_interrupt and isinstance(interrupt.id, str)):
            raise wrong_type("interrupts=", interrupt, "interrupts (Run.interrupts)")
    return taken


@overload
def parse_run_input(
    body: Any,
    version: Literal["1.1"] = ...,
    *,
    on_warning: Callable[[str], None] | None = None,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
) -> v1_1.RunAgentInput: ...
@overload
def parse_run_input(
    body: Any,
    version: Literal["1.0"],
    *,
    on_warning: Callable[[str], None] | None = None,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
) -> v1_0.RunAgentInput: ...
@overload
def parse_run_input(
    body: Any,
    version: str,
    *,
    on_warning: Callable[[str], None] | None = None,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
) -> v1_1.RunAgentInput | v1_0.RunAgentInput: ...
@overload
def parse_run_input(
    body: Any,
    version: Bindings,
    *,
    on_warning: Callable[[str], None] | None = None,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
) -> Any: ...
def parse_run_input(
    body: Any,
    version: VersionLike = LATEST_VERSION,
    *,
    on_warning: Callable[[str], None] | None = None,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
) -> Any:
    """The server's side: a request body as this version's ``RunAgentInput``.

    ``body`` is the JSON text (bytes or str), a wire-named dict, a ``RunAgentInput`` Struct or
    an official ``ag-ui-protocol`` model. Unrecognised material is stripped, one warning per
    path to ``on_warning`` (spec: basic/run-input, Error Handling); nothing else changes. A
    body that is not JSON, not an object, or has a known field the schema rejects raises
    ``MalformedInput(rule="malformed-input")`` with the JSON Pointer ``path``: answer it
    with an HTTP error status, as the run never started. The warnings are bounded as a
    stream's kept ones are (``max_warnings`` distinct, then one line counts the rest, each
    one cut), as a body is one client's to make long; they are said once the body is read,
    a malformed one's included.
    """
    log = WarningLog(max_warnings)
    checked_callback("on_warning=", on_warning)
    try:
        return _parsed(body, bindings_for(version), log)
    finally:
        if on_warning is not None:
            for message in log.kept:
                on_warning(message)


def _parsed(body: Any, bindings: Bindings, log: WarningLog) -> Any:
    if isinstance(body, (bytes, bytearray, memoryview, str)):
        try:
            body = msgspec.json.decode(plain_text(body))
        except (msgspec.DecodeError, UnicodeError) as exc:
            raise _malformed(f"not JSON: {exc}") from None
        except RecursionError:
            raise _malformed(_TOO_DEEP) from None
        return typed_input(body, bindings, log.warn, decoded=True)
    return typed_input(body, bindings, log.warn)


@overload
def read_input(
    body: Any, version: Literal["1.1"] = ..., *, max_warnings: int = DEFAULT_MAX_WARNINGS
) -> tuple[v1_1.RunAgentInput, list[str]]: ...
@overload
def read_input(
    body: Any, version: Literal["1.0"], *, max_warnings: int = DEFAULT_MAX_WARNINGS
) -> tuple[v1_0.RunAgentInput, list[str]]: ...
@overload
def read_input(
    body: Any, version: str, *, max_warnings: int = DEFAULT_MAX_WARNINGS
) -> tuple[v1_1.RunAgentInput | v1_0.RunAgentInput, list[str]]: ...
@overload
def read_input(
    body: Any, version: Bindings, *, max_warnings: int = DEFAULT_MAX_WARNINGS
) -> tuple[Any, list[str]]: ...
def read_input(
    body: Any,
    version: VersionLike = LATEST_VERSION,
    *,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
) -> tuple[Any, list[str]]:
    """Deprecated: :func:`parse_run_input`, which returns the input alone and says the
    warnings to ``on_warning``. This returns ``(input, warnings)``, as it did."""
    warnings.warn(
        "read_input is deprecated: use parse_run_input(body, version, on_warning=...), "
        "which returns the input alone",
        DeprecationWarning,
        stacklevel=2,
    )
    log = WarningLog(max_warnings)
    return _parsed(body, bindings_for(version), log), log.kept


@overload
def prepare_input(
    input: Any,
    version: Literal["1.1"] = ...,
    warn: Callable[[str], None] | None = None,
    *,
    peer_version: str | None = None,
    interrupts: Iterable[Any] = (),
    now: datetime | None = None,
) -> v1_1.RunAgentInput: ...
@overload
def prepare_input(
    input: Any,
    version: Literal["1.0"],
    warn: Callable[[str], None] | None = None,
    *,
    peer_version: str | None = None,
    interrupts: Iterable[Any] = (),
    now: datetime | None = None,
) -> v1_0.RunAgentInput: ...
@overload
def prepare_input(
    input: Any,
    version: str,
    warn: Callable[[str], None] | None = None,
    *,
    peer_version: str | None = None,
    interrupts: Iterable[Any] = (),
    now: datetime | None = None,
) -> v1_1.RunAgentInput | v1_0.RunAgentInput: ...
@overload
def prepare_input(
    input: Any,
    version: Bindings,
    warn: Callable[[str], None] | None = None,
    *,
    peer_version: str | None = None,
    interrupts: Iterable[Any] = (),
    now: datetime | None = None,
) -> Any: ...
def prepare_input(
    input: Any,
    version: VersionLike = LATEST_VERSION,
    warn: Callable[[str], None] | None = None,
    *,
    peer_version: str | None = None,
    interrupts: Iterable[Any] = (),
    now: datetime | None = None,
) -> Any:
    """Deprecated: :func:`build_run_input` (``warn`` is its ``on_warning``)."""
    warnings.warn(
        "prepare_input is deprecated: use build_run_input(input, version, on_warning=...)",
        DeprecationWarning,
        stacklevel=2,
    )
    return build_run_input(
        input, version, on_warning=warn, peer_version=peer_version, interrupts=interrupts, now=now
    )


def typed_input(
    input: Any,
    bindings: Bindings,
    warn: Callable[[str], None],
    *,
    adjust: Callable[[dict[str, Any]], None] | None = None,
    decoded: bool = False,
) -> Any:
    """``input`` (a Struct of any version, an official model, or a wire-named dict) as this
    version's ``RunAgentInput``: unknown material stripped with a warning, malformed fields fatal.

    ``adjust`` may change the cleaned document before it is typed. ``decoded``: ``input`` was
    just decoded from JSON text, so it holds JSON types only and is this call's to change.
    """
    if isinstance(input, msgspec.Struct):
        try:
            document = msgspec.to_builtins(input)
        except RecursionError:
            raise _malformed(_TOO_DEEP) from None
    elif is_official(input):
        try:
            document = official_document(input)
        except MalformedEvent as unreadable:
            raise _malformed(unreadable.detail) from None
    else:
        document = input
    if not isinstance(document, dict):
        raise _malformed(f"a RunAgentInput is a JSON object, got {json_kind(document)}")
    try:  # a private copy to clean, in plain JSON types: NaN or bytes are refused, not rewritten
        if not decoded:  # Structs inside become dicts; what JSON has no form for is refused
            builtins = msgspec.to_builtins(document, builtin_types=_NOT_JSON)
            document = msgspec.json.decode(strict_json(builtins))
        translate_input(document, warn, own=True)  # the compatibility boundary sees it first
        enforcer = Enforcer(bindings, warn)
        cleaned = enforcer.clean(document, bindings.RunAgentInput, "input")
    except (TypeError, ValueError, msgspec.DecodeError) as exc:
        raise _malformed(f"not JSON: {exc}") from None
    except RecursionError:
        raise _malformed(_TOO_DEEP) from None
    if not isinstance(cleaned, dict):
        raise _malformed(cleaned.reason)
    typed = _typed(cleaned, bindings, enforcer)
    if adjust is None:
        return typed
    # judged as given first: an adjustment (flattening parts to text) must not hide a malformed field
    adjust(cleaned)
    return _typed(cleaned, bindings, enforcer)


def _typed(cleaned: dict[str, Any], bindings: Bindings, enforcer: Enforcer) -> Any:
    try:
        return msgspec.convert(cleaned, bindings.RunAgentInput)
    except RecursionError:
        raise _malformed(_TOO_DEEP) from None
    except msgspec.ValidationError as exc:
        message = str(exc)
        # a path into the cleaned document names the element as received
        path = enforcer.as_received(pointer_from_msgspec(message), cleaned)
        missing = _MISSING_FIELD.match(message)
        if missing is not None:  # msgspec places a missing field at its container
            path += "/" + pointer_token(missing.group(1))
        raise _malformed(message.partition(" - at `")[0], path) from None


def _malformed(detail: str, path: str = "") -> MalformedInput:
    return MalformedInput("malformed-input", detail, path=path, subject="request body")


def _check_resume(entries: Sequence[Any], interrupts: Iterable[Any], now: datetime) -> None:
    answered = {entry.interrupt_id: entry for entry in entries}
    for interrupt in interrupts:
        entry = answered.get(interrupt.id)
        if entry is None:
            raise MalformedInput(
                "resume-uncovered",
                f"the resume leaves interrupt {interrupt.id!r} without an entry",
                path="/resume",
                subject="request body",
            )
        if entry.status == "resolved" and _expired(interrupt.expires_at, now):
            raise MalformedInput(
                "resume-expired",
                f"interrupt {interrupt.id!r} expired at {interrupt.expires_at}; "
                "it may only be cancelled",
                path="/resume",
                subject="request body",
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
    pinned = parse_version(version, "pin")
    if pinned is None or pinned.major == "0":
        return None
    return f"{pinned.major}.{pinned.minor}"
