"""Project tasks: ``nox -s tests``, ``typecheck``, ``lint``, ``generate``, ``drift``, ``interop``."""

from __future__ import annotations

import filecmp
import hashlib
import shutil
import tempfile
from pathlib import Path

import nox

ROOT = Path(__file__).parent
SCHEMAS = sorted(ROOT.glob("schema/*/schema.json"))
BINDINGS = ROOT / "src" / "agui_msgspec"  # the generated modules live in the package
# The generator's tools, pinned: the [codegen] extra gives ranges, drift needs one exact set.
RUFF = "ruff==0.17.6"  # lints, and formats what the generator writes
CODEGEN_PINS = ("datamodel-code-generator==0.89.0", "jinja2==3.1.6", RUFF)
NODE_PARITY = ROOT / "tests" / "node"
PROTO_DATA = ROOT / "tests" / "data" / "proto"
CONFORMANCE = ROOT.parent / "shared" / "agui" / "conformance" / "1.1" / "streams"

DRAFT = ROOT.parent / "shared" / "agui" / "schema" / "pre-1.0-draft" / "schema.json"

nox.options.sessions = ["tests", "typecheck", "lint", "drift", "packaging"]
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
    session.run("mypy", "tests/bindings/test_tag_attributes.py")
    if not DRAFT.is_file():
        session.log(f"no draft schema at {DRAFT}: generated-draft check skipped")
        return
    with tempfile.TemporaryDirectory() as tmp:  # what a user generates from a draft
        session.run("agui-msgspec", "generate", str(DRAFT), "--out", tmp, "--module", "draft")
        session.run("mypy", "--strict", "--no-incremental", str(Path(tmp, "draft.py")))


@nox.session
def lint(session: nox.Session) -> None:
    session.install(RUFF)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


def _generate_into(session: nox.Session, out: Path, *, frozen: bool = False) -> None:
    session.install(".", *CODEGEN_PINS)
    for schema in SCHEMAS:
        session.run("agui-msgspec", "generate", str(schema), "--out", str(out), silent=True)
        if schema.with_name("proto-freeze.txt").exists():  # the protobuf wire schema and tables
            args = ["--schema", str(schema), "--out", str(out), *(["--frozen"] if frozen else [])]
            session.run("python", "-m", "agui_msgspec._codegen.proto", *args, silent=True)


def _generated(folder: Path) -> dict[str, Path]:
    """The generated files in folder: each version's bindings, wire tables and .proto."""
    return {p.name: p for p in sorted(folder.glob("v[0-9]*")) if p.suffix in (".py", ".proto")}


@nox.session
def generate(session: nox.Session) -> None:
    """Regenerate the bindings in the package from schema/ (the installed package's generator,
    pinned tools)."""
    _generate_into(session, BINDINGS)


@nox.session
def drift(session: nox.Session) -> None:
    """Fail if the package's generated files differ from what codegen makes of schema/ now."""
    with tempfile.TemporaryDirectory() as tmp:
        _generate_into(session, Path(tmp), frozen=True)
        fresh, committed = _generated(Path(tmp)), _generated(BINDINGS)
        if sorted(fresh) != sorted(committed):
            session.error(f"the package holds {sorted(committed)}, codegen makes {sorted(fresh)}")
        changed = [n for n in fresh if not filecmp.cmp(fresh[n], committed[n], shallow=False)]
        if changed:
            session.error(f"edited or stale: {', '.join(changed)}; run `nox -s generate`")
    session.log(f"the generated files match schema/ ({len(fresh)} files)")


_INSTALLED_CHECK = """
import importlib.util, agui_msgspec as agui
from agui_msgspec import v1_0, v1_1
assert agui.RunStartedEvent.type == "RUN_STARTED" and v1_0.UserMessage.role == "user"
result = agui.consume_body(open("{root}/examples/plain-answer.sse", "rb").read())
assert result.outcome == "completed", result.violation
files = [agui.__file__, v1_1.__file__, importlib.util.find_spec("agui_msgspec._codegen").origin]
print(*files)
assert all(f.startswith("{root}/src/agui_msgspec/") for f in files) == {editable}
"""


