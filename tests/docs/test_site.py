"""The built documentation site, opened as a reader would: in headless chromium, served
over HTTP on 127.0.0.1, with no console error on the home page, the search or an API page.

``nox -s docs`` builds the site and runs this against it (``AGUI_DOCS_SITE``), and there a
missing chromium or playwright fails (``AGUI_DOCS_REQUIRED``); elsewhere the site is built
into a temporary folder when mkdocs is installed, and the checks skip, saying why, when a
tool is absent.
"""

from __future__ import annotations

import functools
import http.server
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agui_msgspec._rules import RULES

ROOT = Path(__file__).resolve().parents[2]
# What keeps a system chromium from reaching out or needing a sandbox it cannot have here.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


def _unavailable(reason: str) -> None:
    if os.environ.get("AGUI_DOCS_REQUIRED"):
        pytest.fail(f"{reason} (nox -s docs must run the site checks)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = os.environ.get("AGUI_DOCS_SITE")
    if built:
        return Path(built)
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        _unavailable("mkdocs-material is not installed: `nox -s docs` builds and checks the site")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)]
    done = subprocess.run(build, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return out


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    chromium = shutil.which("chromium")
    if chromium is None:
        _unavailable("no chromium on PATH (Debian: apt-get install chromium)")
    if importlib.util.find_spec("playwright") is None:
        _unavailable("playwright is not installed: `nox -s docs` installs it")
    sync_playwright = importlib.import_module("playwright.sync_api").sync_playwright
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=chromium,
            headless=True,
            args=CHROMIUM_ARGS,
        )
        try:
            yield context
        finally:
            context.close()


class Visit:
    """A page, with every console error, uncaught exception and failed request it caused."""

    def __init__(self, browser: Any) -> None:
        self.page = browser.new_page()
        self.problems: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.problems.append(f"exception: {error}"))
        self.page.on("requestfailed", lambda r: self.problems.append(f"request failed: {r.url}"))

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.problems.append(f"console: {message.text}")

    def open(self, url: str) -> Any:
        response = self.page.goto(url)
        assert response is not None, url
        assert response.ok, url
        self.page.wait_for_load_state("networkidle")
        return self.page


@pytest.fixture
def visit(browser: Any) -> Iterator[Visit]:
    seen = Visit(browser)
    yield seen
    seen.page.close()


def test_the_home_page_renders_with_its_two_commands(base_url: str, visit: Visit) -> None:
    page = visit.open(base_url + "/")
    assert "agui-msgspec" in page.title()
    text = page.inner_text("article")
    assert "python -m agui_msgspec check examples/plain-answer.sse" in text
    assert "python -m nox -s tests" in text
    assert page.locator("nav.md-nav--primary a").count() > 20  # the whole site is reachable
    assert visit.problems == []


def test_the_search_finds_a_rule_id(base_url: str, visit: Visit) -> None:
    page = visit.open(base_url + "/")
    box = page.locator("input.md-search__input")
    box.click()
    box.press_sequentially("truncated")  # keystrokes, as the theme's search listens for them
    # the results of a partial query may show first: wait for one that names the rule
    naming = page.locator(".md-search-result__item", has_text="truncated")
    naming.first.wait_for(timeout=15_000)
    assert naming.count() > 0
    assert visit.problems == []


def test_an_api_page_renders_from_the_docstrings(base_url: str, visit: Visit) -> None:
    page = visit.open(base_url + "/reference/api/consumer/")
    heading = page.locator('[id="agui_msgspec.Consumer"]')
    assert heading.count() == 1
    assert heading.inner_text().strip().startswith("Consumer")
    assert page.locator(".doc-signature").count() >= 3  # consume, consume_body, Consumer
    assert ":class:`" not in page.inner_text("article")  # the roles became links or code
    assert visit.problems == []


def test_the_rule_reference_lists_every_rule(site: Path) -> None:
    html = (site / "reference" / "rules" / "index.html").read_text(encoding="utf-8")
    missing = [rule for rule in RULES if f'id="{rule}"' not in html]
    assert missing == []
