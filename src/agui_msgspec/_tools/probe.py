"""``agui-msgspec probe URL``: a battery of runs against a live endpoint, each judged by
:func:`verify`, with what the transport did (its content type, its chunks and their times).

Each step says what it sent. The steps: a plain message; the same over protobuf; a frontend
tool offered, then answered in a second run when the agent calls it; state sent; a client
that leaves after the first chunk (and whether the server answers the next request); a
resume of any run that stopped on an interrupt. The transport diagnostics are read from
the bytes as they arrived, which a recorded body no longer shows.
"""

from __future__ import annotations

import itertools
import re
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any, Literal
from urllib.parse import quote

import msgspec

from agui_msgspec._errors import inert
from agui_msgspec._pipeline.consumer import MEDIA_TYPES
from agui_msgspec._tools.render import (
    SARIF_SCHEMA,
    finding_line,
    json_text,
    render_junit,
    render_sarif,
    report_document,
    verdict_line,
)
from agui_msgspec._tools.verify import DEFAULT_MAX_VIOLATIONS, Report, _Verifier
from agui_msgspec._versions import LATEST_VERSION, VersionLike, bindings_for
from agui_msgspec._wire.protobuf import PROTOBUF_MEDIA_TYPE
from agui_msgspec._wire.text import DEFAULT_MAX_EVENT_SIZE, SSE_MEDIA_TYPE

