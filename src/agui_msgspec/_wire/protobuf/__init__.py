"""The HTTP + Protobuf binding: length-prefixed frames of the generated wire schema."""
