"""The sans-IO consumer pipeline, one module per stage in the specification's order:
compat → enforce → expand → lifecycle (keeping a ``run`` record each) → reduce (over patch),
with input, warnings and the consumer that runs them. Imports the wires and the base
modules, nothing above it."""
