"""Fast, typed AG-UI bindings and the consumer pipeline the specification requires.

The newest frozen protocol version's (1.1) Structs, unions and aliases are re-exported
here; ``agui_msgspec.v1_1`` and ``agui_msgspec.v1_0`` hold each version's whole bindings,
the generator's tables (``EVENT_TYPES``, ``UNIONS``, ...) and decoders included. Every
exception is an :class:`AguiError`: nothing else escapes a public entry point.
"""

import importlib
import warnings
from typing import TYPE_CHECKING, Any, Final

from agui_msgspec import v1_1
from agui_msgspec.__about__ import __version__ as __version__
from agui_msgspec._errors import (
    AguiError,
    ChunkViolation,
    CodegenError,
    HttpAgentError,
    LifecycleViolation,
    MalformedEvent,
    MalformedInput,
    ProtocolViolation,
    RunFailed,
    TransportError,
    UsageError,
)
from agui_msgspec._pipeline import input as _input
from agui_msgspec._pipeline.consumer import (
    Consumer,
    Result,
    VerifyingConsumer,
    consume,
    consume_body,
)
from agui_msgspec._pipeline.decode import Decoder, decode, decode_message
from agui_msgspec._pipeline.input import build_run_input, parse_run_input
from agui_msgspec._pipeline.run import Run, RunStatus
from agui_msgspec._versions import LATEST_VERSION as _LATEST_VERSION
from agui_msgspec._versions import SUPPORTED_VERSIONS
from agui_msgspec._wire.protobuf import (
    PROTOBUF_MEDIA_TYPE,
    ProtobufReader,
    encode_proto,
    proto_frame,
)
from agui_msgspec._wire.text import SSE_MEDIA_TYPE, JSONLinesReader, SSEReader, encode, sse_frame
from agui_msgspec.v1_1 import (
    ActivityDeltaEvent,
    ActivityMessage,
    ActivitySnapshotEvent,
    AddOperation,
    AgentCapabilities,
    AssistantMessage,
    AudioPart,
    ContentPart,
    Context,
    CopyOperation,
    CustomEvent,
    DataSource,
    DeveloperMessage,
    DocumentPart,
    Event,
    EventType,
    ExecutionCapabilities,
    FileSource,
    FunctionCall,
    HumanInTheLoopCapabilities,
    IdentityCapabilities,
    ImagePart,
    Interrupt,
    JsonPatch,
    JsonPatchOperation,
    JsonPointer,
    Message,
    MessagesSnapshotEvent,
    Metadata,
    MoveOperation,
    MultiAgentCapabilities,
    MultimodalCapabilities,
    MultimodalInputCapabilities,
    MultimodalOutputCapabilities,
    NonNullValue,
    OutputCapabilities,
    PartSource,
    RawEvent,
    ReasoningCapabilities,
    ReasoningEncryptedValueEvent,
    ReasoningEncryptedValueSubtype,
    ReasoningEndEvent,
    ReasoningMessage,
    ReasoningMessageChunkEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RemoveOperation,
    ReplaceOperation,
    ResumeEntry,
    ResumeEntryStatus,
    Role,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    State,
    StateCapabilities,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentFinishedOutcome,
    SubagentFinishedSuccessOutcome,
    SubagentFinishedSuspendedOutcome,
    SubagentInfo,
    SubagentRunId,
    SubagentStartedEvent,
    SystemMessage,
    TestOperation,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageRole,
    TextMessageStartEvent,
    TextPart,
    TokenUsage,
    Tool,
    ToolCall,
    ToolCallArgsEvent,
    ToolCallChunkEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    ToolMessage,
    ToolsCapabilities,
    TransportCapabilities,
    UrlSource,
    UserMessage,
    VideoPart,
)