@nox.session
def packaging(session: nox.Session) -> None:
    """``pip install -e .`` and ``pip install .`` into fresh venvs: import, consume, and
    ``generate`` without the codegen extra (a usage error naming it, exit 2)."""
    with tempfile.TemporaryDirectory() as tmp:
        for editable in (True, False):
            venv = Path(tmp, "editable" if editable else "wheel")
            session.run("python", "-m", "venv", str(venv), silent=True)
            python, cli = str(venv / "bin" / "python"), str(venv / "bin" / "agui-msgspec")
            target = ["-e", str(ROOT)] if editable else [str(ROOT)]
            session.run(python, "-m", "pip", "install", "--quiet", *target, external=True)
            check = _INSTALLED_CHECK.format(root=ROOT, editable=editable)
            session.run(python, "-c", check, external=True)
            schema = str(ROOT / "schema" / "1.1" / "schema.json")
            out = session.run(
                cli,
                "generate",
                schema,
                "--out",
                tmp,
                success_codes=[2],
                external=True,
                silent=True,
            )
            if "pip install 'agui-msgspec[codegen]'" not in str(out):
                session.error(f"generate without the codegen extra said: {out}")


@nox.session
def conformance(session: nox.Session) -> None:
    """The upstream conformance streams through the public API, when ../shared is present."""
    if not CONFORMANCE.is_dir():
        session.skip(f"no conformance streams at {CONFORMANCE}")
    session.install(".")
    session.run("agui-msgspec", "conformance", str(CONFORMANCE))


