"""Generate msgspec bindings from an AG-UI JSON Schema file.

datamodel-code-generator parses the schema (references, ``allOf`` mixins,
constraints); :mod:`codegen.model` turns its models into a small description of
msgspec Structs, tagged unions and tables, and :mod:`codegen.render` writes
that description through the jinja2 template in ``templates/``.
"""
