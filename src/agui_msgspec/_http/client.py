"""An HTTP + SSE client for AG-UI agents (spec: basic/transports/http-sse), on httpx.

:class:`HttpAgent` POSTs a ``RunAgentInput`` and runs the reply through the
whole consumer pipeline (SSE reader, then :class:`~agui_msgspec.Consumer`) as
the bytes arrive. Names follow ``@ag-ui/client``: ``run`` streams the events,
``run_agent`` awaits the result.

How a run can end, and what the caller sees:

- the endpoint answers with an error status, or with something other than an
  event stream: :class:`HttpAgentError`, before any event (the run never started);
- the stream breaks a rule: :class:`ProtocolViolation`, raised where iteration
  stands, after every event before it was delivered;
- the body ends with a run still active, or inside an event:
  ``ProtocolViolation(rule="truncated")``; never a success, and what was
  delivered stays delivered (``RunStream.messages``);
- the transport fails: :class:`TransportError` with rule ``connect`` (no
  connection, or the request could not be sent), ``timeout`` (no byte for
  ``timeout`` seconds), ``cut`` (the connection broke inside the body),
  ``decode`` (a compressed body that does not inflate), ``deadline`` (the run
  outlived ``deadline``), ``event-timeout`` (an event began arriving and did not
  complete within ``event_timeout``), or ``stacked-encoding``/``unknown-encoding`` (a
  ``Content-Encoding`` the agent did not ask for). No httpx exception escapes.
  A failure after the last run ended is a warning, not an error;
- otherwise the awaited result is a :class:`RunResult`, whose ``status`` is the last run's:
  ``completed``, ``interrupted``, ``cancelled``, or ``failed`` when it reported
  ``RUN_ERROR`` (a conformant end: the event is its ``error``, and
  :meth:`RunResult.raise_for_status` raises :class:`RunFailed` for code that wants it).

The agent asks for ``gzip`` or ``deflate`` at most and inflates the raw body
itself (``_http/inflate.py``), at most :data:`INFLATE_PIECE` bytes at a time, each piece framed before
the next is made: memory stays within ``max_event_size`` and a piece, whatever
the compression ratio.

httpx is the optional ``http`` extra, imported only when an agent is made; asyncio (and the
ssl and socket it brings) only when a run starts, so ``import agui_msgspec`` stays light.
"""

from __future__ import annotations

import contextlib
import functools
import re
import zlib
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, TypeVar, cast, overload

import msgspec

from agui_msgspec._documents import is_official
from agui_msgspec._errors import (
    HttpAgentError,
    ProtocolViolation,
    RunFailed,
    StreamError,
    TransportError,
    UsageError,
    checked_bound,
    checked_callback,
    wrong_type,
)
from agui_msgspec._http.inflate import ACCEPT_ENCODING, Inflater, content_coding
from agui_msgspec._json import encode_json
from agui_msgspec._pipeline.compat import read_peer_version
from agui_msgspec._pipeline.consumer import Consumer
from agui_msgspec._pipeline.decode import EventT, MessageT
from agui_msgspec._pipeline.input import build_run_input
from agui_msgspec._pipeline.run import Run, RunStatus, RunT
from agui_msgspec._versions import LATEST_VERSION, Bindings, VersionLike, bindings_for
from agui_msgspec._wire.protobuf import PROTOBUF_MEDIA_TYPE
from agui_msgspec._wire.text import DEFAULT_MAX_EVENT_SIZE, SSE_MEDIA_TYPE

if TYPE_CHECKING:
    import ssl

    import ag_ui.core
    import httpx

    from agui_msgspec import v1_0, v1_1
    from agui_msgspec._pipeline.decode import EventOfEither, MessageOfEither
    from agui_msgspec._pipeline.run import Run1_0, RunOfEither

RunInput: TypeAlias = "msgspec.Struct | dict[str, Any] | ag_ui.core.RunAgentInput"
"""What a run starts from: a ``RunAgentInput`` Struct, a wire-named dict, or the official one."""

