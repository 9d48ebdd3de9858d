"""Project tasks: ``nox -s tests``, ``typecheck``, ``lint``, ``generate``, ``drift``."""

from __future__ import annotations

import filecmp
import hashlib
import shutil
import tempfile
from pathlib import Path

import nox

ROOT = Path(__file__).parent
SCHEMAS = sorted(ROOT.glob("schema/*/schema.json"))
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
    """mypy --strict over the runtime, the generated modules and the generator."""
    session.install(".[dev]")
    session.run("mypy", "-p", "agui_msgspec")
    session.run("mypy", "codegen", *map(str, sorted(ROOT.glob("generated/*.py"))))


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff==0.17.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


def _generate_into(session: nox.Session, out: Path) -> None:
    for schema in SCHEMAS:
        session.run(
            "python", "-m", "codegen", "--schema", str(schema), "--out", str(out), silent=True
        )


@nox.session
def generate(session: nox.Session) -> None:
    """Regenerate generated/ from schema/."""
    session.install(".[codegen]")
    _generate_into(session, ROOT / "generated")


@nox.session
def drift(session: nox.Session) -> None:
    """Fail if generated/ differs from what codegen makes of schema/ now."""
    session.install(".[codegen]")
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
    session.run("python", "benchmarks/interop.py")  # the official models' conversion costs


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


@nox.session
def differential(session: nox.Session) -> None:
    """consume() beside @ag-ui/client 1.0.0 over the fixtures and seeded mutants of them.

    ``nox -s differential`` runs 3,000 mutated streams (CI); ``-- --full`` runs 25,000;
    ``-- --sample N --seed S --show K --dump FILE`` as tests/differential/run.py says.
    The client comes from npm (tests/differential/node/package-lock.json) into nox's cache.
    """
    if not CONFORMANCE.is_dir():
        session.skip(f"no conformance streams at {CONFORMANCE}")
    session.install(".")
    node_dir = _node_install(session, ROOT / "tests" / "differential" / "node")
    session.run(
        "python",
        "tests/differential/run.py",
        "--node-modules",
        str(node_dir / "node_modules"),
        *session.posargs,
    )


def _node_install(session: nox.Session, source: Path) -> Path:
    """`npm ci` of source's package.json + lock into nox's cache, once per lock."""
    target = Path(session.cache_dir) / f"npm-{source.parent.name}"
    lock = (source / "package-lock.json").read_bytes()
    stamp = target / ".lock-sha256"
    digest = hashlib.sha256(lock).hexdigest()
    if stamp.is_file() and stamp.read_text() == digest and (target / "node_modules").is_dir():
        return target
    target.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(source / name, target / name)
    session.run("npm", "ci", "--no-audit", "--no-fund", "--prefix", str(target), external=True)
    stamp.write_text(digest)
    return target
