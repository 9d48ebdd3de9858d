"""The package's version, in one place: hatch reads it into the metadata at build time."""

__version__ = "0.1.0"