DEFAULT_TIMEOUT = 60.0
DEFAULT_EVENT_TIMEOUT = 60.0
"""Seconds one event may take to arrive once its first byte has (keep-alives do not renew it)."""
_MAX_REDIRECTS = 5  # same-origin 307/308 hops followed, when the client follows redirects
INFLATE_PIECE = 64 * 1024
"""The most a compressed body inflates to in one step, before the reader frames it."""
_EXCERPT_BYTES = 2048
# Both bindings, named: the protobuf one needs no extra dependency, and a server that does
# not support it answers SSE (spec: basic/transports/http-protobuf, Negotiation).
_ACCEPT = f"{SSE_MEDIA_TYPE}, {PROTOBUF_MEDIA_TYPE}"
# RFC 9110 §5.1 and §5.5: a name is a token; a value has no control character but tab inside
# and no white space at either end (h11, under httpx, refuses anything else when it sends).
_HEADER_NAME = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HEADER_VALUE = re.compile(rb"(?:[\x21-\x7e\x80-\xff]+(?:[ \t]+[\x21-\x7e\x80-\xff]+)*)?")
T = TypeVar("T")
ErrorT = TypeVar("ErrorT")  # RunResult.error reads its run's error type out of RunT by self type


@dataclass
class RunResult(Generic[MessageT, RunT]):
    """What a run left: the result of ``run_agent`` and ``RunStream.result()``, a failed run's
    too (``status == "failed"``; :meth:`raise_for_status` raises for it).

    Its Structs are the agent's version's: ``RunResult[v1_1.Message, Run]`` (a bare
    ``RunResult``) for the default, ``v1_0``'s for ``version="1.0"``.
    """

    runs: list[RunT]
    """Every run the stream carried, in order; the last is the one this request started."""
    messages: list[MessageT]
    """The conversation after the run: the input's messages as updated, then new ones (Structs)."""
    new_messages: list[MessageT]
    """The messages whose ids the input did not have (``newMessages`` in ``@ag-ui/client``)."""
    state: v1_1.State
    """The agent state after the run: any JSON value."""
    warnings: list[str] = field(default_factory=list)
    """What was stripped or dropped, from the outgoing input and the incoming events."""

    @property
    def run(self) -> RunT:
        """The run this request started: ``.status``, ``.outcome``, ``.interrupts``, ``.usage``."""
        return self.runs[-1]

    @property
    def status(self) -> RunStatus:
        """How the run this request started ended: ``completed``, ``interrupted``,
        ``cancelled``, or ``failed`` (it reported ``RUN_ERROR``: see :attr:`error`)."""
        return self.run.status

    @property
    def error(self: RunResult[Any, Run[Any, Any, ErrorT, Any]]) -> ErrorT | None:
        """The run's ``RunErrorEvent`` when it failed, else None."""
        return self.run.error

    def raise_for_status(self) -> RunResult[MessageT, RunT]:
        """Raise :class:`RunFailed` if the run failed (``RUN_ERROR``); else return the result,
        so ``result = (await agent.run_agent(input)).raise_for_status()`` reads as one step."""
        if self.run.status == "failed":
            raise RunFailed(self)
        return self