def _node_proto(session: nox.Session) -> Path:
    """@ag-ui/proto installed by npm from tests/node's lockfile, in this session's folder."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        session.skip("node and npm are needed to run @ag-ui/proto")
    node = Path(session.virtualenv.location) / "node"
    node.mkdir(exist_ok=True)
    for name in ("package.json", "package-lock.json", "proto_corpus.mjs", "proto_timing.mjs"):
        shutil.copy(NODE_PARITY / name, node / name)
    session.run(
        "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", str(node),
        external=True,
    )  # fmt: skip
    return node


@nox.session
def proto_parity(session: nox.Session) -> None:
    """Byte parity with @ag-ui/proto 1.0.0 (node, npm): it re-encodes the corpus into
    tests/data/proto/corpus-frames.json (a diff there is a parity break), decodes what we
    encode, and the corpus tests run against the fresh frames."""
    session.install(".[tests]")
    node = _node_proto(session)
    events, frames = PROTO_DATA / "corpus-events.json", PROTO_DATA / "corpus-frames.json"
    script = str(node / "proto_corpus.mjs")
    session.run("node", script, "encode", str(events), str(frames), external=True)
    ours, decoded = node / "ours.json", node / "decoded.json"
    session.run("python", str(NODE_PARITY / "parity.py"), "encode", str(events), str(ours))
    session.run("node", script, "decode", str(ours), str(decoded), external=True)
    session.run("python", str(NODE_PARITY / "parity.py"), "check", str(events), str(decoded))
    session.run("pytest", "-q", "tests/wire/test_protobuf.py", "-k", "reference or corpus")


@nox.session
def proto_bench(session: nox.Session) -> None:
    """The protobuf binding against SSE, Google's protobuf runtime and @ag-ui/proto in node:
    ``nox -s proto_bench -- --quick`` for a short run."""
    session.install(".", "protobuf")
    node = _node_proto(session)
    session.run(
        "python", "benchmarks/proto_bench.py", *session.posargs,
        env={"AGUI_NODE_PROTO_DIR": str(node)},
    )  # fmt: skip


@nox.session
def bench(session: nox.Session) -> None:
    """The benchmarks, against the official SDK: ``nox -s bench -- --quick`` for a short run."""
    session.install(".", "orjson", "ag-ui-protocol==1.0.0")
    session.run("python", "benchmarks/run.py", *session.posargs)
    session.run("python", "benchmarks/interop.py")  # the official models' conversion costs
    # per-event cost at 1k and 100k events of each stream shape that once grew with the stream
    quick = ["--large", "20000", "--repeat", "1"] if "--quick" in session.posargs else []
    session.run("python", "benchmarks/scaling.py", *quick)
    # the state workload with its costly stages taken out in turn: what bounds its target
    session.run("python", "benchmarks/state_floor.py", *(["--repeat", "2"] if quick else []))


@nox.session
def fuzz(session: nox.Session) -> None:
    """Fuzz the readers and the consumer, text then protobuf, each for SECONDS:
    ``nox -s fuzz -- SECONDS [fuzz_consume.py options]``.

    Coverage-guided with atheris when it installs for this Python, else hypothesis;
    seeded with examples/ and the conformance streams when present.
    """
    seconds = session.posargs[0] if session.posargs else "60"
    session.install(".", "hypothesis>=6.100")
    # atheris ships wheels for some Pythons only; without it the script uses hypothesis.
    session.run("python", "-m", "pip", "install", "--quiet", "atheris", success_codes=[0, 1])
    session.run("python", "fuzz/fuzz_consume.py", "--seconds", seconds, *session.posargs[1:])
    # the protobuf binding's reader and decoders, on frames, for as long again
    session.run(
        "python", "fuzz/fuzz_consume.py", "--target", "protobuf", "--seconds", seconds,
        *session.posargs[1:],
    )  # fmt: skip


@nox.session
def differential(session: nox.Session) -> None:
    """consume() beside @ag-ui/client 1.0.0 over the fixtures and seeded mutants of them.

    ``nox -s differential`` runs 3,000 mutated streams (CI); ``-- --full`` runs 25,000;
    ``-- --sample N --seed S --show K --dump FILE`` as tests/differential/run.py says.
    The client comes from npm (tests/differential/node/package-lock.json) into nox's cache.
    """
    if not CONFORMANCE.is_dir():
        session.skip(f"no conformance streams at {CONFORMANCE}")
    if shutil.which("node") is None or shutil.which("npm") is None:
        session.skip("node and npm are needed to run @ag-ui/client")
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
    session.run(
        "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", str(target),
        external=True,
    )  # fmt: skip
    stamp.write_text(digest)
    return target


# The producers `nox -s interop` serves: each framework's AG-UI integration as published, pinned
# (README "Real producers"), each in its own venv with the project's http extra.
INTEROP_PINS = {
    "pydantic_ai": ["pydantic-ai-slim[ag-ui]==2.68.0"],
    "langgraph": ["ag-ui-langgraph[fastapi]==0.0.47", "langgraph==1.2.24", "langchain-core==1.8.3"],
    "agent_framework": ["agent-framework-ag-ui==1.7.0", "agent-framework-core==1.23.0"],
    "strands": ["ag-ui-strands==1.0.2", "strands-agents==1.62.0"],
}


@nox.session
@nox.parametrize("framework", list(INTEROP_PINS))
def interop(session: nox.Session, framework: str) -> None:
    """A framework's AG-UI endpoint on loopback over a fake model, via HttpAgent and the CLI.

    ``nox -s interop`` runs all four; README "Real producers" says what each sends wrong.
    """
    session.install(".[http]", "pytest>=8", "uvicorn==0.54.0", *INTEROP_PINS[framework])
    session.run(
        "pytest",
        "tests/interop/test_producers.py",
        *session.posargs,
        # Its cases alone, and the framework must import: a failure, not a skip.
        env={"AGUI_INTEROP": framework},
    )
