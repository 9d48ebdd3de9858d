"""The tools over the library: the command line, the conformance runner, the generator's
entry point. Nothing in the library imports them."""
