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
- the body (or the connection) ends with a run still active, or inside an
  event: ``ProtocolViolation(rule="truncated")``; never a success, and what
  was delivered stays delivered (``RunStream.messages``);
- the last run reports ``RUN_ERROR``: the events are delivered like any other,
  and the awaited result raises :class:`RunFailed`, carrying the event;
- otherwise the awaited result is a :class:`RunResult`, whose run status may be
  ``completed``, ``interrupted`` or ``cancelled``.

httpx is the optional ``http`` extra, imported only when an agent is made.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

import msgspec

from agui_msgspec._consumer import Consumer
from agui_msgspec._errors import ProtocolViolation, UsageError
from agui_msgspec._input import prepare_input
from agui_msgspec._lifecycle import Run
from agui_msgspec._transports import DEFAULT_MAX_EVENT_SIZE, SSEReader
from agui_msgspec._versions import LATEST_VERSION, bindings_for
from agui_msgspec.v1_1 import encoder

if TYPE_CHECKING:
    import httpx

DEFAULT_TIMEOUT = 60.0
_EXCERPT_BYTES = 2048
_EVENT_STREAM = "text/event-stream"


class HttpAgentError(Exception):
    """The endpoint answered without an event stream: the run never started.

    ``status_code`` is the HTTP status, ``content_type`` the response's media
    type, ``body`` the start of the response body (at most 2 KiB, decoded leniently).
    """

    def __init__(self, message: str, *, status_code: int, content_type: str, body: str) -> None:
        self.status_code = status_code
        self.content_type = content_type
        self.body = body
        super().__init__(message)


@dataclass
class RunResult:
    """What a run left: the result of ``run_agent`` and ``RunStream.result()``."""

    runs: list[Run]
    """Every run the stream carried, in order; the last is the one this request started."""
    messages: list[Any]
    """The conversation after the run: the input's messages as updated, then new ones (Structs)."""
    new_messages: list[Any]
    """The messages whose ids the input did not have (``newMessages`` in ``@ag-ui/client``)."""
    state: Any
    warnings: list[str] = field(default_factory=list)
    """What was stripped or dropped, from the outgoing input and the incoming events."""

    @property
    def run(self) -> Run:
        """The run this request started: ``.status``, ``.outcome``, ``.interrupts``, ``.usage``."""
        return self.runs[-1]


class RunFailed(Exception):
    """The run reported its own failure with ``RUN_ERROR``; the stream itself was conformant.

    ``error`` is the ``RunErrorEvent``; ``result`` holds what the run delivered before it.
    """

    def __init__(self, result: RunResult) -> None:
        self.result = result
        self.error: Any = result.run.error
        code = self.error.code
        suffix = "" if code is msgspec.UNSET else f" ({code})"
        super().__init__(f"the run failed: {self.error.message}{suffix}")