DEFAULT_GAP = 15.0
"""Seconds between two chunks past which a keep-alive comment should have been sent (a proxy
commonly closes an idle connection after 30 to 60 s)."""
_TOOL = {
    "name": "probe_echo",
    "description": "Echo the text back. The test client answers this tool call itself.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}
_DATALESS = re.compile(rb"(?m)^[ \t]*[{\[]")  # a JSON line where SSE wants "data: "
_NO_STATE_EVENT = "no state event came back"
_STEP_ARRIVALS = 20  # arrival times the text shows per step, at most
_URI_RESERVED = ":/?[]@!$&'()*+,;=%"  # what a URL keeps as it is (RFC 3986), "#" aside

Outcome = Literal["passed", "failed", "skipped"]


class Diagnostic(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """What the transport did that a client would notice."""

    kind: str
    """wrong-content-type, data-less-line, keepalive-gap, one-chunk-body, dropped, http-status,
    or the disconnect step's observations (disconnected, next-request)."""
    severity: Literal["violation", "warning", "note"]
    message: str


class ProbeStep(msgspec.Struct, kw_only=True):
    """One run of the battery: what it sent, what came back, and the verdict on it."""

    name: str
    sent: dict[str, Any]
    """The request: ``accept`` and the RunAgentInput ``input``."""
    outcome: Outcome
    note: str = ""
    status_code: int | None = None
    content_type: str | None = None
    chunks: int = 0
    first_byte: float | None = None
    """Seconds from the request to the first byte of the body."""
    seconds: float | None = None
    diagnostics: list[Diagnostic] = msgspec.field(default_factory=list)
    report: Report | None = None
    """The stream's report; each event's ``arrived`` is seconds after the first byte."""


class _Exchange(msgspec.Struct, kw_only=True):
    status_code: int | None = None
    content_type: str | None = None
    chunks: list[tuple[float, bytes]] = msgspec.field(default_factory=list)
    started: float = 0.0
    ended: float = 0.0
    error: str | None = None


def probe(
    url: str,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = 30.0,
    gap: float = DEFAULT_GAP,
    version: VersionLike = LATEST_VERSION,
) -> list[ProbeStep]:
    """Run the battery against ``url`` and return its steps, in order."""
    import httpx  # noqa: PLC0415  (the http extra)

    def run(name: str, input: dict[str, Any], accept: str = SSE_MEDIA_TYPE) -> ProbeStep:
        exchange = _exchange(client, url, input, accept)
        return _step(name, input, accept, exchange, gap, version)

    with httpx.Client(timeout=timeout, headers=headers) as client:
        plain = _input([_user("Hello! Please answer briefly.")])
        steps = [run("plain message", plain)]
        steps.append(run("protobuf Accept", _input(plain["messages"]), PROTOBUF_MEDIA_TYPE))
        steps += _tool_steps(run)
        state = {"probe": str(uuid.uuid4()), "items": [1, 2]}
        stated = run("state sent", _input([_user("What is in the state?")], state=state))
        if stated.report is not None:
            # the consumer starts from the state sent: only a state event says the agent had it
            stated.note = (
                f"{len(stated.report.states)} state event(s); the final state is "
                f"{_short(stated.report.result.state)}"
                if stated.report.states
                else _NO_STATE_EVENT
            )
        steps.append(stated)
        steps.append(_disconnect_step(client, url, gap, version))
        steps.append(_resume_step(run, steps))
    return steps


def _tool_steps(run: Callable[..., ProbeStep]) -> list[ProbeStep]:
    ask = _user("Call the probe_echo tool with the text 'ping', then wait for its result.")
    offered = run("frontend tool offered", _input([ask], tools=[_TOOL]))
    report = offered.report
    call = None
    if report is not None:
        call = next(
            (
                call
                for message in report.result.messages
                for call in getattr(message, "tool_calls", None) or []
                if call.function.name == _TOOL["name"]
            ),
            None,
        )
    if report is None or call is None:
        skipped = ProbeStep(
            name="frontend tool answered",
            sent={},
            outcome="skipped",
            note="the agent did not call probe_echo",
        )
        return [offered, skipped]
    offered.note = f"the agent called probe_echo({call.function.arguments})"
    result = {"id": str(uuid.uuid4()), "role": "tool", "toolCallId": call.id, "content": "ping"}
    messages = [*msgspec.to_builtins(report.result.messages), result]
    thread = offered.sent["input"]["threadId"]
    answer = _input(messages, tools=[_TOOL], thread=thread)
    return [offered, run("frontend tool answered", answer)]


def _disconnect_step(client: Any, url: str, gap: float, version: VersionLike) -> ProbeStep:
    input = _input([_user("Please write a long answer: count from 1 to 200 in words.")])
    exchange = _exchange(client, url, input, SSE_MEDIA_TYPE, leave_after_first_chunk=True)
    step = _step("client disconnects", input, SSE_MEDIA_TYPE, exchange, gap, version)
    if exchange.chunks:
        size = sum(len(chunk) for _, chunk in exchange.chunks)
        step.diagnostics.append(
            Diagnostic(
                kind="disconnected",
                severity="note",
                message=f"left after the first chunk ({size} bytes); "
                "whether the server stopped its run cannot be seen from here",
            )
        )
        if step.report is not None:  # we cut the body short: its truncation is ours
            others = [f for f in step.report.violations if f.rule != "truncated"]
            step.outcome = "failed" if others else "passed"
    after = _exchange(client, url, _input([_user("Hello")]), SSE_MEDIA_TYPE)
    answered = after.status_code == 200 and after.error is None
    step.diagnostics.append(
        Diagnostic(
            kind="next-request",
            severity="note" if answered else "violation",
            message=f"the next request was answered in {after.ended - after.started:.3f} s"
            if answered
            else f"the next request failed: {after.error or after.status_code}",
        )
    )
    if not answered:
        step.outcome = "failed"
    return step


def _resume_step(run: Callable[..., ProbeStep], steps: list[ProbeStep]) -> ProbeStep:
    for step in steps:
        result = step.report.result if step.report is not None else None
        if result is not None and result.runs and result.runs[-1].status == "interrupted":
            last = result.runs[-1]
            resume = [{"interruptId": i.id, "status": "cancelled"} for i in last.interrupts]
            messages = msgspec.to_builtins(result.messages)
            input = _input(messages, thread=last.thread_id, resume=resume)
            resumed = run("resume", input)
            resumed.note = f"abandoned the interrupt(s) of {step.name!r}"
            return resumed
    return ProbeStep(name="resume", sent={}, outcome="skipped", note="no run reported an interrupt")


def _exchange(
    client: Any,
    url: str,
    input: dict[str, Any],
    accept: str,
    *,
    leave_after_first_chunk: bool = False,
) -> _Exchange:
    import httpx  # noqa: PLC0415

    exchange = _Exchange(started=time.perf_counter())
    try:
        with client.stream("POST", url, json=input, headers={"accept": accept}) as response:
            exchange.status_code = response.status_code
            exchange.content_type = response.headers.get("content-type")
            for chunk in response.iter_bytes():
                if chunk:
                    exchange.chunks.append((time.perf_counter(), chunk))
                if leave_after_first_chunk and exchange.chunks:
                    break
    except httpx.HTTPError as exc:
        exchange.error = f"{type(exc).__name__}: {exc}"
    exchange.ended = time.perf_counter()
    return exchange


def _step(
    name: str,
    input: dict[str, Any],
    accept: str,
    exchange: _Exchange,
    gap: float,
    version: VersionLike,
) -> ProbeStep:
    step = ProbeStep(
        name=name,
        sent={"accept": accept, "input": input},
        outcome="passed",
        status_code=exchange.status_code,
        content_type=exchange.content_type,
        chunks=len(exchange.chunks),
        seconds=exchange.ended - exchange.started,
    )
    if exchange.chunks:
        step.first_byte = exchange.chunks[0][0] - exchange.started
    if exchange.status_code is None:
        step.outcome, step.note = "failed", f"no answer: {exchange.error}"
        return step
    if exchange.status_code != 200:
        body = b"".join(chunk for _, chunk in exchange.chunks)[:300]
        step.diagnostics.append(
            Diagnostic(
                kind="http-status",
                severity="violation",
                message=f"HTTP {exchange.status_code}: {body.decode(errors='replace')}",
            )
        )
        step.outcome = "failed"
        return step
    step.report = _verified(exchange, input, version)
    step.diagnostics += _diagnostics(exchange, accept, step.report, gap)
    failed = step.report.verdict == "rejected" or any(
        d.severity == "violation" for d in step.diagnostics
    )
    step.outcome = "failed" if failed else "passed"
    return step


def _verified(exchange: _Exchange, input: dict[str, Any], version: VersionLike) -> Report:
    # the received chunks fed to the verifier one at a time: an event read while a chunk is
    # being taken arrived with that chunk
    """The report, each event stamped with the time its last byte arrived."""
    first = exchange.chunks[0][0] if exchange.chunks else 0.0
    now = [0.0]
    arrivals: dict[int, float] = {}

    def chunks() -> Any:
        for arrived, chunk in exchange.chunks:
            now[0] = arrived - first
            yield chunk

    verifier = _Verifier(
        bindings_for(version), input, None, False, DEFAULT_MAX_VIOLATIONS, {},
        on_event=lambda event: arrivals.setdefault(event.received_index, now[0]),
    )  # fmt: skip
    name = (exchange.content_type or "").partition(";")[0].strip().lower()
    verifier.read_body(chunks(), name if name in MEDIA_TYPES else None, DEFAULT_MAX_EVENT_SIZE)
    report = verifier.report()
    report.events = [
        msgspec.structs.replace(event, arrived=arrivals.get(event.received_index))
        for event in report.events
    ]
    return report


def _diagnostics(exchange: _Exchange, accept: str, report: Report, gap: float) -> list[Diagnostic]:
    found = []
    name = (exchange.content_type or "").partition(";")[0].strip().lower()
    body = b"".join(chunk for _, chunk in exchange.chunks)
    if name not in MEDIA_TYPES:
        found.append(
            Diagnostic(
                kind="wrong-content-type",
                severity="violation",
                message=f"Content-Type {exchange.content_type!r} names no AG-UI encoding "
                f"(asked for {accept}); a client cannot tell how to read the body",
            )
        )
    elif accept == PROTOBUF_MEDIA_TYPE and name == SSE_MEDIA_TYPE:
        found.append(
            Diagnostic(
                kind="wrong-content-type",
                severity="note",
                message=f"asked for {accept}, answered {name} (a fallback the client reads)",
            )
        )
    if name == SSE_MEDIA_TYPE and _DATALESS.search(body):
        found.append(
            Diagnostic(
                kind="data-less-line",
                severity="violation",
                message="a JSON line without 'data: ' in an event stream: an SSE client drops it",
            )
        )
    if len(exchange.chunks) == 1 and len(report.events) > 2:
        found.append(
            Diagnostic(
                kind="one-chunk-body",
                severity="warning",
                message=f"all {len(report.events)} events arrived in one chunk: a buffering "
                "proxy or server (nothing reaches the user until the run ends)",
            )
        )
    times = [exchange.started] + [arrived for arrived, _ in exchange.chunks]
    longest = max((b - a for a, b in itertools.pairwise(times)), default=0.0)
    if longest > gap:
        found.append(
            Diagnostic(
                kind="keepalive-gap",
                severity="warning",
                message=f"{longest:.1f} s without a byte (over {gap:g} s): a proxy may close "
                "the connection; send a keep-alive comment while the agent thinks",
            )
        )
    if exchange.error is not None:
        found.append(
            Diagnostic(kind="dropped", severity="violation", message=f"the body broke off: "
                       f"{exchange.error}")
        )  # fmt: skip
    return found


def _input(
    messages: list[Any],
    *,
    thread: str | None = None,
    tools: list[Any] | None = None,
    state: Any = None,
    resume: list[Any] | None = None,
) -> dict[str, Any]:
    input: dict[str, Any] = {
        "threadId": thread or str(uuid.uuid4()),
        "runId": str(uuid.uuid4()),
        "messages": messages,
    }
    if tools:
        input["tools"] = tools
    if state is not None:
        input["state"] = state
    if resume:
        input["resume"] = resume
    return input


def _user(text: str) -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "role": "user", "content": text}


def _short(value: Any) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= 120 else text[:120] + "..."


def failed(steps: list[ProbeStep]) -> bool:
    return any(step.outcome == "failed" for step in steps)


def render_probe_text(steps: list[ProbeStep]) -> str:
    """For people: each step, what it sent, the transport and the stream's verdict."""
    lines = []
    for step in steps:
        lines.append(
            f"{step.outcome.upper()} {step.name}" + (f": {step.note}" if step.note else "")
        )
        if not step.sent:
            continue
        input = step.sent["input"]
        sent = f"{len(input['messages'])} message(s)"
        for key in ("tools", "state", "resume"):
            if key in input:
                sent += f", {key} {_short(input[key])}"
        lines.append(f"  sent: Accept {step.sent['accept']}, thread {input['threadId']}, {sent}")
        if step.status_code is not None:
            timing = f", first byte {step.first_byte:.3f} s" if step.first_byte is not None else ""
            lines.append(
                f"  got: HTTP {step.status_code} {step.content_type}, {step.chunks} chunk(s)"
                f"{timing}, {step.seconds:.3f} s in all"
            )
        for diagnostic in step.diagnostics:
            lines.append(
                f"  {diagnostic.severity.upper()} [{diagnostic.kind}] {diagnostic.message}"
            )
        if step.report is not None:
            lines.append(f"  {verdict_line(step.report)}")
            lines += [f"    {finding_line(finding)}" for finding in step.report.findings]
            arrivals = [e.arrived for e in step.report.events if e.arrived is not None]
            if arrivals:
                shown = " ".join(f"{a * 1000:.1f}" for a in arrivals[:_STEP_ARRIVALS])
                more = " ..." if len(arrivals) > _STEP_ARRIVALS else ""
                lines.append(f"  arrivals (ms after the first byte): {shown}{more}")
    counts = {o: sum(step.outcome == o for step in steps) for o in ("passed", "failed", "skipped")}
    lines.append(", ".join(f"{n} {outcome}" for outcome, n in counts.items()))
    return "\n".join(map(inert, lines)) + "\n"  # a server's words are shown, never acted on


def probe_document(steps: list[ProbeStep]) -> list[dict[str, Any]]:
    """The steps as JSON-ready values, each with its report as ``check --format json`` gives it."""
    return [
        {
            "name": step.name,
            "outcome": step.outcome,
            "note": step.note,
            "sent": step.sent,
            "statusCode": step.status_code,
            "contentType": step.content_type,
            "chunks": step.chunks,
            "firstByte": step.first_byte,
            "seconds": step.seconds,
            "diagnostics": step.diagnostics,
            "report": None if step.report is None else report_document(step.report),
        }
        for step in steps
    ]


def summary_row(name: str, steps: list[ProbeStep]) -> str:
    """A Markdown table row: each step's outcome, with its diagnostics' kinds beside it."""
    cells = []
    for step in steps:
        kinds = sorted({d.kind for d in step.diagnostics if d.severity != "note"})
        if any(d.kind == "wrong-content-type" and d.severity == "note" for d in step.diagnostics):
            kinds.append("SSE fallback")
        if step.name == "state sent" and step.report is not None:
            kinds.append("no state event" if step.note == _NO_STATE_EVENT else "state events")
        cells.append(step.outcome + (f" ({', '.join(kinds)})" if kinds else ""))
    return f"| {name} | " + " | ".join(cells) + " |"


SUMMARY_HEADER = (
    "| producer | plain message | protobuf Accept | frontend tool offered | "
    "frontend tool answered | state sent | client disconnects | resume |"
)


def render_probe_sarif(steps: list[ProbeStep], url: str) -> str:
    """SARIF 2.1.0 with a run per step that read a stream (each as ``render_sarif`` gives it,
    located in ``URL#step``), its transport violations and warnings as results too."""
    runs = []
    for step in steps:
        if step.report is None:
            continue
        # a URI reference: the URL as requested (a fragment is never sent), the step's name as
        # its fragment
        requested = url.partition("#")[0]
        location = f"{quote(requested, safe=_URI_RESERVED)}#{quote(step.name)}"
        [run] = msgspec.json.decode(render_sarif(step.report, artifact=location))["runs"]
        for diagnostic in step.diagnostics:
            if diagnostic.severity == "note":
                continue
            run["results"].append(
                {
                    "ruleId": f"transport/{diagnostic.kind}",
                    "level": "error" if diagnostic.severity == "violation" else "warning",
                    "message": {"text": diagnostic.message},
                    "locations": [{"physicalLocation": {"artifactLocation": {"uri": location}}}],
                }
            )
        run["properties"]["step"] = step.name
        runs.append(run)
    document = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": runs}
    return json_text(document)


def render_probe_junit(steps: list[ProbeStep]) -> str:
    """JUnit XML: a test suite per step (``render_junit``'s for a stream read), and a test
    case per transport diagnostic; a skipped step is a skipped case saying why."""
    suites = ET.Element("testsuites")
    for step in steps:
        if step.report is not None:
            suite = ET.fromstring(render_junit(step.report, name=step.name))[0]  # its one suite
        else:
            suite = ET.Element("testsuite", name=f"agui-msgspec {step.name}", tests="0")
            suite.set("failures", "0")
            suite.set("errors", "0")
        extra = 0
        if step.report is None:
            case = ET.SubElement(suite, "testcase", classname=step.name, name="step")
            outcome = "skipped" if step.outcome == "skipped" else "failure"
            ET.SubElement(case, outcome, message=inert(step.note or step.outcome))
            extra += 1
        for diagnostic in step.diagnostics:
            case = ET.SubElement(suite, "testcase", classname=step.name, name=diagnostic.kind)
            if diagnostic.severity == "violation":
                ET.SubElement(
                    case, "failure", message=inert(diagnostic.message), type=diagnostic.kind
                )
                suite.set("failures", str(int(suite.get("failures", "0")) + 1))
            else:
                ET.SubElement(case, "system-out").text = inert(diagnostic.message)
            extra += 1
        if step.outcome == "failed" and step.report is None:
            suite.set("failures", str(int(suite.get("failures", "0")) + 1))
        suite.set("tests", str(int(suite.get("tests", "0")) + extra))
        suites.append(suite)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