class HttpAgent(Generic[EventT, MessageT, RunT]):
    """An AG-UI agent behind an HTTP endpoint.

    ``headers`` are sent with every request (authorization, say); ``Accept``,
    ``Content-Type`` and ``Accept-Encoding`` are the agent's and cannot be
    overridden. ``version`` is
    the protocol version this client speaks and declares (or a bindings module). ``timeout`` is in
    seconds, for connecting and for each wait between received bytes (a run may
    stream for as long as it keeps sending); ``None`` waits forever; it applies
    to ``client`` too. ``deadline`` bounds a whole run in seconds, from the
    request to the end of the body, however steadily bytes arrive (``None``, the
    default: no bound). ``event_timeout`` bounds
    how long one event may take to arrive once its first byte has, keep-alive comments
    included, and an error status's body excerpt (60 s; ``None``: no bound). ``max_event_size``
    bounds one event (bytes). Pass
    ``client`` to share a connection pool, or to bring auth, proxies or a mock
    transport; the agent never closes a client it was given, and makes (and
    closes) one per run otherwise, all sharing one TLS context made at the first run
    (httpx's default trust store, as the environment names it then). ``peer_version`` is the protocol version of an
    agent known to speak an older one: the era shims it needs run both ways (README,
    "Older peers").

    Its runs' events, messages and runs are its version's: ``HttpAgent(url)`` is
    ``HttpAgent[v1_1.Event, v1_1.Message, Run]`` (a bare ``HttpAgent``), ``version="1.0"``
    holds ``v1_0``'s, a ``str`` version either version's, and generated bindings give
    ``HttpAgent[Any, Any, Any]``.
    """

    @overload
    def __init__(
        self: HttpAgent[v1_1.Event, v1_1.Message, Run],
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        version: Literal["1.1"] = "1.1",
        timeout: float | None = DEFAULT_TIMEOUT,
        deadline: float | None = None,
        event_timeout: float | None = DEFAULT_EVENT_TIMEOUT,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        client: httpx.AsyncClient | None = None,
        on_warning: Callable[[str], None] | None = None,
        peer_version: str | None = None,
    ) -> None: ...
    @overload
    def __init__(
        self: HttpAgent[v1_0.Event, v1_0.Message, Run1_0],
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        version: Literal["1.0"],
        timeout: float | None = DEFAULT_TIMEOUT,
        deadline: float | None = None,
        event_timeout: float | None = DEFAULT_EVENT_TIMEOUT,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        client: httpx.AsyncClient | None = None,
        on_warning: Callable[[str], None] | None = None,
        peer_version: str | None = None,
    ) -> None: ...
    @overload
    def __init__(
        self: HttpAgent[EventOfEither, MessageOfEither, RunOfEither],
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        version: str,
        timeout: float | None = DEFAULT_TIMEOUT,
        deadline: float | None = None,
        event_timeout: float | None = DEFAULT_EVENT_TIMEOUT,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        client: httpx.AsyncClient | None = None,
        on_warning: Callable[[str], None] | None = None,
        peer_version: str | None = None,
    ) -> None: ...
    @overload
    def __init__(
        self: HttpAgent[Any, Any, Any],
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        version: Bindings,
        timeout: float | None = DEFAULT_TIMEOUT,
        deadline: float | None = None,
        event_timeout: float | None = DEFAULT_EVENT_TIMEOUT,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        client: httpx.AsyncClient | None = None,
        on_warning: Callable[[str], None] | None = None,
        peer_version: str | None = None,
    ) -> None: ...
    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        version: VersionLike = LATEST_VERSION,
        timeout: float | None = DEFAULT_TIMEOUT,
        deadline: float | None = None,
        event_timeout: float | None = DEFAULT_EVENT_TIMEOUT,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        client: httpx.AsyncClient | None = None,
        on_warning: Callable[[str], None] | None = None,
        peer_version: str | None = None,
    ) -> None:
        parsed = checked_url(url)
        import httpx  # noqa: PLC0415  (checked_url said how to get it if it is missing)

        checked_bound("max_event_size", max_event_size, 1)
        checked_callback("on_warning=", on_warning)
        for name, seconds in (
            ("timeout", timeout),
            ("deadline", deadline),
            ("event_timeout", event_timeout),
        ):
            if seconds is not None and (
                not isinstance(seconds, (int, float)) or isinstance(seconds, bool)
            ):
                raise wrong_type(f"{name}=", seconds, "a number of seconds or None")
            if seconds is not None and not seconds > 0:  # NaN too
                raise UsageError(f"{name} must be a positive number of seconds, not {seconds}")
        if client is not None and not isinstance(client, httpx.AsyncClient):
            raise wrong_type("client=", client, "an httpx.AsyncClient or None")
        bindings_for(version)  # an unknown version is a UsageError now, not at the first run
        if peer_version is not None:
            read_peer_version(peer_version)  # likewise
        self.peer_version = peer_version
        self.url = url
        # What messages and repr show: the URL without its user:password.
        self._shown_url = str(parsed.copy_with(username=None, password=None))
        self.version = version
        try:
            self.headers: httpx.Headers = httpx.Headers(headers)
        except (TypeError, ValueError, AttributeError) as exc:  # httpx's, for what it cannot send
            raise UsageError(f"headers= are not HTTP headers: {str(exc)[:200]}") from None
        for header, value in self.headers.raw:
            if not sendable_header(header, value):
                shown = header[:100].decode("latin-1")  # never the value: it may be a credential
                raise UsageError(f"headers= holds {shown!r}, which HTTP cannot send as it is")
        self.headers["Accept"] = _ACCEPT  # replaces any casing of the name
        self.headers["Content-Type"] = "application/json"
        self.headers["Accept-Encoding"] = ACCEPT_ENCODING
        self.timeout = timeout
        self.deadline = deadline
        self.event_timeout = event_timeout
        self.max_event_size = max_event_size
        self.client = client
        self.on_warning = on_warning
        # thread → the interrupts its last run stopped on: the next input must answer them all
        self._open_interrupts: dict[str, list[Any]] = {}

    def __repr__(self) -> str:
        return f"HttpAgent({self._shown_url!r})"

    def run(self, input: RunInput) -> RunStream[EventT, MessageT, RunT]:
        """Start a run: iterate the returned stream for its events, then await ``result()``.

        ``input`` is a ``RunAgentInput`` Struct or wire-named dict; it is enforced
        and declares ``version`` before it is sent (a malformed one raises
        ``MalformedEvent`` here). After a run on the thread stopped on interrupts,
        an input whose ``resume`` leaves one unanswered is refused the same way. The request is made when the stream is entered
        (``async with``) or first iterated.
        """
        return RunStream(self, input)

    async def run_agent(self, input: RunInput) -> RunResult[MessageT, RunT]:
        """Run to the end and return the result (a failed run too: see ``status``); raises as
        :meth:`RunStream.result` does."""
        async with self.run(input) as stream:
            return await stream.result()

    def run_sync(self, input: RunInput) -> RunResult[MessageT, RunT]:
        """:meth:`run_agent` for code without an event loop (it runs one); from inside a running
        loop it raises :class:`UsageError` (await :meth:`run_agent` there)."""
        import asyncio  # noqa: PLC0415

        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop running: the one case run_sync is for
            return asyncio.run(self.run_agent(input))
        raise UsageError("run_sync was called inside a running event loop: await run_agent()")


