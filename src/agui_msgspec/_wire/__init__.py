"""Bytes ⇄ payloads: the text wire (SSE and JSON lines, reader beside writer) and the
protobuf wire. Imports only the base modules and the bindings."""