if TYPE_CHECKING:  # a type checker sees what the module __getattr__ below serves at run time
    from agui_msgspec import v1_0 as v1_0
    from agui_msgspec._http.client import HttpAgent, RunResult, RunStream
    from agui_msgspec._official import from_official, to_official
    from agui_msgspec._pipeline.input import prepare_input as prepare_input
    from agui_msgspec._pipeline.input import read_input as read_input
    from agui_msgspec._serve.guard import GuardReport, ProducerGuard
    from agui_msgspec._serve.response import EventStream, negotiate_media_type
    from agui_msgspec._serve.writer import StrictWriter
    from agui_msgspec._tools.generate import generate
    from agui_msgspec._tools.render import render_json, render_junit, render_sarif, render_text
    from agui_msgspec._tools.render_html import render_html
    from agui_msgspec._tools.verify import Finding, Report, ReportEvent, StateStep, verify
    from agui_msgspec._versions import LATEST_VERSION as LATEST_VERSION
    from agui_msgspec.v1_1 import (
        CLOSED_STRING_SETS as CLOSED_STRING_SETS,
    )
    from agui_msgspec.v1_1 import EVENT_TYPES as EVENT_TYPES
    from agui_msgspec.v1_1 import OPEN_UNION_FIELDS as OPEN_UNION_FIELDS
    from agui_msgspec.v1_1 import REQUIRED_FIELDS as REQUIRED_FIELDS
    from agui_msgspec.v1_1 import SCHEMA_ID as SCHEMA_ID
    from agui_msgspec.v1_1 import UNIONS as UNIONS
    from agui_msgspec.v1_1 import encoder as encoder
    from agui_msgspec.v1_1 import event_decoder as event_decoder

PROTOCOL_VERSION: Final = _LATEST_VERSION
"""The newest frozen protocol version (``"1.1"``): every ``version=`` defaults to it."""

__all__ = [  # noqa: RUF022  (grouped by concern, as the docs index them, not sorted)
    # Consuming a stream: the whole pipeline, sans-IO or over a whole body
    "Consumer",
    "Result",
    "Run",
    "RunStatus",
    "consume",
    "consume_body",
    # Decoding alone: the tolerant decode with no lifecycle, and the verdict with no conversation
    "Decoder",
    "VerifyingConsumer",
    "decode",
    "decode_message",
    # Verifying a producer: every finding of a stream, and the report in CI formats
    "Finding",
    "Report",
    "ReportEvent",
    "StateStep",
    "render_html",
    "render_json",
    "render_junit",
    "render_sarif",
    "render_text",
    "verify",
    # The run input: the server's reading of a request body, the client's outgoing check
    "build_run_input",
    "parse_run_input",
    # The HTTP client
    "HttpAgent",
    "RunResult",
    "RunStream",
    # Producing: the strict writer, a streaming response, the guard around an endpoint
    "EventStream",
    "GuardReport",
    "ProducerGuard",
    "StrictWriter",
    "negotiate_media_type",
    # The wires: readers of bodies, and writers of frames
    "JSONLinesReader",
    "PROTOBUF_MEDIA_TYPE",
    "ProtobufReader",
    "SSEReader",
    "SSE_MEDIA_TYPE",
    "encode",
    "encode_proto",
    "proto_frame",
    "sse_frame",
    # The official Python SDK (ag-ui-protocol)
    "from_official",
    "to_official",
    # Versions and bindings: each version's module, and the generator
    "PROTOCOL_VERSION",
    "SUPPORTED_VERSIONS",
    "generate",
    "v1_0",
    "v1_1",
    # Errors: one tree under AguiError (agui_msgspec._errors' docstring draws it)
    "AguiError",
    "ChunkViolation",
    "CodegenError",
    "HttpAgentError",
    "LifecycleViolation",
    "MalformedEvent",
    "MalformedInput",
    "ProtocolViolation",
    "RunFailed",
    "TransportError",
    "UsageError",
    # The 1.1 bindings: events
    "ActivityDeltaEvent",
    "ActivitySnapshotEvent",
    "CustomEvent",
    "MessagesSnapshotEvent",
    "RawEvent",
    "ReasoningEncryptedValueEvent",
    "ReasoningEndEvent",
    "ReasoningMessageChunkEvent",
    "ReasoningMessageContentEvent",
    "ReasoningMessageEndEvent",
    "ReasoningMessageStartEvent",
    "ReasoningStartEvent",
    "RunErrorEvent",
    "RunFinishedEvent",
    "RunStartedEvent",
    "StateDeltaEvent",
    "StateSnapshotEvent",
    "StepFinishedEvent",
    "StepStartedEvent",
    "SubagentErrorEvent",
    "SubagentFinishedEvent",
    "SubagentStartedEvent",
    "TextMessageChunkEvent",
    "TextMessageContentEvent",
    "TextMessageEndEvent",
    "TextMessageStartEvent",
    "ToolCallArgsEvent",
    "ToolCallChunkEvent",
    "ToolCallEndEvent",
    "ToolCallResultEvent",
    "ToolCallStartEvent",
    # The 1.1 bindings: messages
    "ActivityMessage",
    "AssistantMessage",
    "DeveloperMessage",
    "ReasoningMessage",
    "SystemMessage",
    "ToolMessage",
    "UserMessage",
    # The 1.1 bindings: unions, each tagged on its discriminator
    "ContentPart",
    "Event",
    "Message",
    "RunFinishedOutcome",
    "SubagentFinishedOutcome",
    "JsonPatchOperation",
    # The 1.1 bindings: closed string sets and aliases
    "EventType",
    "JsonPatch",
    "JsonPointer",
    "Metadata",
    "NonNullValue",
    "PartSource",
    "ReasoningEncryptedValueSubtype",
    "ResumeEntryStatus",
    "Role",
    "State",
    "SubagentRunId",
    "TextMessageRole",
    # The 1.1 bindings: the other Structs
    "AddOperation",
    "AgentCapabilities",
    "AudioPart",
    "Context",
    "CopyOperation",
    "DataSource",
    "DocumentPart",
    "ExecutionCapabilities",
    "FileSource",
    "FunctionCall",
    "HumanInTheLoopCapabilities",
    "IdentityCapabilities",
    "ImagePart",
    "Interrupt",
    "MoveOperation",
    "MultiAgentCapabilities",
    "MultimodalCapabilities",
    "MultimodalInputCapabilities",
    "MultimodalOutputCapabilities",
    "OutputCapabilities",
    "ReasoningCapabilities",
    "RemoveOperation",
    "ReplaceOperation",
    "ResumeEntry",
    "RunAgentInput",
    "RunFinishedCancelledOutcome",
    "RunFinishedInterruptOutcome",
    "RunFinishedSuccessOutcome",
    "StateCapabilities",
    "SubagentFinishedSuccessOutcome",
    "SubagentFinishedSuspendedOutcome",
    "SubagentInfo",
    "TestOperation",
    "TextPart",
    "TokenUsage",
    "Tool",
    "ToolCall",
    "ToolsCapabilities",
    "TransportCapabilities",
    "UrlSource",
    "VideoPart",
]