class RunStream(Generic[EventT, MessageT, RunT]):
    """One run over HTTP: an async iterator of typed events, then :meth:`result`.

    Use it as ``async with agent.run(input) as stream:`` so the response is
    closed however the block ends. Iteration yields each event (chunks expanded)
    as its bytes arrive and raises :class:`ProtocolViolation` where the stream
    breaks a rule or the transport fails (:class:`TransportError`).
    :attr:`messages`, :attr:`state`, :attr:`runs` and :attr:`warnings` are
    live, and keep what was delivered after a failure. Read it from one task: a second
    reader raises :class:`UsageError`, as does reading it after it was closed before its
    end; after a failure every read raises that failure again.
    """

    def __init__(self, agent: HttpAgent[EventT, MessageT, RunT], input: RunInput) -> None:
        self._agent = agent
        thread_id = (
            input.get("threadId")
            if isinstance(input, dict)
            else getattr(input, "thread_id", None)
            if isinstance(input, msgspec.Struct) or is_official(input)
            else None  # anything else is refused by build_run_input, below
        )
        interrupts = agent._open_interrupts.get(thread_id, []) if isinstance(thread_id, str) else []
        early: list[str] = []  # the input's warnings, before the consumer that keeps them exists
        prepared = build_run_input(
            input,
            agent.version,
            on_warning=early.append,
            peer_version=agent.peer_version,
            interrupts=interrupts,
        )
        self._thread_id: str = prepared.thread_id
        self._body = encode_json(prepared)
        self._input_ids = {message.id for message in prepared.messages}
        # One list of warnings, the consumer's (and its bounds): the input's, the stream's, ours.
        self._consumer: Consumer[Any, Any, Any] = Consumer(
            agent.version,
            on_warning=agent.on_warning,
            input=prepared,
            peer_version=agent.peer_version,
            max_event_size=agent.max_event_size,
        )
        for message in early:
            self._consumer.warn(message)
        self._inflater: Inflater | None = None
        self._resources = contextlib.AsyncExitStack()
        self._response: httpx.Response | None = None
        self._deadline_at: float | None = None  # loop time; set when the request is made
        self._event_due_at: float | None = None  # loop time; set while an event is arriving
        # What ended the stream: re-raised by result(), and by every later attempt to read.
        self._failure: Exception | None = None
        self._ended = False
        self._reading = False  # a task awaits the next event: a second reader is refused
        self._events = self._iterate()

    @property
    def runs(self) -> list[RunT]:
        """The runs so far; the last one's ``status`` is ``active`` while it streams."""
        return self._consumer.runs

    @property
    def warnings(self) -> list[str]:
        """What was stripped or dropped, from the outgoing input and the incoming events, and
        a transport failure after the last run ended."""
        return self._consumer.warnings

    @property
    def messages(self) -> Sequence[MessageT]:
        """The conversation so far: the input's messages and what the stream assembled (live
        and read-only, as ``Consumer.messages``)."""
        return self._consumer.messages

    @property
    def state(self) -> Any:
        """The agent state so far: the input's, then as snapshots and deltas left it."""
        return self._consumer.state

    async def __aenter__(self) -> RunStream[EventT, MessageT, RunT]:
        await self._open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __aiter__(self) -> RunStream[EventT, MessageT, RunT]:
        return self

    async def __anext__(self) -> EventT:
        if self._failure is not None:
            raise self._failure
        self._refuse_a_second_reader()
        self._reading = True
        try:
            return await self._events.__anext__()
        except StopAsyncIteration:
            if not self._ended:  # iteration was stopped from outside (cancelled): no verdict
                raise UsageError(
                    "the stream was stopped before it ended: no more events, no result"
                ) from None
            raise
        finally:
            self._reading = False

    async def aclose(self) -> None:
        """Stop reading and close the response (and the client the agent made for it)."""
        self._refuse_a_second_reader()
        await self._events.aclose()
        await self._resources.aclose()
        if not self._ended and self._failure is None:
            self._failure = UsageError(
                "the stream was closed before it ended: no more events, no result"
            )

    async def result(self) -> RunResult[MessageT, RunT]:
        """Read the rest of the stream, then the result.

        A run that reported ``RUN_ERROR`` is a result, ``status == "failed"`` with the event as
        ``error`` (:meth:`RunResult.raise_for_status` raises :class:`RunFailed` for it). Raises
        the :class:`ProtocolViolation` when the stream was rejected or truncated,
        :class:`TransportError` when the transport failed, :class:`HttpAgentError` when
        the endpoint answered without a stream, and :class:`UsageError` when the
        stream was closed before its end or another task reads it.
        """
        async for _ in self:  # raises what ended the stream, if not its end
            pass
        messages = list(self.messages)
        return RunResult(
            runs=self.runs,
            messages=messages,
            new_messages=[m for m in messages if m.id not in self._input_ids],
            state=self.state,
            warnings=self.warnings,
        )

    def _refuse_a_second_reader(self) -> None:
        if self._reading:
            raise UsageError(
                "another task is reading this stream; read it from one task (cancel that "
                "task to stop the stream)"
            )

    async def _open(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._response is not None:
            return
        import asyncio  # noqa: PLC0415

        import httpx  # noqa: PLC0415

        agent = self._agent
        if agent.deadline is not None:
            self._deadline_at = asyncio.get_running_loop().time() + agent.deadline
        try:
            client = agent.client
            if client is None:
                client = await self._resources.enter_async_context(
                    httpx.AsyncClient(verify=_default_ssl_context())
                )
            elif client.is_closed:
                raise UsageError(
                    "the client given to HttpAgent(client=...) is closed; the agent never "
                    "closes a client it was given: pass an open one"
                )
            response = await self._post(client, httpx.URL(agent.url))
            for _ in range(_MAX_REDIRECTS):
                target = _redirect_target(response, agent, client.follow_redirects)
                if target is None:
                    break
                await response.aclose()
                response = await self._post(client, target)
            self._response = response
            self._resources.push_async_callback(response.aclose)
            media_type = response.headers.get("content-type", "").partition(";")[0].strip()
            coding = content_coding(
                response.headers.get_list("content-encoding", split_commas=True)
            )
            if response.is_success and media_type.lower() in (SSE_MEDIA_TYPE, PROTOBUF_MEDIA_TYPE):
                self._consumer.set_media_type(media_type)
                if coding is not None:
                    self._inflater = Inflater(coding, min(INFLATE_PIECE, agent.max_event_size))
                return
            # The status came: its body is one unit that began arriving, bounded as an event is.
            if agent.event_timeout is not None:
                self._event_due_at = asyncio.get_running_loop().time() + agent.event_timeout
            head = bytearray()
            try:
                await self._within_deadline(_excerpt(response, coding, head))
            except _EventOverdue:
                pass  # the status tells the error: the excerpt is what came in time
            except _DeadlinePassed:
                raise self._deadline_error(None) from None
            body = head.decode("utf-8", "replace")
            if response.is_success:
                got = media_type or "no content type"
                message = (
                    f"{agent._shown_url} answered {response.status_code} with {got}, not {_ACCEPT}"
                )
            else:
                message = f"{agent._shown_url} answered HTTP {response.status_code} {response.reason_phrase}"
            raise HttpAgentError(
                f"{message}: {body!r}" if body else message,
                status_code=response.status_code,
                content_type=media_type,
                body=body,
            )
        except BaseException as exc:
            if isinstance(exc, Exception):  # a cancellation is not the stream's fault
                self._failure = exc
            await self._resources.aclose()
            raise

    async def _post(self, client: httpx.AsyncClient, url: httpx.URL) -> httpx.Response:
        """The run's request to ``url``; httpx follows no redirect (``_redirect_target`` judges)."""
        import httpx  # noqa: PLC0415

        agent = self._agent
        request = client.build_request(
            "POST", url, content=self._body, headers=agent.headers, timeout=agent.timeout
        )
        try:
            return await self._within_deadline(
                client.send(request, stream=True, follow_redirects=False)
            )
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, None) from exc
        except httpx.InvalidURL as exc:  # httpx reads a redirect's Location, followed or not
            raise TransportError(
                "bad-redirect",
                f"{agent._shown_url} answered a redirect whose Location is not a URL ({exc})",
            ) from exc
        except _DeadlinePassed:
            raise self._deadline_error(None) from None

    async def _iterate(self) -> AsyncGenerator[EventT, None]:
        import httpx  # noqa: PLC0415

        await self._open()
        assert self._response is not None  # _open either sets it or raises
        consumer, inflater = self._consumer, self._inflater
        dropped: TransportError | None = None
        try:
            try:
                response = self._response
                if response.is_stream_consumed:  # an in-memory response: httpx decoded it
                    raw, inflater = _one_chunk(response.content), None
                else:
                    raw = response.aiter_raw()
                while True:
                    try:
                        chunk = await self._within_deadline(raw.__anext__())
                    except StopAsyncIteration:
                        break
                    pieces = (chunk,) if inflater is None else inflater.feed(chunk)
                    for piece in pieces:
                        failure: StreamError | None = None
                        # the bindings' events: v1_1.Event for the default version
                        delivered: list[Any]
                        try:
                            delivered = consumer.receive(piece)
                        except (ProtocolViolation, TransportError) as violation:
                            failure = violation
                            # what passed before it is delivered here, by the iteration: not twice
                            delivered = cast("list[Any]", violation.delivered)
                            violation.delivered = []
                        for event in delivered:
                            yield event
                        if failure is not None:
                            raise failure
                    self._time_the_open_event()
                if inflater is not None and not inflater.complete:
                    dropped = TransportError(
                        "cut",
                        "the compressed body ended before its end",
                        index=consumer.event_index,
                    )
            # The transport failed: that is the end of the body, and maybe of a run.
            except httpx.HTTPError as exc:
                dropped = self._transport_error(exc, consumer)
                dropped.__cause__ = exc
            except zlib.error as exc:
                dropped = TransportError(
                    "decode",
                    f"the compressed body does not inflate ({exc})",
                    index=consumer.event_index,
                )
            except _EventOverdue:
                dropped = self._event_overdue(consumer)
            except _DeadlinePassed:
                dropped = self._deadline_error(consumer)
            self._close_stream(dropped)
            self._ended = True
            self._remember_interrupts()
        except Exception as exc:  # a violation, or an exception from a warning callback
            self._failure = exc
            raise
        finally:
            await self._resources.aclose()

    def _time_the_open_event(self) -> None:
        """Start the clock on an event whose first bytes came, or stop it once none is open."""
        import asyncio  # noqa: PLC0415

        timeout = self._agent.event_timeout
        if not self._consumer.inside_event or timeout is None:
            self._event_due_at = None
        elif self._event_due_at is None:
            self._event_due_at = asyncio.get_running_loop().time() + timeout

    async def _within_deadline(self, step: Awaitable[T]) -> T:
        """Await ``step``, or raise ``_DeadlinePassed`` once the run's deadline passes (or
        ``_EventOverdue`` once an open event's): a timer cancels the wait, as
        ``asyncio.timeout`` does (Python 3.11+)."""
        import asyncio  # noqa: PLC0415

        deadline_at, passed = self._deadline_at, _DeadlinePassed
        event_due_at = self._event_due_at
        if event_due_at is not None and (deadline_at is None or event_due_at < deadline_at):
            deadline_at, passed = event_due_at, _EventOverdue
        if deadline_at is None:
            return await step
        loop = asyncio.get_running_loop()
        remaining = deadline_at - loop.time()
        task = asyncio.current_task()
        if remaining <= 0 or task is None:
            if asyncio.iscoroutine(step):
                step.close()
            raise passed
        fired = False

        def fire() -> None:
            nonlocal fired
            fired = True
            task.cancel()

        timer = loop.call_later(remaining, fire)
        try:
            return await step
        except asyncio.CancelledError:
            if not fired:
                raise
            uncancel = getattr(task, "uncancel", None)  # Python 3.11+: count our cancel off
            if uncancel is not None and uncancel() > 0:
                raise  # the task was cancelled from outside as well: that wins
            raise passed from None
        finally:
            timer.cancel()

    def _deadline_error(self, consumer: Consumer[Any, Any, Any] | None) -> TransportError:
        return TransportError(
            "deadline",
            f"the run took longer than the deadline ({self._agent.deadline} s: "
            "HttpAgent(deadline=...), agui-msgspec run --deadline)",
            index=None if consumer is None else consumer.event_index,
        )

    def _event_overdue(self, consumer: Consumer[Any, Any, Any]) -> TransportError:
        return TransportError(
            "event-timeout",
            f"an event began arriving and did not complete within {self._agent.event_timeout} s "
            "(HttpAgent(event_timeout=...))",
            index=consumer.event_index,
        )

    def _transport_error(
        self, exc: Exception, consumer: Consumer[Any, Any, Any] | None
    ) -> TransportError:
        """The rule a failure of httpx breaks: ``consumer`` is None before the response."""
        import httpx  # noqa: PLC0415

        timeout = self._agent.timeout
        setting = f"timeout={timeout} s: HttpAgent(timeout=...), agui-msgspec run --timeout"
        index = None if consumer is None else consumer.event_index
        if isinstance(exc, httpx.ConnectTimeout):
            rule, detail = "connect", f"no connection to {self._agent._shown_url} within {setting}"
        elif isinstance(exc, httpx.TimeoutException):
            waited = "the response" if consumer is None else "the next byte of the body"
            rule, detail = "timeout", f"{waited} did not come within {setting}"
        elif isinstance(exc, httpx.DecodingError):
            rule, detail = "decode", "the body does not decode"
        elif consumer is None and not isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
            rule, detail = "connect", f"cannot reach {self._agent._shown_url}"
        else:
            where = "before the response" if consumer is None else "inside the body"
            rule, detail = "cut", f"the connection broke {where}"
        return TransportError(rule, f"{detail} ({exc!r})", index=index)

    def _remember_interrupts(self) -> None:
        runs = self._consumer.runs
        if runs and runs[-1].status == "interrupted":
            self._agent._open_interrupts[self._thread_id] = list(runs[-1].interrupts)
        else:
            self._agent._open_interrupts.pop(self._thread_id, None)

    def _close_stream(self, dropped: TransportError | None) -> None:
        """End the consumer; a transport failure with a run (or an event) open is that failure,
        the run left ``truncated``; after the last run ended it is only a warning."""
        try:
            self._consumer.close()  # the end of an SSE or protobuf body completes no event
        except (ProtocolViolation, TransportError) as violation:
            if dropped is None or violation.rule != "truncated":  # the reader's own error wins
                raise
            dropped.detail += f"; {violation.detail}"
            dropped.args = (str(dropped),)
            raise dropped from dropped.__cause__
        if dropped is not None:
            self._consumer.warn(f"the transport failed after the last run ended: {dropped}")


