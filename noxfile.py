"""Project tasks: ``nox -s tests``, ``typecheck``, ``lint``, ``generate``, ``drift``, ``interop``,
``compiled``."""

from __future__ import annotations

import filecmp
import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from email.parser import HeaderParser
from pathlib import Path

import nox
import tomllib

ROOT = Path(__file__).parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
# Every Python the package supports, oldest first: pyproject.toml's classifiers list the same,
# and CI runs the two ends (.ci/run).
PYTHONS = ["3.10", "3.11", "3.12", "3.13"]
SCHEMAS = sorted(ROOT.glob("schema/*/schema.json"))
BINDINGS = ROOT / "src" / "agui_msgspec"  # the generated modules live in the package
# The generator's tools, pinned: the [codegen] extra gives ranges, drift needs one exact set.
RUFF = "ruff==0.17.6"  # lints, and formats what the generator writes
CODEGEN_PINS = ("datamodel-code-generator==0.89.0", "jinja2==3.1.6", RUFF)
NODE_PARITY = ROOT / "tests" / "node"
TYPING_CASES = ROOT / "tests" / "system" / "typing_cases"
PROTO_DATA = ROOT / "tests" / "data" / "proto"
CONFORMANCE = ROOT.parent / "shared" / "agui" / "conformance" / "1.1" / "streams"

DRAFT = ROOT.parent / "shared" / "agui" / "schema" / "pre-1.0-draft" / "schema.json"

nox.options.sessions = ["tests", "typecheck", "lint", "drift", "packaging"]
nox.options.reuse_venv = "yes"


def _expose_pyenv_pythons() -> None:
    """pyenv's shims run only its active versions, so nox would not find an installed 3.10 that
    is not the global one: the newest install of each of PYTHONS joins the active versions."""
    if shutil.which("pyenv") is None:
        return

    def pyenv(*args: str) -> str:
        done = subprocess.run(["pyenv", *args], capture_output=True, text=True, check=False)
        return done.stdout.strip() if done.returncode == 0 else ""

    active = os.environ.get("PYENV_VERSION") or pyenv("version-name")
    versions = [*active.split(":"), *(pyenv("latest", python) for python in PYTHONS)]
    os.environ["PYENV_VERSION"] = ":".join(dict.fromkeys(v for v in versions if v))


_expose_pyenv_pythons()