class HttpAgent:
    """An AG-UI agent behind an HTTP endpoint.

    ``headers`` are sent with every request (authorization, say); ``Accept`` and
    ``Content-Type`` are the binding's and cannot be overridden. ``version`` is
    the protocol version this client speaks and declares (or a bindings module). ``timeout`` is in
    seconds, for connecting and for each wait between received bytes (a run may
    stream for as long as it keeps sending); ``None`` waits forever; it applies
    to ``client`` too. ``max_event_size`` bounds one event (bytes). Pass
    ``client`` to share a connection pool, or to bring auth, proxies or a mock
    transport; the agent never closes a client it was given, and makes (and
    closes) one per run otherwise.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        version: str | ModuleType = LATEST_VERSION,
        timeout: float | None = DEFAULT_TIMEOUT,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        client: httpx.AsyncClient | None = None,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        try:
            import httpx  # noqa: PLC0415
        except ImportError:
            raise ImportError(
                "HttpAgent needs httpx: install the http extra, pip install 'agui-msgspec[http]'"
            ) from None
        try:
            parsed = httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise UsageError(f"not a URL: {url!r} ({exc})") from None
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise UsageError(f"not an http(s) URL: {url!r}")
        if max_event_size < 1:
            raise UsageError(f"max_event_size must be at least 1, not {max_event_size}")
        bindings_for(version)  # an unknown version is a UsageError now, not at the first run
        self.url = url
        self.version = version
        self.headers = httpx.Headers(headers)
        self.headers["Accept"] = _EVENT_STREAM  # replaces any casing of the name
        self.headers["Content-Type"] = "application/json"
        self.timeout = timeout
        self.max_event_size = max_event_size
        self.client = client
        self.on_warning = on_warning
        # thread → the interrupts its last run stopped on: the next input must answer them all
        self._open_interrupts: dict[str, list[Any]] = {}

    def run(self, input: msgspec.Struct | dict[str, Any]) -> RunStream:
        """Start a run: iterate the returned stream for its events, then await ``result()``.

        ``input`` is a ``RunAgentInput`` Struct or wire-named dict; it is enforced
        and declares ``version`` before it is sent (a malformed one raises
        ``MalformedEvent`` here). After a run on the thread stopped on interrupts,
        an input whose ``resume`` leaves one unanswered is refused the same way. The request is made when the stream is entered
        (``async with``) or first iterated.
        """
        return RunStream(self, input)

    async def run_agent(self, input: msgspec.Struct | dict[str, Any]) -> RunResult:
        """Run to the end and return the result; raises as :meth:`RunStream.result` does."""
        async with self.run(input) as stream:
            return await stream.result()

    def run_sync(self, input: msgspec.Struct | dict[str, Any]) -> RunResult:
        """:meth:`run_agent` for code without an event loop (it runs one; not from inside one)."""
        return asyncio.run(self.run_agent(input))


class RunStream:
    """One run over HTTP: an async iterator of typed events, then :meth:`result`.

    Use it as ``async with agent.run(input) as stream:`` so the response is
    closed however the block ends. Iteration yields each event (chunks expanded)
    as its bytes arrive and raises :class:`ProtocolViolation` where the stream
    breaks a rule. :attr:`messages`, :attr:`state`, :attr:`runs` and
    :attr:`warnings` are live, and keep what was delivered after a failure.
    """

    def __init__(self, agent: HttpAgent, input: msgspec.Struct | dict[str, Any]) -> None:
        self._agent = agent
        self.warnings: list[str] = []
        thread_id = (
            input.get("threadId") if isinstance(input, dict) else getattr(input, "thread_id", None)
        )
        interrupts = agent._open_interrupts.get(thread_id, []) if isinstance(thread_id, str) else []
        prepared = prepare_input(input, agent.version, self._warn, interrupts=interrupts)
        self._thread_id: str = prepared.thread_id
        self._body = encoder.encode(prepared)
        self._input_ids = {message.id for message in prepared.messages}
        self._consumer = Consumer(agent.version, on_warning=self._warn, input=prepared)
        self._reader = SSEReader(agent.max_event_size)
        self._resources = contextlib.AsyncExitStack()
        self._response: httpx.Response | None = None
        # What ended the stream: re-raised by result(), and by every later attempt to read.
        self._failure: Exception | None = None
        self._ended = False
        self._events = self._iterate()

    @property
    def runs(self) -> list[Run]:
        """The runs so far; the last one's ``status`` is ``active`` while it streams."""
        return self._consumer.runs

    @property
    def messages(self) -> list[Any]:
        """The conversation so far: the input's messages and what the stream assembled."""
        return self._consumer.messages

    @property
    def state(self) -> Any:
        """The agent state so far: the input's, then as snapshots and deltas left it."""
        return self._consumer.state

    async def __aenter__(self) -> RunStream:
        await self._open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __aiter__(self) -> RunStream:
        return self

    async def __anext__(self) -> msgspec.Struct:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        """Stop reading and close the response (and the client the agent made for it)."""
        await self._events.aclose()
        await self._resources.aclose()
        if not self._ended and self._failure is None:
            self._failure = UsageError("the stream was closed before it ended, so it has no result")

    async def result(self) -> RunResult:
        """Read the rest of the stream, then the result.

        Raises :class:`RunFailed` when the last run reported ``RUN_ERROR``, the
        :class:`ProtocolViolation` when the stream was rejected or truncated,
        :class:`HttpAgentError` (or httpx's error) when no stream came, and
        :class:`UsageError` when the stream was closed before its end.
        """
        async for _ in self:
            pass
        if self._failure is not None:
            raise self._failure
        messages = self.messages
        result = RunResult(
            runs=self.runs,
            messages=messages,
            new_messages=[m for m in messages if m.id not in self._input_ids],
            state=self.state,
            warnings=self.warnings,
        )
        if result.run.status == "failed":
            raise RunFailed(result)
        return result

    async def _open(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._response is not None:
            return
        import httpx  # noqa: PLC0415

        agent = self._agent
        try:
            client = agent.client
            if client is None:
                client = await self._resources.enter_async_context(httpx.AsyncClient())
            request = client.build_request(
                "POST", agent.url, content=self._body, headers=agent.headers, timeout=agent.timeout
            )
            self._response = response = await client.send(request, stream=True)
            self._resources.push_async_callback(response.aclose)
            media_type = response.headers.get("content-type", "").partition(";")[0].strip()
            if response.is_success and media_type.lower() == _EVENT_STREAM:
                return
            body = await _excerpt(response)
            if response.is_success:
                got = media_type or "no content type"
                message = (
                    f"{agent.url} answered {response.status_code} with {got}, not {_EVENT_STREAM}"
                )
            else:
                message = (
                    f"{agent.url} answered HTTP {response.status_code} {response.reason_phrase}"
                )
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

    async def _iterate(self) -> AsyncGenerator[msgspec.Struct, None]:
        import httpx  # noqa: PLC0415

        await self._open()
        assert self._response is not None  # _open either sets it or raises
        consumer, reader = self._consumer, self._reader
        dropped: httpx.TransportError | None = None
        try:
            try:
                async for chunk in self._response.aiter_bytes():
                    delivered: list[msgspec.Struct] = []
                    failure: ProtocolViolation | None = None
                    try:
                        # One batch per chunk; it keeps what passed before a violation.
                        consumer._feed_many(reader.feed(chunk), delivered)
                    except ProtocolViolation as violation:
                        failure = violation
                    for event in delivered:
                        yield event
                    if failure is not None:
                        raise failure
            except httpx.TransportError as exc:
                # The connection died: that is the end of the body (spec: a truncated run).
                dropped = exc
            reader.close()
            self._close_stream(dropped)
            self._ended = True
            self._remember_interrupts()
        except ProtocolViolation as violation:
            self._failure = violation
            raise
        finally:
            await self._resources.aclose()

    def _remember_interrupts(self) -> None:
        runs = self._consumer.runs
        if runs and runs[-1].status == "interrupted":
            self._agent._open_interrupts[self._thread_id] = list(runs[-1].interrupts)
        else:
            self._agent._open_interrupts.pop(self._thread_id, None)

    def _close_stream(self, dropped: Exception | None) -> None:
        cause = "" if dropped is None else f" (the connection failed: {dropped!r})"
        try:
            self._consumer.close(inside_event=self._reader.discarded_partial)
        except ProtocolViolation as violation:
            if dropped is None:
                raise
            raise ProtocolViolation(violation.rule, violation.detail + cause) from dropped
        if dropped is not None:
            self._warn(f"the connection failed after the last run ended{cause}")

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        if self._agent.on_warning is not None:
            self._agent.on_warning(message)


async def _excerpt(response: httpx.Response) -> str:
    """The start of an error body, without reading more of it than that."""
    import httpx  # noqa: PLC0415

    head = b""
    # The status already tells the error; a body that breaks off only shortens the excerpt.
    with contextlib.suppress(httpx.TransportError):
        async for chunk in response.aiter_bytes():
            head += chunk
            if len(head) >= _EXCERPT_BYTES:
                break
    return head[:_EXCERPT_BYTES].decode("utf-8", "replace")
