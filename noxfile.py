"""Project tasks: ``nox -s tests``, ``typecheck``, ``lint``, ``generate``, ``drift``."""

from __future__ import annotations

import filecmp
import tempfile
from pathlib import Path

import nox

ROOT = Path(__file__).parent
SCHEMAS = sorted(ROOT.glob("schema/*/schema.json"))
# The generator's tools, pinned: the [codegen] extra gives ranges, drift needs one exact set.
RUFF = "ruff==0.17.6"  # lints, and formats what the generator writes
CODEGEN_PINS = ("datamodel-code-generator==0.89.0", "jinja2==3.1.6", RUFF)
CONFORMANCE = ROOT.parent / "shared" / "agui" / "conformance" / "1.1" / "streams"

nox.options.sessions = ["tests", "typecheck", "lint", "drift"]
nox.options.reuse_venv = "yes"


@nox.session
def tests(session: nox.Session) -> None:
    """The whole test suite, against the installed package."""
    session.install(".[tests]")
    session.run("pytest", *session.posargs)


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the package (runtime, generated modules, generator) and the typed
    tag attributes as a user sees them."""
    session.install(".[dev]")
    session.run("mypy", "-p", "agui_msgspec")
    session.run("mypy", "tests/test_tag_attributes.py")


@nox.session
def lint(session: nox.Session) -> None:
    session.install(RUFF)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


def _generate_into(session: nox.Session, out: Path) -> None:
    session.install(".", *CODEGEN_PINS)
    for schema in SCHEMAS:
        session.run("agui-msgspec", "generate", str(schema), "--out", str(out), silent=True)


@nox.session
def generate(session: nox.Session) -> None:
    """Regenerate generated/ from schema/ (the installed package's generator, pinned tools)."""
    _generate_into(session, ROOT / "generated")


@nox.session
def drift(session: nox.Session) -> None:
    """Fail if generated/ differs from what codegen makes of schema/ now."""
    with tempfile.TemporaryDirectory() as tmp:
        _generate_into(session, Path(tmp))
        fresh = sorted(p.name for p in Path(tmp).glob("*.py"))
        committed = sorted(p.name for p in (ROOT / "generated").glob("*.py"))
        if fresh != committed:
            session.error(f"generated/ holds {committed}, codegen makes {fresh}")
        changed = [
            n for n in fresh if not filecmp.cmp(Path(tmp, n), ROOT / "generated" / n, shallow=False)
        ]
        if changed:
            session.error(
                f"generated/ was edited or is stale: {', '.join(changed)}; run `nox -s generate`"
            )
    session.log(f"generated/ matches schema/ ({len(fresh)} modules)")


@nox.session
def conformance(session: nox.Session) -> None:
    """The upstream conformance streams through the public API, when ../shared is present."""
    if not CONFORMANCE.is_dir():
        session.skip(f"no conformance streams at {CONFORMANCE}")
    session.install(".")
    session.run("agui-msgspec", "conformance", str(CONFORMANCE))


@nox.session
def bench(session: nox.Session) -> None:
    """The benchmarks, against the official SDK: ``nox -s bench -- --quick`` for a short run."""
    session.install(".", "orjson", "ag-ui-protocol==1.0.0")
    session.run("python", "benchmarks/run.py", *session.posargs)


@nox.session
def fuzz(session: nox.Session) -> None:
    """Fuzz the readers and the consumer: ``nox -s fuzz -- SECONDS [fuzz_consume.py options]``.

    Coverage-guided with atheris when it installs for this Python, else hypothesis;
    seeded with examples/ and the conformance streams when present.
    """
    seconds = session.posargs[0] if session.posargs else "60"
    session.install(".", "hypothesis>=6.100")
    # atheris ships wheels for some Pythons only; without it the script uses hypothesis.
    session.run("python", "-m", "pip", "install", "--quiet", "atheris", success_codes=[0, 1])
    session.run("python", "fuzz/fuzz_consume.py", "--seconds", seconds, *session.posargs[1:])