class _DeadlinePassed(Exception):
    """The run's deadline passed while the agent waited."""


class _EventOverdue(_DeadlinePassed):
    """An event that began arriving did not complete within ``event_timeout``."""


def sendable_header(name: bytes, value: bytes) -> bool:
    """Whether HTTP can send the header as httpx encoded it; else the first send fails, as
    if the agent were unreachable (``HttpAgent``'s ``headers=``, the command line's
    ``--header``)."""
    return bool(_HEADER_NAME.fullmatch(name) and _HEADER_VALUE.fullmatch(value))


def checked_url(url: object) -> httpx.URL:
    """``url`` as httpx reads it, if a run can be sent there; else a :class:`UsageError`
    (``HttpAgent``, and the command line before it builds one)."""
    try:
        import httpx  # noqa: PLC0415
    except ImportError:
        raise ImportError(
            "HttpAgent needs httpx: install the http extra, pip install 'agui-msgspec[http]'"
        ) from None
    if not isinstance(url, str):
        raise wrong_type("url", url, "a URL (str)")
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, UnicodeError) as exc:
        raise UsageError(f"not a URL: {url[:200]!r} ({exc})") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise UsageError(f"not an http(s) URL: {url[:200]!r}")
    if parsed.port is not None and not 0 < parsed.port < 65536:  # else a crash at the send
        raise UsageError(f"not a TCP port: {parsed.port} in {url[:200]!r}")
    return parsed