# Names that moved: each still works for one release, with a DeprecationWarning.
_GENERATOR_NAMES = (
    "CLOSED_STRING_SETS",
    "EVENT_TYPES",
    "OPEN_UNION_FIELDS",
    "REQUIRED_FIELDS",
    "SCHEMA_ID",
    "UNIONS",
    "encoder",
    "event_decoder",
)
# The client, the producer side, the conversions and the tools, imported when first named:
# `import agui_msgspec` costs the bindings and the consumer only (BENCHMARKS.md, imports).
_LAZY = {
    **dict.fromkeys(("HttpAgent", "RunResult", "RunStream"), "_http.client"),
    **dict.fromkeys(("from_official", "to_official"), "_official"),
    **dict.fromkeys(("GuardReport", "ProducerGuard"), "_serve.guard"),
    **dict.fromkeys(("EventStream", "negotiate_media_type"), "_serve.response"),
    "StrictWriter": "_serve.writer",
    "generate": "_tools.generate",
    **dict.fromkeys(
        ("render_json", "render_junit", "render_sarif", "render_text"), "_tools.render"
    ),
    "render_html": "_tools.render_html",
    **dict.fromkeys(("Finding", "Report", "ReportEvent", "StateStep", "verify"), "_tools.verify"),
}

# the old functions warn where they are called, and keep their old signatures
_RENAMED_FUNCTIONS = {"read_input": _input.read_input, "prepare_input": _input.prepare_input}


if not TYPE_CHECKING:  # for a type checker, an unknown name stays an error, not Any

    def __getattr__(name: str) -> Any:
        """``v1_0`` and the names of ``_LAZY``, loaded when first asked for; the deprecated
        names, with their warning."""
        if name == "v1_0":  # the 1.0 bindings cost import time few users need
            return importlib.import_module("agui_msgspec.v1_0")
        if name in _LAZY:
            value = getattr(importlib.import_module(f"agui_msgspec.{_LAZY[name]}"), name)
            globals()[name] = value  # once: later reads do not come here
            return value
        if name in _GENERATOR_NAMES:
            warnings.warn(
                f"agui_msgspec.{name} is deprecated: the generator's tables and objects are on "
                f"the bindings module, agui_msgspec.v1_1.{name}",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(v1_1, name)
        if name == "LATEST_VERSION":
            warnings.warn(
                "agui_msgspec.LATEST_VERSION is deprecated: use agui_msgspec.PROTOCOL_VERSION",
                DeprecationWarning,
                stacklevel=2,
            )
            return _LATEST_VERSION
        if name in _RENAMED_FUNCTIONS:
            return _RENAMED_FUNCTIONS[name]
        raise AttributeError(f"module 'agui_msgspec' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "v1_0", *_LAZY})