def _install_with(session: nox.Session, group: str) -> None:
    """The package with the extras the suite drives, and a PEP 735 dependency group."""
    session.install(".[codegen,http]", *nox.project.dependency_groups(PYPROJECT, group))


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """The whole test suite against the installed package, on every supported Python
    (``nox -s tests-3.13`` for one)."""
    _install_with(session, "tests")
    session.run("pytest", *session.posargs)


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the package (runtime, generated modules, generator) and the typed
    tag attributes as a user sees them."""
    _install_with(session, "dev")
    session.run("mypy", "-p", "agui_msgspec")
    session.run("mypy", "tests/bindings/test_tag_attributes.py")
    session.run("mypy", "--strict", "tests/pipeline/test_decode_types.py")  # what user code sees
    session.run("mypy", "--strict", "fuzz/fuzz_consume.py")
    _pyright_user_code(session)
    if not DRAFT.is_file():
        session.log(f"no draft schema at {DRAFT}: generated-draft check skipped")
        return
    with tempfile.TemporaryDirectory() as tmp:  # what a user generates from a draft
        session.run("agui-msgspec", "generate", str(DRAFT), "--out", tmp, "--module", "draft")
        session.run("mypy", "--strict", "--no-incremental", str(Path(tmp, "draft.py")))


def _pyright_user_code(session: nox.Session) -> None:
    """pyright (VS Code's checker), strict by each file's comment, over the user code mypy
    checks above: the two checkers resolve overloads and protocols differently."""
    if shutil.which("npm") is None:
        session.log("npm not found: the pyright check of user code skipped")
        return
    pyright = _node_install(session, TYPING_CASES / "node") / "node_modules" / ".bin" / "pyright"
    python = Path(session.bin) / "python"
    files = ["tests/pipeline/test_decode_types.py", str(TYPING_CASES / "user_sdk.py")]
    args = ["--pythonpath", str(python), "--pythonversion", "3.10", *files]
    session.run(str(pyright), *args, external=True)


@nox.session
def lint(session: nox.Session) -> None:
    session.install(RUFF)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


def _generate_into(session: nox.Session, out: Path, freezes: Path | None = None) -> None:
    """Each schema's binding (module, .proto, wire tables) into ``out``, numbered by the
    freeze beside the schema, or by a copy of it in ``freezes`` (drift: the committed
    freeze is not touched, and a slot it lacks shows as a changed copy)."""
    session.install(".", *CODEGEN_PINS)
    for schema in SCHEMAS:
        freeze = schema.with_name("proto-freeze.txt")
        if freezes is not None:
            copy = freezes / schema.parent.name / freeze.name
            copy.parent.mkdir(parents=True)
            shutil.copy(freeze, copy)
            freeze = copy
        args = [str(schema), "--out", str(out), "--freeze", str(freeze)]
        session.run("agui-msgspec", "generate", *args, silent=True)


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
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as freezes:
        _generate_into(session, Path(tmp), Path(freezes))
        for schema in SCHEMAS:
            frozen = schema.with_name("proto-freeze.txt")
            copy = Path(freezes, schema.parent.name, frozen.name)
            if not filecmp.cmp(copy, frozen, shallow=False):
                session.error(f"{frozen} lacks slots the schema has: run `nox -s generate`")
        fresh, committed = _generated(Path(tmp)), _generated(BINDINGS)
        if sorted(fresh) != sorted(committed):
            session.error(f"the package holds {sorted(committed)}, codegen makes {sorted(fresh)}")
        changed = [n for n in fresh if not filecmp.cmp(fresh[n], committed[n], shallow=False)]
        if changed:
            session.error(f"edited or stale: {', '.join(changed)}; run `nox -s generate`")
    session.log(f"the generated files match schema/ ({len(fresh)} files)")


_INSTALLED_CHECK = """
import importlib.metadata, importlib.util, agui_msgspec as agui
from agui_msgspec import __about__, v1_0, v1_1
assert agui.RunStartedEvent.type == "RUN_STARTED" and v1_0.UserMessage.role == "user"
result = agui.consume_body(open("{root}/examples/plain-answer.sse", "rb").read())
assert result.outcome == "completed", result.violation
assert __about__.__version__ == importlib.metadata.version("agui-msgspec")
files = [agui.__file__, v1_1.__file__, importlib.util.find_spec("agui_msgspec._codegen").origin]
print(*files)
assert all(f.startswith("{root}/src/agui_msgspec/") for f in files) == {editable}
import importlib.metadata  # pytest finds the plugin by this entry point
plugins = {{p.name: p.value for p in importlib.metadata.entry_points(group="pytest11")}}
assert plugins.get("agui_msgspec") == "agui_msgspec._tools.pytest_plugin", plugins
"""


def _version() -> str:
    """The version as __about__.py states it (hatch reads the same line into the metadata)."""
    namespace: dict[str, str] = {}
    exec((BINDINGS / "__about__.py").read_text(encoding="utf-8"), namespace)
    return namespace["__version__"]


def _check_distributions(session: nox.Session, folder: Path) -> None:
    """The sdist and the wheel ``python -m build`` made (the wheel from the sdist): each
    carries LICENSE, the wheel py.typed, and the metadata the version and no test extras."""
    version = _version()
    (sdist,), (wheel,) = folder.glob("*.tar.gz"), folder.glob("*.whl")
    with tarfile.open(sdist) as archive:
        in_sdist = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = set(archive.namelist())
        info = f"agui_msgspec-{version}.dist-info"
        metadata = HeaderParser().parsestr(archive.read(f"{info}/METADATA").decode())
    missing = [f"sdist: {n}" for n in ("LICENSE", "pyproject.toml") if n not in in_sdist] + [
        f"wheel: {n}"
        for n in (f"{info}/licenses/LICENSE", "agui_msgspec/py.typed", "agui_msgspec/__about__.py")
        if n not in in_wheel
    ]
    if missing:
        session.error(f"missing from the distributions: {', '.join(missing)}")
    if metadata["Version"] != version or set(metadata.get_all("Provides-Extra") or []) != {
        "codegen",
        "http",
    }:
        session.error(
            f"wheel metadata: {metadata['Version']}, {metadata.get_all('Provides-Extra')}"
        )
    if "Typing :: Typed" not in (metadata.get_all("Classifier") or []):
        session.error("wheel metadata: no Typing :: Typed classifier")
    session.log(f"{sdist.name}: {len(in_sdist)} files; {wheel.name}: {len(in_wheel)} files")


@nox.session
def packaging(session: nox.Session) -> None:
    """``python -m build`` (sdist, then the wheel from it): LICENSE in both, the metadata's
    version that of __about__.py, no test extras; ``pip install -e .`` and ``pip install .``
    into fresh venvs: import, consume, and ``generate`` without the codegen extra (a usage
    error naming it, exit 2)."""
    session.install("build")
    with tempfile.TemporaryDirectory() as tmp:
        dist = Path(tmp, "dist")
        session.run("python", "-m", "build", "--outdir", str(dist), str(ROOT), silent=True)
        _check_distributions(session, dist)
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


COMPILE = "AGUI_MSGSPEC_COMPILE"  # hatch_build.py's switch: 1 compiles pyproject's list


def _compiled_modules() -> list[str]:
    """The modules ``AGUI_MSGSPEC_COMPILE=1`` compiles, by dotted name (pyproject.toml)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    paths = config["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["custom"]["compile"]
    return [".".join(Path(path).relative_to("src").with_suffix("").parts) for path in paths]


_COMPILED_CHECK = """
import importlib, importlib.machinery
for name in {modules!r}:
    file = importlib.import_module(name).__file__
    assert file.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)), file
print("compiled:", *{modules!r})
"""


@nox.session
def compiled(session: nox.Session) -> None:
    """The pure wheel builds with no C compiler on PATH; the mypyc-compiled wheel
    (``AGUI_MSGSPEC_COMPILE=1``) passes the whole suite, its modules imported compiled."""
    with tempfile.TemporaryDirectory() as tmp:
        no_compiler = str(Path(session.bin))  # this venv's python and pip, nothing else
        for compiler in ("cc", "gcc", "clang"):
            if shutil.which(compiler, path=no_compiler):
                session.error(f"{compiler} is in {no_compiler}: the pure build is not proven")
        pure, built = Path(tmp, "pure"), Path(tmp, "compiled")
        wheel_build = ["python", "-m", "pip", "wheel", "--quiet", "--no-deps", str(ROOT), "-w"]
        session.run(*wheel_build, str(pure), env={"PATH": no_compiler, COMPILE: "0"})
        (pure_wheel,) = pure.glob("*.whl")
        if not pure_wheel.name.endswith("-py3-none-any.whl"):
            session.error(f"the build without a compiler made {pure_wheel.name}")
        session.run(*wheel_build, str(built), env={COMPILE: "1"})
        (wheel,) = built.glob("*.whl")
        session.install(
            f"{wheel}[codegen,http]", *nox.project.dependency_groups(PYPROJECT, "tests")
        )
        session.install("--force-reinstall", "--no-deps", str(wheel))  # a reused venv's old one
    session.run("python", "-c", _COMPILED_CHECK.format(modules=_compiled_modules()))
    session.run("pytest", *session.posargs)


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
    encode, checks that a Struct, the same event as a dict and @ag-ui/proto give the same
    bytes on every conformance stream and corpus event it encodes, and the corpus tests run
    against the fresh frames."""
    _install_with(session, "tests")
    node = _node_proto(session)
    events, frames = PROTO_DATA / "corpus-events.json", PROTO_DATA / "corpus-frames.json"
    script = str(node / "proto_corpus.mjs")
    session.run("node", script, "encode", str(events), str(frames), external=True)
    ours, decoded = node / "ours.json", node / "decoded.json"
    session.run("python", str(NODE_PARITY / "parity.py"), "encode", str(events), str(ours))
    session.run("node", script, "decode", str(ours), str(decoded), external=True)
    session.run("python", str(NODE_PARITY / "parity.py"), "check", str(events), str(decoded))
    # one encoding per event: Struct, dict and @ag-ui/proto on the conformance streams and corpus
    if not CONFORMANCE.is_dir():
        session.error(f"no conformance streams at {CONFORMANCE}: the Struct/dict parity needs them")
    given, full = node / "given.json", node / "full.json"
    parity = ["python", str(NODE_PARITY / "parity.py")]
    session.run(*parity, "cases", str(CONFORMANCE), str(events), str(given), str(full))
    for cases in (given, full):
        frames = str(cases.with_suffix(".frames.json"))
        session.run("node", script, "encode-any", str(cases), frames, external=True)
    session.run(
        *parity, "same", str(given), str(full),
        str(given.with_suffix(".frames.json")), str(full.with_suffix(".frames.json")),
    )  # fmt: skip
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
    session.install(
        ".",
        "orjson",
        "ag-ui-protocol==1.0.0",
        "jsonpatch",
        "hatchling",
        "mypy==2.4.1",
        "setuptools",
    )
    # issue 24's table first: the decoding layer against the official decode, each goal PASS/MISS
    session.run(
        "python",
        "benchmarks/decoding.py",
        *(["--scale", "0.2"] if "--quick" in session.posargs else []),
    )
    # what bounds decode where a goal is missed (unknown property, state, mix): each piece alone
    session.run("python", "benchmarks/decode_floor.py")
    session.run("python", "benchmarks/run.py", *session.posargs)
    session.run("python", "benchmarks/interop.py")  # the official models' conversion costs
    # per-event cost at 1k and 100k events of each stream shape that once grew with the stream
    quick = ["--large", "20000", "--repeat", "1"] if "--quick" in session.posargs else []
    session.run("python", "benchmarks/scaling.py", *quick)
    # the state workload with its costly stages taken out in turn: what bounds its target
    session.run("python", "benchmarks/state_floor.py", *(["--repeat", "2"] if quick else []))
    # pure against the mypyc build (hatch_build.py), per workload; `--each` for every candidate
    session.run("python", "benchmarks/compiled.py", *(["--quick"] if quick else []))
    # `import agui_msgspec` against `import msgspec` and a bare start, fresh interpreters
    session.run("python", "benchmarks/import_time.py")


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
# (docs/project/real-producers.md), each in its own venv with the project's http extra.
INTEROP_PINS = {
    "pydantic_ai": ["pydantic-ai-slim[ag-ui]==2.68.0"],
    "langgraph": ["ag-ui-langgraph[fastapi]==0.0.47", "langgraph==1.2.24", "langchain-core==1.8.3"],
    "agent_framework": ["agent-framework-ag-ui==1.7.0", "agent-framework-core==1.23.0"],
    "strands": ["ag-ui-strands==1.0.2", "strands-agents==1.62.0"],
    "adk": ["ag-ui-adk==0.11.0", "google-adk==2.13.0"],
}


@nox.session
@nox.parametrize("framework", list(INTEROP_PINS))
def interop(session: nox.Session, framework: str) -> None:
    """A framework's AG-UI endpoint on loopback over a fake model, via HttpAgent and the CLI.

    ``nox -s interop`` runs all five; docs/project/real-producers.md says what each sends wrong.
    """
    session.install(".[http]", "pytest>=8", "uvicorn==0.54.0", *INTEROP_PINS[framework])
    session.run(
        "pytest",
        "tests/interop/test_producers.py",
        *session.posargs,
        # Its cases alone, and the framework must import: a failure, not a skip.
        env={"AGUI_INTEROP": framework},
    )


# The documentation site's tools, pinned: they are the docs session's alone, never a runtime or
# published dependency. playwright drives the system's chromium (no browser download).
DOCS_PINS = (
    "mkdocs==1.6.1", "mkdocs-material==9.8.1", "mkdocstrings==1.0.8",
    "mkdocstrings-python==2.0.11", RUFF,
)  # fmt: skip
# ag-ui-protocol: the examples convert to the official models, and mypy must see their types
DOCS_CHECK_PINS = (
    "playwright==1.65.2", "pytest>=8", "mypy==2.4.1", "starlette>=0.40", "ag-ui-protocol==1.0.0",
)  # fmt: skip


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site: ``mkdocs build --strict`` (no broken reference, every public
    name documented), then tests/docs: the built site in headless chromium, and mypy --strict
    over every Python block of the README and docs/; and the HTML report in chromium
    (tests/tools/test_html_report.py). Here a missing chromium is a failure."""
    session.install(".[http]", *DOCS_PINS, *DOCS_CHECK_PINS)
    site = Path(session.create_tmp()) / "site"
    quiet = {"NO_MKDOCS_2_WARNING": "1"}  # the theme's banner about its successor
    session.run("mkdocs", "build", "--strict", "--site-dir", str(site), env=quiet)
    checks = {"AGUI_DOCS_SITE": str(site), "AGUI_DOCS_REQUIRED": "1"}
    # the HTML report's browser test needs the same chromium and playwright
    browser_tests = ("tests/docs", "tests/tools/test_html_report.py")
    session.run(
        "pytest", "-q", "-p", "no:cacheprovider", *browser_tests, *session.posargs, env=checks
    )
