"""Fast, typed AG-UI bindings and the consumer pipeline the specification requires.

The names of the newest frozen protocol version (1.1) are re-exported here;
``agui_msgspec.v1_0`` and ``agui_msgspec.v1_1`` hold each version's bindings.
"""

from agui_msgspec import v1_0, v1_1
from agui_msgspec._errors import (
    AguiError,
    ChunkViolation,
    HttpAgentError,
    LifecycleViolation,
    MalformedEvent,
    ProtocolViolation,
    RunFailed,
    TransportError,
    UsageError,
)
from agui_msgspec._http.client import HttpAgent, RunResult, RunStream
from agui_msgspec._official import from_official, to_official
from agui_msgspec._pipeline.consumer import Consumer, Result, consume, consume_body
from agui_msgspec._pipeline.input import prepare_input, read_input
from agui_msgspec._pipeline.lifecycle import Run, RunStatus
from agui_msgspec._serve.guard import GuardReport, ProducerGuard
from agui_msgspec._serve.response import EventStream, negotiate_media_type
from agui_msgspec._serve.writer import StrictWriter
from agui_msgspec._tools.generate import generate
from agui_msgspec._versions import LATEST_VERSION, SUPPORTED_VERSIONS
from agui_msgspec._wire.protobuf import (
    PROTOBUF_MEDIA_TYPE,
    ProtobufReader,
    encode_proto,
    proto_frame,
)
from agui_msgspec._wire.text import SSE_MEDIA_TYPE, JSONLinesReader, SSEReader, encode, sse_frame
from agui_msgspec.v1_1 import *  # noqa: F403
from agui_msgspec.v1_1 import __all__ as _bindings

__all__ = [  # noqa: PLE0604
    "AguiError",
    "LATEST_VERSION",
    "PROTOBUF_MEDIA_TYPE",
    "SSE_MEDIA_TYPE",
    "SUPPORTED_VERSIONS",
    "ChunkViolation",
    "Consumer",
    "EventStream",
    "GuardReport",
    "HttpAgent",
    "HttpAgentError",
    "JSONLinesReader",
    "LifecycleViolation",
    "MalformedEvent",
    "ProducerGuard",
    "ProtobufReader",
    "ProtocolViolation",
    "Result",
    "Run",
    "RunFailed",
    "RunResult",
    "RunStatus",
    "RunStream",
    "SSEReader",
    "StrictWriter",
    "TransportError",
    "UsageError",
    "consume",
    "consume_body",
    "encode",
    "encode_proto",
    "from_official",
    "generate",
    "negotiate_media_type",
    "prepare_input",
    "proto_frame",
    "read_input",
    "sse_frame",
    "to_official",
    "v1_0",
    "v1_1",
    *_bindings,
]