def _redirect_target(
    response: httpx.Response, agent: HttpAgent[Any, Any, Any], follow: bool
) -> httpx.URL | None:
    """Where to send the run again, or None to read ``response`` as the answer.

    A redirect is followed only when the client follows redirects, only with the method and
    body kept (307, 308), and only within the agent's origin: the run input and the headers
    (an API key, say) never go to another host. Any other redirect is the answer: its 3xx
    status makes it an :class:`HttpAgentError`, as any status but 2xx does.
    """
    if not (follow and response.status_code in (307, 308) and response.has_redirect_location):
        return None
    try:
        target = response.url.join(response.headers["location"])
    except Exception:  # a Location httpx cannot read: answered as it is
        return None
    origin = _origin(response.url)
    if _origin(target) != origin:
        raise HttpAgentError(
            f"{agent._shown_url} redirected the run to another origin "
            f"({target.copy_with(username=None, password=None)}); HttpAgent does not send the "
            "input or the headers there: give it the final URL",
            status_code=response.status_code,
            content_type=response.headers.get("content-type", ""),
            body="",
        )
    return target


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    """Scheme, host and port: what a redirect must keep to stay within the origin."""
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default


@functools.cache
def _default_ssl_context() -> ssl.SSLContext:
    """The context httpx makes for a client by default (certifi's trust store, or
    ``SSL_CERT_FILE``/``SSL_CERT_DIR``), made once: one per run's client cost about 25 ms of
    CPU and 0.8 MB."""
    import httpx  # noqa: PLC0415

    return httpx.create_ssl_context()


async def _one_chunk(body: bytes) -> AsyncIterator[bytes]:
    yield body


async def _excerpt(response: httpx.Response, coding: str | None, head: bytearray) -> None:
    """Read the start of an error body into ``head``, without reading (or inflating) more of it
    than that; what came stays there if the wait is cut short."""
    import httpx  # noqa: PLC0415

    inflater = None if coding is None else Inflater(coding, _EXCERPT_BYTES)
    # The status already tells the error; a body that breaks off only shortens the excerpt.
    if response.is_stream_consumed:  # an in-memory response: httpx decoded it
        head += response.content[:_EXCERPT_BYTES]
        return
    with contextlib.suppress(httpx.HTTPError, zlib.error):
        async for chunk in response.aiter_raw():
            head += chunk if inflater is None else next(inflater.feed(chunk), b"")
            if len(head) >= _EXCERPT_BYTES:
                del head[_EXCERPT_BYTES:]
                return
